import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Report schedules (docs/reporting.md "Scheduling", "Temporal workflows"). The row is the
 * source of truth; each live row has a Temporal Schedule `report-schedule-<id>` that the API writes
 * after the row and the maintenance reconciler repairs. The target is a report or a job, kept
 * without a foreign key (both are soft-deleted; their delete refuses while a live schedule names
 * them). Deleted schedules stay (`deleted_at`) for the runs that name them.
 */
export class ReportingSchedules1732200010700 implements MigrationInterface {
  name = 'ReportingSchedules1732200010700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_schedules (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        name text NOT NULL,
        target_type text NOT NULL CHECK (target_type IN ('report','job')),
        target_id uuid NOT NULL,
        cron text NOT NULL,
        timezone text NOT NULL,
        parameters jsonb NOT NULL DEFAULT '{}',
        channel_ids jsonb NOT NULL DEFAULT '[]',
        outputs jsonb,
        skip_if_empty boolean,
        status text NOT NULL CHECK (status IN ('active','paused')),
        pause_note text,
        catchup_window_minutes integer NOT NULL DEFAULT 60 CHECK (catchup_window_minutes BETWEEN 0 AND 1440),
        start_at timestamptz,
        end_at timestamptz,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX reporting_schedules_project_idx ON reporting_schedules (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX reporting_schedules_target_idx ON reporting_schedules (target_type, target_id) WHERE deleted_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_schedules`);
  }
}
