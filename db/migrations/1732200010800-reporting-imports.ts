import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reporting model imports (docs/reporting.md "Imports"): the record of each
 * upload of a Metabase, Redash or JRXML model and what each of its items became. The query objects
 * it made are ordinary drafts; the record only names them.
 */
export class ReportingImports1732200010800 implements MigrationInterface {
  name = 'ReportingImports1732200010800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_imports (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        format text NOT NULL CHECK (format IN ('metabase','redash','jrxml')),
        filename text NOT NULL,
        status text NOT NULL CHECK (status IN ('completed','completed_with_warnings','failed')),
        dry_run boolean NOT NULL DEFAULT false,
        items jsonb NOT NULL DEFAULT '[]',
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX reporting_imports_project_idx ON reporting_imports (project_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_imports`);
  }
}
