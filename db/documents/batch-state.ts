import type { EntityManager } from 'typeorm';
import { batchMachine } from '../../domain/documents/batch-status';
import { modifyReturning, type Queryable } from '../sql';
import { DocumentBatchEntity } from './document-batch.entity';

/**
 * The only writer of `document_batches.status` (docs/architecture.md, "State machines"): a batch is
 * inserted `processing` and completed once, by a conditional UPDATE from the statuses
 * domain/documents/batch-status.ts allows.
 */

export async function insertBatch(m: EntityManager, batch: DocumentBatchEntity): Promise<void> {
  if (!batchMachine.initial.includes(batch.status)) throw new Error(`a batch is not created ${batch.status}`);
  await m.getRepository(DocumentBatchEntity).insert(batch);
}

/**
 * Marks the batch completed; true only for the call that did (a retried activity announces nothing twice).
 * `eventPending` marks, in the same statement, that its batch.completed is still to be announced (the maintenance sweep's).
 */
export async function completeBatch(db: Queryable, batchId: string, options: { eventPending?: boolean } = {}): Promise<boolean> {
  const done = await modifyReturning(
    db,
    `UPDATE document_batches SET status = 'completed', completed_at = now(), event_pending = $3 WHERE id = $1 AND status = ANY($2::text[]) RETURNING id`,
    [batchId, batchMachine.sourcesOf('completed'), options.eventPending ?? false],
  );
  return done.length > 0;
}
