import { In, type DataSource, type EntityManager, type ValueTransformer } from 'typeorm';
import { jobMachine, type JobOutcome } from '../../domain/documents/job-status';
import type { AppError } from '../../domain/errors';
import { recordDocumentsGenerated } from '../identity/api-key-usage';
import { modifyReturning, type Queryable } from '../sql';
import { addCredits, releaseFreeDocuments } from './billing';
import { DocumentJobEntity } from './document-job.entity';

/**
 * The only writer of `document_jobs.status` (docs/architecture.md, "State machines"). Jobs are
 * inserted `queued` and moved by a conditional UPDATE from the statuses domain/documents/job-status.ts
 * allows to reach the target, with what goes with the move (timestamps, attempts, billing): a job
 * that already ended is never claimed, finished or cancelled again.
 */

/** Inserts jobs (in the caller's transaction, with their reservation). */
export async function insertJobs(m: EntityManager, jobs: DocumentJobEntity[]): Promise<void> {
  const wrong = jobs.find((j) => !jobMachine.initial.includes(j.status));
  if (wrong) throw new Error(`a job is not created ${wrong.status}`);
  await m.getRepository(DocumentJobEntity).insert(jobs);
}

/**
 * Claims a job for its render: `processing`, one attempt more. A job still processing is claimed
 * again (a render Temporal retried after its worker died); one that ended is not. Returns whether it was claimed.
 */
export async function claimJob(db: Queryable, jobId: string): Promise<boolean> {
  const claimed = await modifyReturning<{ id: string }>(
    db,
    `UPDATE document_jobs SET status = 'processing', attempts = attempts + 1, started_at = COALESCE(started_at, now())
      WHERE id = $1 AND status = ANY($2::text[]) RETURNING id`,
    [jobId, jobMachine.sourcesOf('processing')],
  );
  return claimed.length > 0;
}

/**
 * Claims jobs for their renders in one statement (the claimJob rule for each), answering with their
 * rows: `claimed` are the jobs to render now, `ended` the ones that had already ended (a retried
 * render reports them as they are). An id in neither names a job that no longer exists.
 */
export async function claimJobs(db: DataSource, jobIds: string[]): Promise<{ claimed: DocumentJobEntity[]; ended: DocumentJobEntity[] }> {
  if (jobIds.length === 0) return { claimed: [], ended: [] };
  const rows = await modifyReturning<Record<string, unknown>>(
    db,
    `UPDATE document_jobs SET status = 'processing', attempts = attempts + 1, started_at = COALESCE(started_at, now())
      WHERE id = ANY($1::uuid[]) AND status = ANY($2::text[]) RETURNING *`,
    [jobIds, jobMachine.sourcesOf('processing')],
  );
  const claimed = rows.map((r) => jobOfRow(db, r));
  const claimedIds = new Set(claimed.map((j) => j.id));
  const rest = jobIds.filter((id) => !claimedIds.has(id));
  const ended = rest.length > 0 ? await db.getRepository(DocumentJobEntity).findBy({ id: In(rest) }) : [];
  return { claimed, ended };
}

/**
 * A `document_jobs` row as returned by `RETURNING *`, mapped through the entity's own column names
 * and its columns' transformers (the sealed `output` passwords are opened, as a find would).
 */
function jobOfRow(db: DataSource, row: Record<string, unknown>): DocumentJobEntity {
  const job = new DocumentJobEntity();
  for (const column of db.getMetadata(DocumentJobEntity).columns) (job as unknown as Record<string, unknown>)[column.propertyName] = fromColumn(column.transformer, row[column.databaseName]);
  return job;
}

/** What TypeORM's hydration does with a column's transformers (the last one first). */
function fromColumn(transformer: ValueTransformer | ValueTransformer[] | undefined, value: unknown): unknown {
  if (!transformer) return value;
  return Array.isArray(transformer) ? transformer.reduceRight((v, t) => t.from(v), value) : transformer.from(value);
}

/** A rendered and stored job, ready to be completed. */
export interface RenderedJob {
  job: Pick<DocumentJobEntity, 'id' | 'apiKeyId'>;
  artefactKey: string;
  size: number;
  generationMs: number;
}

/**
 * Completes rendered jobs (finishJob's rule for each: only a job still `processing` completes, and
 * the API key that made it counts it) in one statement, or one transaction when keys are to be
 * counted. Returns the ids it completed; the others were cancelled or deleted meanwhile.
 */
