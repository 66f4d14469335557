import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events the maintenance sweep owes (activities/documents `restartStrandedWork`): a job it fails,
 * or a batch it completes, gets `event_pending` in the same statement, and loses it only once the
 * event's deliveries are recorded and their workflows started. A sweep that crashes in between leaves
 * the mark, and the next pass announces the event (once: delivery ids and their workflow ids are
 * derived from the event). The partial indexes serve that pass, oldest first.
 */
export class SweepEvents1732200011500 implements MigrationInterface {
  name = 'SweepEvents1732200011500';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['document_jobs', 'document_batches']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN event_pending boolean NOT NULL DEFAULT false`);
      await q.query(`CREATE INDEX ${table}_event_pending_idx ON ${table} (completed_at) WHERE event_pending`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['document_jobs', 'document_batches']) await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS event_pending`);
  }
}
