import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Report runs and their output files (docs/reporting.md "Runs", "Statuses"). A run keeps its
 * report id without a foreign key: runs outlive a soft-deleted report for the history, and are
 * removed by retention (REPORTING_RUN_RETENTION_DAYS) or with their project.
 */
export class ReportingRuns1732200010300 implements MigrationInterface {
  name = 'ReportingRuns1732200010300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_runs (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        report_id uuid NOT NULL,
        report_version integer NOT NULL,
        trigger text NOT NULL CHECK (trigger IN ('manual','api','schedule','job')),
        retry_of uuid,
        scheduled_for timestamptz NOT NULL,
        timezone text NOT NULL,
        parameters jsonb NOT NULL DEFAULT '{}',
        formats jsonb NOT NULL DEFAULT '[]',
        status text NOT NULL CHECK (status IN ('queued','running','rendering','delivering','completed','failed','cancelled','skipped')),
        failed_stage text CHECK (failed_stage IN ('query','render','delivery')),
        skip_reason text,
        datasets jsonb NOT NULL DEFAULT '[]',
        error jsonb,
        metadata jsonb NOT NULL DEFAULT '{}',
        delivery_status text NOT NULL DEFAULT 'none',
        documents_charged integer NOT NULL DEFAULT 0,
        billing text CHECK (billing IN ('free','credit')),
        charged_at timestamptz,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        api_key_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        completed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX reporting_runs_project_idx ON reporting_runs (project_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX reporting_runs_report_idx ON reporting_runs (report_id, created_at DESC)`);
    await q.query(`CREATE INDEX reporting_runs_open_idx ON reporting_runs (created_at) WHERE status IN ('queued','running','rendering','delivering')`);

    await q.query(`
      CREATE TABLE reporting_run_outputs (
        id uuid PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES reporting_runs(id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        format text NOT NULL CHECK (format IN ('pdf','excel','csv')),
        dataset text,
        filename text NOT NULL,
        storage_key text NOT NULL,
        content_type text NOT NULL,
        bytes bigint NOT NULL,
        page_count integer,
        row_count integer,
        expires_at timestamptz NOT NULL,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX reporting_run_outputs_run_idx ON reporting_run_outputs (run_id)`);
    await q.query(`CREATE INDEX reporting_run_outputs_expiry_idx ON reporting_run_outputs (expires_at) WHERE deleted_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_run_outputs`);
    await q.query(`DROP TABLE IF EXISTS reporting_runs`);
  }
}
