import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A generation's `output` options (domain/documents/output.ts) kept with its job and batch, so a
 * render (and a retry) finishes the PDF as asked; encryption passwords in it are sealed
 * (db/secret-columns.ts sealedOutput). `png` joins the formats a job may have.
 */
export class DocumentOutput1732200012900 implements MigrationInterface {
  name = 'DocumentOutput1732200012900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE document_jobs ADD COLUMN output jsonb`);
    await q.query(`ALTER TABLE document_batches ADD COLUMN output jsonb`);
    await q.query(`ALTER TABLE document_jobs DROP CONSTRAINT IF EXISTS document_jobs_format_check`);
    await q.query(`ALTER TABLE document_jobs ADD CONSTRAINT document_jobs_format_check CHECK (format IN ('pdf','excel','png'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE document_jobs DROP CONSTRAINT IF EXISTS document_jobs_format_check`);
    await q.query(`ALTER TABLE document_jobs ADD CONSTRAINT document_jobs_format_check CHECK (format IN ('pdf','excel'))`);
    await q.query(`ALTER TABLE document_batches DROP COLUMN IF EXISTS output`);
    await q.query(`ALTER TABLE document_jobs DROP COLUMN IF EXISTS output`);
  }
}
