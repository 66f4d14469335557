import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transactional outbox of every workflow the API starts (platform/workflow-outbox.ts,
 * docs/architecture.md "Starting workflows"), as Flow runs already had it: document jobs and
 * batches, account deletions and team invitations get `workflow_pending` (true while the workflow
 * still has to be started) and `workflow_started_at`; account e-mails, which have no record of
 * their own, get one row each in `account_email_starts` until their workflow started. Rows that
 * exist now were started (or swept) the old way: false. The partial indexes serve the sweep, oldest first.
 */
export class WorkflowOutbox1732200011300 implements MigrationInterface {
  name = 'WorkflowOutbox1732200011300';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['document_jobs', 'document_batches', 'invitations']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN workflow_pending boolean NOT NULL DEFAULT false, ADD COLUMN workflow_started_at timestamptz`);
      await q.query(`CREATE INDEX ${table}_workflow_pending_idx ON ${table} (created_at) WHERE workflow_pending`);
    }
    await q.query(`ALTER TABLE users ADD COLUMN deletion_workflow_pending boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE INDEX users_deletion_workflow_pending_idx ON users (deletion_requested_at) WHERE deletion_workflow_pending`);
    await q.query(`
      CREATE TABLE account_email_starts (
        id uuid PRIMARY KEY,
        workflow_id text NOT NULL,
        input jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX account_email_starts_created_idx ON account_email_starts (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS account_email_starts`);
    await q.query(`ALTER TABLE users DROP COLUMN IF EXISTS deletion_workflow_pending`);
    for (const table of ['document_jobs', 'document_batches', 'invitations']) {
      await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS workflow_pending, DROP COLUMN IF EXISTS workflow_started_at`);
    }
  }
}
