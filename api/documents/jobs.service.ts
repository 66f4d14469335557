import { In, type EntityManager } from 'typeorm';
import { jobDownloadLink } from '../../domain/documents/document-events';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { cancelOpenJob, insertJobs } from '../../db/documents/job-state';
import { AppError } from '../../domain/errors';
import type { DownloadLink } from '../../domain/documents/presenter';
import type { ExportJobsQuery, ListJobsQuery } from './documents.schema';
import { documentTemplateNotFound, newJob, publishedTemplateFor, reserve, startJobWorkflow, type Caller, type DocumentDeps } from './documents.service';
import { findTemplate } from '../../db/templates/template-lookup';
import { TemplateEntity } from '../../db/templates/template.entity';
import { isUuid } from '../../domain/ids';

export const notFound = () => new AppError('ERR_JOB_001');
export const batchNotFound = () => new AppError('ERR_BATCH_001');
const mergeNotRetried = (jobId: string) =>
  new AppError('ERR_OUTPUT_006', 'A merge job is not retried (its uploaded PDFs are removed when it ends): send POST /api/documents/merge again', { jobId, reason: 'merge' });

export async function findJob(deps: DocumentDeps, projectId: string, jobId: string): Promise<DocumentJobEntity> {
  const job = await deps.db.getRepository(DocumentJobEntity).findOneBy({ id: jobId, projectId });
  if (!job) throw notFound();
  return job;
}

export function downloadLink(deps: DocumentDeps, job: DocumentJobEntity): Promise<DownloadLink | undefined> {
  return jobDownloadLink(deps.storage, deps.config.storage.downloadUrlTtlSeconds, job);
}

/**
 * `templateId` takes an id, a shortId or a slug, like every other `templateId`. An id filters as
 * given (jobs of a since-deleted template stay findable by it); a shortId or slug names a live
 * template of the project, and one that names none matches no job (an empty page, as an unknown id).
 */
export async function listJobs(deps: DocumentDeps, projectId: string, q: ListJobsQuery): Promise<{ jobs: DocumentJobEntity[]; total: number }> {
  let templateId = q.templateId;
  if (templateId !== undefined && !isUuid(templateId)) {
    const template = await findTemplate(deps.db, projectId, templateId).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'ERR_TMPL_001') return null;
      throw err;
    });
    if (!template) return { jobs: [], total: 0 };
    templateId = template.id;
  }
  const where = { projectId, ...(q.status && { status: q.status }), ...(templateId && { templateId }), ...(q.batchId && { batchId: q.batchId }) };
  const [jobs, total] = await deps.db.getRepository(DocumentJobEntity).findAndCount({ where, order: { createdAt: 'DESC', id: 'DESC' }, skip: q.offset, take: q.limit });
  return { jobs, total };
}

/** What narrows an export (its `format` is the route's business). */
type ExportQuery = Omit<ExportJobsQuery, 'format'>;

/**
 * The project's jobs, oldest first, fetched a page at a time by keyset (created_at, id), so an
 * export of 100,000 jobs never holds more than one page in memory.
 */
export async function* exportJobs(deps: DocumentDeps, projectId: string, q: ExportQuery, pageSize = 1000): AsyncGenerator<Record<string, unknown>> {
  let after: { createdAt: string; id: string } | undefined;
  for (;;) {
    const params: unknown[] = [projectId, q.startDate ?? null, q.endDate ?? null, q.status ?? null, pageSize];
    let keyset = '';
    if (after) {
      params.push(after.createdAt, after.id);
      keyset = 'AND (created_at, id) > ($6::timestamptz, $7)';
    }
    const rows: Array<Record<string, any>> = await deps.db.query(
      `SELECT id, status, format, template_id, template_version, batch_id, filename, error_code, error_message, metadata, created_at, completed_at,
              created_at::text AS cursor_at
         FROM document_jobs
        WHERE project_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at <= $3)
          AND ($4::text IS NULL OR status = $4) ${keyset}
        ORDER BY created_at, id LIMIT $5`,
      params,
    );
    for (const row of rows) yield row;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1];
    // The cursor keeps Postgres' microseconds; a JS Date would round them away and repeat rows.
    after = { createdAt: last.cursor_at, id: last.id };
  }
}

