import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A batch's archive: one ZIP or one merged PDF of its documents (docs/documents.md "Batch archives").
 * `archive_status` is null for a batch that asked for none, `pending` until the batch workflow's
 * archive activity has built it, then `ready` (its file under `archive_key`), `failed` (with the
 * catalogued code and message) or `expired` (retention removed the file). `archive_left_out` lists
 * the jobs that ended without a file (failed, cancelled), `archive_documents` how many are in it.
 */
export class BatchArchives1732200013200 implements MigrationInterface {
  name = 'BatchArchives1732200013200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE document_batches
      ADD COLUMN archive_status text CHECK (archive_status IN ('pending', 'ready', 'failed', 'expired')),
      ADD COLUMN archive_key text,
      ADD COLUMN archive_size bigint,
      ADD COLUMN archive_documents integer,
      ADD COLUMN archive_left_out jsonb,
      ADD COLUMN archive_error_code text,
      ADD COLUMN archive_error text,
      ADD COLUMN archive_completed_at timestamptz`);
    // Batches accepted since the output object (migration 1732200012900) that asked for an archive and are still running.
    await q.query(`UPDATE document_batches SET archive_status = 'pending' WHERE status = 'processing' AND output->>'archive' IS NOT NULL`);
    // The retention sweep's query: ready archives by age.
    await q.query(`CREATE INDEX document_batches_archive_ready_idx ON document_batches (archive_completed_at) WHERE archive_status = 'ready'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS document_batches_archive_ready_idx`);
    await q.query(`ALTER TABLE document_batches
      DROP COLUMN IF EXISTS archive_status, DROP COLUMN IF EXISTS archive_key, DROP COLUMN IF EXISTS archive_size,
      DROP COLUMN IF EXISTS archive_documents, DROP COLUMN IF EXISTS archive_left_out, DROP COLUMN IF EXISTS archive_error_code,
      DROP COLUMN IF EXISTS archive_error, DROP COLUMN IF EXISTS archive_completed_at`);
  }
}
