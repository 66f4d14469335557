import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Project invitations and the per-project activity feed. */
export class Teams1732200001000 implements MigrationInterface {
  name = 'Teams1732200001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE invitations (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin','member','viewer')),
        -- NULL until the e-mail activity has minted the token; only the hash is ever stored.
        token_hash text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','accepted','rejected','cancelled')),
        invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        decided_at timestamptz
      )`);
    // At most one open invitation per address and project, even under concurrent invites (ERR_TEAM_008).
    await q.query(`CREATE UNIQUE INDEX invitations_pending_key ON invitations (project_id, email) WHERE status = 'pending'`);
    // "My invitations" looks up by the invitee's address.
    await q.query(`CREATE INDEX invitations_email_idx ON invitations (email) WHERE status = 'pending'`);

    await q.query(`
      CREATE TABLE activities (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        -- Kept when the user is purged, so the feed still reads "someone did X".
        user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        type text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}',
        -- clock_timestamp, not now(): entries of one transaction (project_created, then more) keep their order.
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX activities_project_created_idx ON activities (project_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS activities`);
    await q.query(`DROP TABLE IF EXISTS invitations`);
  }
}
