import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OAuth client credentials (docs/oauth.md). A client belongs to a project and was made by one of its
 * members; it holds the same permission flags as an API key and the SHA-256 of its secret. Its
 * access tokens are stored as SHA-256 too, each with the flags it was granted (its `scope`) and
 * its expiry; deleting the client deletes them (ON DELETE CASCADE), so they stop at once.
 */
export class OAuthClients1732200011200 implements MigrationInterface {
  name = 'OAuthClients1732200011200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_clients (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        client_id text NOT NULL UNIQUE,
        name text NOT NULL,
        secret_hash text NOT NULL,
        secret_prefix text NOT NULL,
        permissions jsonb NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        created_by uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        secret_rotated_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_clients_project_idx ON oauth_clients (project_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE oauth_tokens (
        id uuid PRIMARY KEY,
        client_id uuid NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        permissions jsonb NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_tokens_client_idx ON oauth_tokens (client_id, expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_tokens`);
    await q.query(`DROP TABLE oauth_clients`);
  }
}
