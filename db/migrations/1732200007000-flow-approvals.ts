import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Human approval of Flow runs (docs/flow.md, "Approvals"): one approval per run and approver, the
 * review sessions external approvers get from a magic link, and the review notices gate owners
 * are told about (immediately or in a digest). Only hashes of magic-link and review tokens are kept.
 */
export class FlowApprovals1732200007000 implements MigrationInterface {
  name = 'FlowApprovals1732200007000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE flow_approvals (
        id uuid PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES flow_runs(id) ON DELETE CASCADE,
        gate_id uuid NOT NULL,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        approver_email text NOT NULL CHECK (approver_email = lower(approver_email)),
        approver_name text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','approved','rejected','expired')),
        comment text CHECK (char_length(comment) <= 1000),
        decided_at timestamptz,
        magic_token_hash text,
        magic_token_expires_at timestamptz,
        sent_count integer NOT NULL DEFAULT 0,
        last_sent_at timestamptz,
        reminder_sent_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (run_id, approver_email)
      )`);
    await q.query(`CREATE UNIQUE INDEX flow_approvals_magic_token_idx ON flow_approvals (magic_token_hash) WHERE magic_token_hash IS NOT NULL`);
    await q.query(`CREATE INDEX flow_approvals_pending_project_idx ON flow_approvals (project_id, created_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX flow_approvals_pending_email_idx ON flow_approvals (approver_email, created_at) WHERE status = 'pending'`);

    await q.query(`
      CREATE TABLE flow_review_tokens (
        id uuid PRIMARY KEY,
        email text NOT NULL CHECK (email = lower(email)),
        token_hash text NOT NULL UNIQUE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX flow_review_tokens_email_idx ON flow_review_tokens (email) WHERE revoked_at IS NULL`);

    // One row per run that entered review: the owners' notification, sent at once or in the next digest.
    await q.query(`
      CREATE TABLE flow_review_notices (
        run_id uuid PRIMARY KEY REFERENCES flow_runs(id) ON DELETE CASCADE,
        gate_id uuid NOT NULL,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        notified_at timestamptz
      )`);
    await q.query(`CREATE INDEX flow_review_notices_pending_idx ON flow_review_notices (gate_id, created_at) WHERE notified_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE flow_review_notices`);
    await q.query(`DROP TABLE flow_review_tokens`);
    await q.query(`DROP TABLE flow_approvals`);
  }
}
