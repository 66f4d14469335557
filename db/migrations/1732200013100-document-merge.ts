import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Merged documents (POST /api/documents/merge; docs/documents.md "Merging and appended PDFs"): a
 * job is a render of a template version (`kind = 'render'`) or a merge of other jobs' files and
 * uploaded PDFs (`kind = 'merge'`, no template: `template_id` and `template_version` are null, its
 * parts in `merge_parts`). Assets may be PDFs (`kind = 'pdf'`), which a template appends
 * (`schema.appendPdfs`).
 */
export class DocumentMerge1732200013100 implements MigrationInterface {
  name = 'DocumentMerge1732200013100';

  async up(q: QueryRunner): Promise<void> {
    // A template's appended PDFs (terms and conditions) are assets of kind `pdf`.
    await q.query(`ALTER TABLE template_assets DROP CONSTRAINT IF EXISTS template_assets_kind_check`);
    await q.query(`ALTER TABLE template_assets ADD CONSTRAINT template_assets_kind_check CHECK (kind IN ('image', 'font', 'pdf'))`);
    await q.query(`ALTER TABLE document_jobs ADD COLUMN kind text NOT NULL DEFAULT 'render'`);
    await q.query(`ALTER TABLE document_jobs ADD CONSTRAINT document_jobs_kind_check CHECK (kind IN ('render','merge'))`);
    await q.query(`ALTER TABLE document_jobs ADD COLUMN merge_parts jsonb`);
    await q.query(`ALTER TABLE document_jobs ALTER COLUMN template_id DROP NOT NULL`);
    await q.query(`ALTER TABLE document_jobs ALTER COLUMN template_version DROP NOT NULL`);
    // A render names its template version; a merge names its parts instead.
    await q.query(
      `ALTER TABLE document_jobs ADD CONSTRAINT document_jobs_kind_source_check CHECK (
         (kind = 'render' AND template_id IS NOT NULL AND template_version IS NOT NULL)
      OR (kind = 'merge' AND merge_parts IS NOT NULL AND batch_id IS NULL))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM document_jobs WHERE kind = 'merge'`);
    await q.query(`ALTER TABLE document_jobs DROP CONSTRAINT IF EXISTS document_jobs_kind_source_check`);
    await q.query(`ALTER TABLE document_jobs ALTER COLUMN template_version SET NOT NULL`);
    await q.query(`ALTER TABLE document_jobs ALTER COLUMN template_id SET NOT NULL`);
    await q.query(`ALTER TABLE document_jobs DROP COLUMN IF EXISTS merge_parts`);
    await q.query(`ALTER TABLE document_jobs DROP CONSTRAINT IF EXISTS document_jobs_kind_check`);
    await q.query(`ALTER TABLE document_jobs DROP COLUMN IF EXISTS kind`);
    await q.query(`DELETE FROM template_assets WHERE kind = 'pdf'`);
    await q.query(`ALTER TABLE template_assets DROP CONSTRAINT IF EXISTS template_assets_kind_check`);
    await q.query(`ALTER TABLE template_assets ADD CONSTRAINT template_assets_kind_check CHECK (kind IN ('image', 'font'))`);
  }
}
