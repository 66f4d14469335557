import type { DataSource, EntityManager } from 'typeorm';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { addCredits, releaseFreeDocuments } from '../../db/documents/billing';
import { recordDocumentsGenerated } from '../../db/identity/api-key-usage';
import { modifyReturning } from '../../db/sql';
import type { AppError } from '../../domain/errors';

export type JobOutcome = { jobId: string; status: 'completed' | 'failed' | 'cancelled'; errorMessage?: string };

export function outcomeOf(job: DocumentJobEntity): JobOutcome {
  const status = job.status === 'completed' || job.status === 'cancelled' ? job.status : 'failed';
  return { jobId: job.id, status, errorMessage: job.errorMessage ?? undefined };
}

type Finish = { artefactKey: string; size: number; generationMs: number } | { error: AppError | { code: string; message: string } };

/**
 * Moves a processing job to its end state exactly once (the WHERE clause makes a second finisher
 * a no-op) and settles its billing: a failed job gives its free document or credit back.
 */
export async function finishJob(db: DataSource, job: DocumentJobEntity, result: Finish): Promise<JobOutcome> {
  return db.transaction(async (m) => {
    if ('artefactKey' in result) {
      const rows = await modifyReturning(
        m,
        `UPDATE document_jobs SET status = 'completed', artefact_key = $2, artefact_size = $3, generation_ms = $4,
                completed_at = now(), error_code = NULL, error_message = NULL
          WHERE id = $1 AND status = 'processing' RETURNING id`,
        [job.id, result.artefactKey, result.size, result.generationMs],
      );
      if (rows.length > 0 && job.apiKeyId) await recordDocumentsGenerated(m, job.apiKeyId, 1);
      return current(m, job.id);
    }
    const rows = await modifyReturning(
      m,
      `UPDATE document_jobs SET status = 'failed', error_code = $2, error_message = $3, completed_at = now()
        WHERE id = $1 AND status IN ('queued', 'processing') RETURNING id`,
      [job.id, result.error.code, result.error.message],
    );
    if (rows.length > 0) await refund(m, job, 'refund: generation failed');
    return current(m, job.id);
  });
}

/** Cancels a job that has not ended; returns whether it was still open. */
export async function cancelOpenJob(db: DataSource | EntityManager, job: DocumentJobEntity): Promise<boolean> {
  const rows = await modifyReturning(
    db,
    `UPDATE document_jobs SET status = 'cancelled', completed_at = now() WHERE id = $1 AND status IN ('queued', 'processing') RETURNING id`,
    [job.id],
  );
  if (rows.length > 0) await refund(db, job, 'refund: job cancelled');
  return rows.length > 0;
}

async function refund(db: DataSource | EntityManager, job: DocumentJobEntity, reason: string): Promise<void> {
  if (job.billing === 'credit') await addCredits(db, job.projectId, 1, reason, job.id);
  else await releaseFreeDocuments(db, job.projectId, 1, job.createdAt);
}

async function current(m: EntityManager, jobId: string): Promise<JobOutcome> {
  return outcomeOf(await m.getRepository(DocumentJobEntity).findOneByOrFail({ id: jobId }));
}
