import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Distribution (docs/reporting.md "Channels", "Deliveries", "Jobs"): channels, the
 * per-target delivery records of runs and job runs, report jobs and their runs, and the run columns
 * schedules and jobs need. A delivery keeps its channel id without a foreign key: the record of what
 * was sent outlives a deleted channel. `(schedule_id, occurrence_key)` is unique for every run but the
 * `skipped` records of a duplicate occurrence (a daylight-saving double fire, docs/reporting.md "Temporal workflows").
 */
export class ReportingDistribution1732200010600 implements MigrationInterface {
  name = 'ReportingDistribution1732200010600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_channels (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        name text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('email','slack','teams','webhook','s3','sftp','webdav')),
        config jsonb NOT NULL DEFAULT '{}',
        secrets jsonb NOT NULL DEFAULT '{}',
        is_active boolean NOT NULL DEFAULT true,
        last_test jsonb,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_channels_name_idx ON reporting_channels (project_id, lower(name))`);

    await q.query(`
      CREATE TABLE reporting_jobs (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        name text NOT NULL,
        description text,
        items jsonb NOT NULL DEFAULT '[]',
        delivery text NOT NULL CHECK (delivery IN ('bundle','separate')),
        concurrency integer NOT NULL DEFAULT 2,
        stop_on_failure boolean NOT NULL DEFAULT false,
        channel_ids jsonb NOT NULL DEFAULT '[]',
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_jobs_name_idx ON reporting_jobs (project_id, lower(name)) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE reporting_job_runs (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        job_id uuid NOT NULL,
        trigger text NOT NULL CHECK (trigger IN ('manual','api','schedule')),
        schedule_id uuid,
        occurrence_key text,
        scheduled_for timestamptz NOT NULL,
        timezone text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued','running','delivering','completed','failed','cancelled','skipped')),
        skip_reason text,
        items jsonb NOT NULL DEFAULT '[]',
        total_runs integer NOT NULL DEFAULT 0,
        completed_runs integer NOT NULL DEFAULT 0,
        failed_runs integer NOT NULL DEFAULT 0,
        delivery_status text NOT NULL DEFAULT 'none',
        channel_ids jsonb NOT NULL DEFAULT '[]',
        error jsonb,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        api_key_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        completed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX reporting_job_runs_project_idx ON reporting_job_runs (project_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX reporting_job_runs_open_idx ON reporting_job_runs (created_at) WHERE status IN ('queued','running','delivering')`);
    await q.query(
      `CREATE UNIQUE INDEX reporting_job_runs_occurrence_idx ON reporting_job_runs (schedule_id, occurrence_key) WHERE occurrence_key IS NOT NULL AND skip_reason IS DISTINCT FROM 'duplicate_occurrence'`,
    );

    await q.query(`ALTER TABLE reporting_runs ADD COLUMN schedule_id uuid`);
    await q.query(`ALTER TABLE reporting_runs ADD COLUMN job_run_id uuid REFERENCES reporting_job_runs(id) ON DELETE SET NULL`);
    await q.query(`ALTER TABLE reporting_runs ADD COLUMN occurrence_key text`);
    await q.query(`ALTER TABLE reporting_runs ADD COLUMN channel_ids jsonb NOT NULL DEFAULT '[]'`);
    await q.query(`ALTER TABLE reporting_runs ADD COLUMN skip_if_empty boolean`);
    await q.query(
      `CREATE UNIQUE INDEX reporting_runs_occurrence_idx ON reporting_runs (schedule_id, occurrence_key) WHERE occurrence_key IS NOT NULL AND skip_reason IS DISTINCT FROM 'duplicate_occurrence'`,
    );
    await q.query(`CREATE INDEX reporting_runs_schedule_idx ON reporting_runs (schedule_id, created_at DESC) WHERE schedule_id IS NOT NULL`);
    await q.query(`CREATE INDEX reporting_runs_job_run_idx ON reporting_runs (job_run_id) WHERE job_run_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE reporting_deliveries (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        run_id uuid REFERENCES reporting_runs(id) ON DELETE CASCADE,
        job_run_id uuid REFERENCES reporting_job_runs(id) ON DELETE CASCADE,
        channel_id uuid NOT NULL,
        kind text NOT NULL,
        target_key text NOT NULL,
        target text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending','delivering','completed','failed','skipped')),
        attempts jsonb NOT NULL DEFAULT '[]',
        manual_retries integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        remote_ref text,
        note text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((run_id IS NULL) <> (job_run_id IS NULL))
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_deliveries_run_target_idx ON reporting_deliveries (run_id, channel_id, target_key) WHERE run_id IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX reporting_deliveries_job_run_target_idx ON reporting_deliveries (job_run_id, channel_id, target_key) WHERE job_run_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_deliveries`);
    await q.query(`DROP INDEX IF EXISTS reporting_runs_occurrence_idx`);
    await q.query(`ALTER TABLE reporting_runs DROP COLUMN IF EXISTS schedule_id, DROP COLUMN IF EXISTS job_run_id, DROP COLUMN IF EXISTS occurrence_key, DROP COLUMN IF EXISTS channel_ids, DROP COLUMN IF EXISTS skip_if_empty`);
    await q.query(`DROP TABLE IF EXISTS reporting_job_runs`);
    await q.query(`DROP TABLE IF EXISTS reporting_jobs`);
    await q.query(`DROP TABLE IF EXISTS reporting_channels`);
  }
}