export async function completeJobs(db: DataSource, done: RenderedJob[]): Promise<Set<string>> {
  if (done.length === 0) return new Set();
  const complete = async (q: Queryable) => {
    const rows = await modifyReturning<{ id: string; api_key_id: string | null }>(
      q,
      `UPDATE document_jobs j SET status = 'completed', artefact_key = d.artefact_key, artefact_size = d.size, generation_ms = d.ms,
              completed_at = now(), error_code = NULL, error_message = NULL
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[]) AS d(id, artefact_key, size, ms)
        WHERE j.id = d.id AND j.status = ANY($5::text[]) RETURNING j.id, j.api_key_id`,
      [done.map((d) => d.job.id), done.map((d) => d.artefactKey), done.map((d) => d.size), done.map((d) => d.generationMs), jobMachine.sourcesOf('completed')],
    );
    const perKey = new Map<string, number>();
    for (const r of rows) if (r.api_key_id) perKey.set(r.api_key_id, (perKey.get(r.api_key_id) ?? 0) + 1);
    for (const [apiKeyId, n] of perKey) await recordDocumentsGenerated(q, apiKeyId, n);
    return new Set(rows.map((r) => r.id));
  };
  return done.some((d) => d.job.apiKeyId) ? db.transaction(complete) : complete(db);
}

export function outcomeOf(job: DocumentJobEntity): JobOutcome {
  const status = job.status === 'completed' || job.status === 'cancelled' ? job.status : 'failed';
  return { jobId: job.id, status, errorMessage: job.errorMessage ?? undefined };
}

type Finish = { artefactKey: string; size: number; generationMs: number } | { error: AppError | { code: string; message: string } };

/**
 * Moves a job to its end state exactly once (the WHERE clause makes a second finisher
 * a no-op) and settles its billing: a failed job gives its free document or credit back.
 * `eventPending` marks, with the failure, that its document.failed is still to be announced (the maintenance sweep's).
 */
export async function finishJob(db: DataSource, job: DocumentJobEntity, result: Finish, options: { eventPending?: boolean } = {}): Promise<JobOutcome> {
  return db.transaction(async (m) => {
    if ('artefactKey' in result) {
      const rows = await modifyReturning(
        m,
        `UPDATE document_jobs SET status = 'completed', artefact_key = $2, artefact_size = $3, generation_ms = $4,
                completed_at = now(), error_code = NULL, error_message = NULL
          WHERE id = $1 AND status = ANY($5::text[]) RETURNING id`,
        [job.id, result.artefactKey, result.size, result.generationMs, jobMachine.sourcesOf('completed')],
      );
      if (rows.length > 0 && job.apiKeyId) await recordDocumentsGenerated(m, job.apiKeyId, 1);
      return current(m, job.id);
    }
    const rows = await modifyReturning(
      m,
      `UPDATE document_jobs SET status = 'failed', error_code = $2, error_message = $3, completed_at = now(), event_pending = $5
        WHERE id = $1 AND status = ANY($4::text[]) RETURNING id`,
      [job.id, result.error.code, result.error.message, jobMachine.sourcesOf('failed'), options.eventPending ?? false],
    );
    if (rows.length > 0) await refund(m, job, 'refund: generation failed');
    return current(m, job.id);
  });
}

/** Cancels a job that has not ended; returns whether it was still open. */
export async function cancelOpenJob(db: Queryable, job: DocumentJobEntity): Promise<boolean> {
  const rows = await modifyReturning(
    db,
    `UPDATE document_jobs SET status = 'cancelled', completed_at = now() WHERE id = $1 AND status = ANY($2::text[]) RETURNING id`,
    [job.id, jobMachine.sourcesOf('cancelled')],
  );
  if (rows.length > 0) await refund(db, job, 'refund: job cancelled');
  return rows.length > 0;
}

async function refund(db: Queryable, job: DocumentJobEntity, reason: string): Promise<void> {
  if (job.billing === 'credit') await addCredits(db, job.projectId, 1, reason, job.id);
  else await releaseFreeDocuments(db, job.projectId, 1, job.createdAt);
}

async function current(m: EntityManager, jobId: string): Promise<JobOutcome> {
  return outcomeOf(await m.getRepository(DocumentJobEntity).findOneByOrFail({ id: jobId }));
}
