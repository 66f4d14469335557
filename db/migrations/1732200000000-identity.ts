import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Identity1732200000000 implements MigrationInterface {
  name = 'Identity1732200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        email text NOT NULL,
        name text NOT NULL,
        password_hash text NOT NULL,
        email_verified_at timestamptz,
        timezone text,
        email_preferences jsonb NOT NULL DEFAULT '{"marketingEmails":false,"productUpdates":true,"weeklyDigest":false}',
        avatar_key text,
        two_factor_enabled boolean NOT NULL DEFAULT false,
        two_factor_secret text,
        deletion_requested_at timestamptz,
        deletion_status text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON users (email)`);

    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        slug text NOT NULL,
        is_personal boolean NOT NULL DEFAULT false,
        owner_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        plan text NOT NULL DEFAULT 'free',
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX projects_slug_key ON projects (slug)`);

    await q.query(`
      CREATE TABLE memberships (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
        joined_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id)
      )`);
    await q.query(`CREATE INDEX memberships_user_idx ON memberships (user_id)`);

    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_by uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text NOT NULL,
        key_type text NOT NULL DEFAULT 'live',
        key_prefix text NOT NULL,
        key_hash text NOT NULL,
        permissions jsonb NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        expires_at timestamptz,
        last_used_at timestamptz,
        total_requests bigint NOT NULL DEFAULT 0,
        requests_today integer NOT NULL DEFAULT 0,
        requests_day date,
        documents_generated integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash)`);
    await q.query(`CREATE INDEX api_keys_project_idx ON api_keys (project_id, created_at)`);

    await q.query(`
      CREATE TABLE refresh_tokens (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        family_id uuid NOT NULL,
        token_hash text NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX refresh_tokens_hash_key ON refresh_tokens (token_hash)`);
    await q.query(`CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id)`);

    await q.query(`
      CREATE TABLE email_tokens (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        purpose text NOT NULL,
        token_hash text NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX email_tokens_hash_key ON email_tokens (token_hash)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['email_tokens', 'refresh_tokens', 'api_keys', 'memberships', 'projects', 'users']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
