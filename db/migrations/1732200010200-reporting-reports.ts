import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reports and their versions (docs/reporting.md "Reports"): a draft per report and
 * immutable versions holding the resolved definition (template and query versions as numbers).
 * Deleted reports keep their row and versions with `deleted_at`; names and slugs are unique among a
 * project's live reports only. Template and query ids live in the JSON definitions: a deleted
 * template or query fails the next publish (ERR_RPT_005), and a query pinned by a live report's
 * version cannot be deleted (ERR_QRY_012, checked by the query service).
 */
export class ReportingReports1732200010200 implements MigrationInterface {
  name = 'ReportingReports1732200010200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_reports (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        folder_id text,
        draft jsonb NOT NULL,
        is_published boolean NOT NULL DEFAULT false,
        latest_version integer NOT NULL DEFAULT 0,
        published_at timestamptz,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_reports_slug_idx ON reporting_reports (project_id, slug) WHERE deleted_at IS NULL`);
    await q.query(`CREATE UNIQUE INDEX reporting_reports_name_idx ON reporting_reports (project_id, lower(name)) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX reporting_reports_project_idx ON reporting_reports (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE reporting_report_versions (
        id uuid PRIMARY KEY,
        report_id uuid NOT NULL REFERENCES reporting_reports(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        definition jsonb NOT NULL,
        draft jsonb NOT NULL,
        name text NOT NULL,
        description text,
        release_notes text,
        published_at timestamptz NOT NULL DEFAULT now(),
        published_by uuid REFERENCES users(id) ON DELETE SET NULL,
        UNIQUE (report_id, version)
      )`);
    // "Which report versions pin query X": the query delete check (ERR_QRY_012).
    await q.query(`CREATE INDEX reporting_report_versions_datasets_idx ON reporting_report_versions USING gin ((definition->'datasets') jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_report_versions`);
    await q.query(`DROP TABLE IF EXISTS reporting_reports`);
  }
}
