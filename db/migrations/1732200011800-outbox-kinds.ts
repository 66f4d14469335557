import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox's remaining kinds (platform/workflow-outbox.ts, docs/architecture.md "Starting
 * workflows"): report runs and job runs the API opens get `workflow_pending` as document jobs have
 * it (their start leaves the request path); a manual delivery retry marks its delivery
 * `retry_pending_since` until its workflow started; a recorded approval decision marks its approval
 * `signal_pending` until the run's workflow was told (the nudge). Existing rows: nothing owed.
 */
export class OutboxKinds1732200011800 implements MigrationInterface {
  name = 'OutboxKinds1732200011800';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['reporting_runs', 'reporting_job_runs']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN workflow_pending boolean NOT NULL DEFAULT false, ADD COLUMN workflow_started_at timestamptz`);
      await q.query(`CREATE INDEX ${table}_workflow_pending_idx ON ${table} (created_at) WHERE workflow_pending`);
    }
    await q.query(`ALTER TABLE reporting_deliveries ADD COLUMN retry_pending_since timestamptz`);
    await q.query(`CREATE INDEX reporting_deliveries_retry_pending_idx ON reporting_deliveries (retry_pending_since) WHERE retry_pending_since IS NOT NULL`);
    await q.query(`ALTER TABLE flow_approvals ADD COLUMN signal_pending boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE INDEX flow_approvals_signal_pending_idx ON flow_approvals (decided_at) WHERE signal_pending`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE flow_approvals DROP COLUMN IF EXISTS signal_pending`);
    await q.query(`ALTER TABLE reporting_deliveries DROP COLUMN IF EXISTS retry_pending_since`);
    for (const table of ['reporting_runs', 'reporting_job_runs']) {
      await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS workflow_pending, DROP COLUMN IF EXISTS workflow_started_at`);
    }
  }
}