/**
 * A failed job gives a new job with the same input, against the same template version.
 * `inTransaction` runs in the transaction that inserts it (the Idempotency-Key's answer, docs/idempotency.md).
 */
export async function retryJob(deps: DocumentDeps, caller: Caller, jobId: string, inTransaction?: (m: EntityManager, job: DocumentJobEntity) => Promise<void>): Promise<DocumentJobEntity> {
  const old = await findJob(deps, caller.projectId, jobId);
  if (old.status !== 'failed') throw new AppError('ERR_JOB_002', undefined, { status: old.status });
  // Its uploaded parts are removed when it ends, and its job parts may have changed: a merge is asked for again instead.
  const { templateVersion } = old;
  if (old.kind === 'merge' || old.templateId === null || templateVersion === null) throw mergeNotRetried(old.id);
  const template = await deps.db.getRepository(TemplateEntity).findOneBy({ id: old.templateId, projectId: caller.projectId });
  if (!template || template.deletedAt) throw documentTemplateNotFound(old.templateId);
  const published = await publishedTemplateFor(deps, caller.projectId, template.id, old.format);
  const job = await deps.db.transaction(async (m) => {
    const billing = await reserve(deps, m, caller.projectId, 1, old.billing === 'credit', `retry of ${old.id}`);
    const row = newJob(caller, { ...published, version: templateVersion }, {
      format: old.format,
      variables: old.variables,
      billing,
      metadata: old.metadata,
      filename: old.filename,
      output: old.output,
      retryOf: old.id,
    });
    await insertJobs(m, [row]);
    await inTransaction?.(m, row);
    return row;
  });
  startJobWorkflow(deps, job);
  return job;
}

/** Contract §4: a queued or processing job becomes cancelled and its workflow is cancelled. */
export async function cancelJob(deps: DocumentDeps, projectId: string, jobId: string): Promise<DocumentJobEntity> {
  const job = await findJob(deps, projectId, jobId);
  if (!(await cancelOpenJob(deps.db, job))) throw new AppError('ERR_JOB_003', undefined, { status: job.status });
  if (!job.batchId) await cancelWorkflow(deps, job.id);
  return findJob(deps, projectId, jobId);
}

/** Removes the record and its artefact; a running workflow is cancelled first. */
export async function deleteJob(deps: DocumentDeps, projectId: string, jobId: string): Promise<void> {
  const job = await findJob(deps, projectId, jobId);
  await removeJobs(deps, [job]);
}

export async function bulkDeleteJobs(deps: DocumentDeps, projectId: string, jobIds: string[]): Promise<number> {
  const jobs = await deps.db.getRepository(DocumentJobEntity).findBy({ projectId, id: In(jobIds) });
  await removeJobs(deps, jobs);
  return jobs.length;
}

export async function bulkRetryJobs(deps: DocumentDeps, caller: Caller, jobIds: string[]): Promise<number> {
  // Merge jobs are not retried (retryJob): a bulk retry leaves them as they are.
  const failed = await deps.db.getRepository(DocumentJobEntity).findBy({ projectId: caller.projectId, id: In(jobIds), status: 'failed', kind: 'render' });
  let queued = 0;
  for (const job of failed) {
    await retryJob(deps, caller, job.id);
    queued += 1;
  }
  return queued;
}

async function removeJobs(deps: DocumentDeps, jobs: DocumentJobEntity[]): Promise<void> {
  for (const job of jobs) {
    if (await cancelOpenJob(deps.db, job)) {
      if (!job.batchId) await cancelWorkflow(deps, job.id);
    }
    if (job.artefactKey) await deps.storage.delete(job.artefactKey);
  }
  if (jobs.length > 0) await deps.db.getRepository(DocumentJobEntity).delete({ id: In(jobs.map((j) => j.id)) });
}

async function cancelWorkflow(deps: DocumentDeps, workflowId: string): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(workflowId).cancel();
  } catch (err) {
    // Already finished or never started: the record already says cancelled, nothing else to stop.
    if ((err as Error).name !== 'WorkflowNotFoundError') deps.logger.warn('could not cancel job workflow', { workflowId, err });
  }
}
