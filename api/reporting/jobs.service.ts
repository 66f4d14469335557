import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { resolveChannelRefs } from '../../db/reporting/channel-refs';
import { isScheduled } from '../../db/reporting/schedule-targets';
import { insertJobRun, JOB_RUN_SHORT_ID_PREFIX, moveJobRun, newJobRun } from '../../db/reporting/job-run-state';
import { ReportJobRunEntity } from '../../db/reporting/job-run.entity';
import { ReportJobEntity, type ReportJobItem } from '../../db/reporting/job.entity';
import { findLiveByRef } from '../../db/reporting/find-live';
import { ReportEntity } from '../../db/reporting/report.entity';
import { isUniqueViolation } from '../../db/sql';
import { checkMetadata } from '../../domain/documents/metadata';
import { AppError } from '../../domain/errors';
import type { Logger } from '../../domain/logger';
import { jobRunMachine } from '../../domain/reporting/job-run-status';
import { randomBase62 } from '../../domain/signing';
import { workflowIds, type TaskQueues } from '../../domain/temporal-names';
import type { WorkflowOutbox } from '../../platform/workflow-outbox';
import type { ReportRunStartDeps } from '../../platform/workflow-starts';
import type { JobFields, ListJobRunsQuery, ListJobsQuery } from './jobs.schema';
import { isUuid } from '../../domain/ids';

/**
 * Report jobs and their runs (docs/reporting.md "Jobs", "Statuses"): a job names
 * 1–20 published-at-run-time reports; a job run is recorded `queued`, then its workflow
 * `report-job-run-<id>` runs them as child runs and delivers the bundle.
 */

export interface JobDeps {
  db: DataSource;
  temporal: Client;
  taskQueues: TaskQueues;
  config: ReportRunStartDeps['config'];
  logger: Logger;
  outbox: Pick<WorkflowOutbox, 'start'>;
}

export interface JobCaller {
  projectId: string;
  userId?: string;
  apiKeyId?: string;
  /** An OAuth client-credentials token (docs/oauth.md): a program, like an API key. */
  oauthClientId?: string;
}

const SHORT_ID_PREFIX = 'rjob_';

async function findJob(db: DataSource, projectId: string, ref: string): Promise<ReportJobEntity> {
  const where = isUuid(ref) ? { id: ref } : ref.startsWith(SHORT_ID_PREFIX) ? { shortId: ref } : null;
  const job = where ? await db.getRepository(ReportJobEntity).createQueryBuilder('j').where('j.projectId = :projectId AND j.deletedAt IS NULL', { projectId }).andWhere(where.id ? 'j.id = :id' : 'j.shortId = :shortId', where).getOne() : null;
  if (!job) throw new AppError('ERR_RJOB_001');
  return job;
}

/** The items with each report named by id, every unknown report reported at once (400 ERR_RJOB_002). */
async function resolveItems(db: DataSource, projectId: string, items: JobFields['items']): Promise<ReportJobItem[]> {
  const errors: Array<{ path: string; message: string }> = [];
  const resolved: ReportJobItem[] = [];
  for (const [i, item] of items.entries()) {
    const report = await findLiveByRef(db, ReportEntity, projectId, item.reportId, 'rpt_');
    if (!report) errors.push({ path: `items[${i}].reportId`, message: `Report ${item.reportId} not found in this project` });
    else resolved.push({ reportId: report.id, parameters: item.parameters ?? {}, ...(item.outputs ? { outputs: item.outputs } : {}) });
  }
  if (errors.length > 0) throw new AppError('ERR_RJOB_002', undefined, { errors });
  return resolved;
}

const nameTaken = (name: string) => new AppError('ERR_RJOB_002', `A job named '${name}' exists`, { errors: [{ path: 'name', message: 'A job with the same name exists' }] });

export async function createJob(deps: JobDeps, caller: JobCaller, input: JobFields): Promise<ReportJobEntity> {
  const now = new Date();
  const job: ReportJobEntity = {
    id: randomUUID(),
    projectId: caller.projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    name: input.name,
    description: input.description || null,
    items: await resolveItems(deps.db, caller.projectId, input.items),
    delivery: input.delivery,
    concurrency: input.concurrency,
    stopOnFailure: input.stopOnFailure,
    channelIds: await resolveChannelRefs(deps.db, caller.projectId, input.channelIds),
    createdBy: caller.userId ?? null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  try {
    await deps.db.getRepository(ReportJobEntity).insert(job as QueryDeepPartialEntity<ReportJobEntity>);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(job.name);
    throw err;
  }
  return job;
}

export async function updateJob(deps: JobDeps, projectId: string, ref: string, patch: Partial<JobFields>): Promise<ReportJobEntity> {
  const job = await findJob(deps.db, projectId, ref);
  const next: ReportJobEntity = {
    ...job,
    name: patch.name ?? job.name,
    description: patch.description !== undefined ? patch.description || null : job.description,
    items: patch.items ? await resolveItems(deps.db, projectId, patch.items) : job.items,
    delivery: patch.delivery ?? job.delivery,
    concurrency: patch.concurrency ?? job.concurrency,
    stopOnFailure: patch.stopOnFailure ?? job.stopOnFailure,
    channelIds: patch.channelIds ? await resolveChannelRefs(deps.db, projectId, patch.channelIds) : job.channelIds,
    updatedAt: new Date(),
  };
  try {
    await deps.db.getRepository(ReportJobEntity).save(next);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(next.name);
    throw err;
  }
  return next;
}

export function getJob(deps: JobDeps, projectId: string, ref: string): Promise<ReportJobEntity> {
  return findJob(deps.db, projectId, ref);
}

export async function listJobs(deps: JobDeps, projectId: string, q: ListJobsQuery): Promise<{ jobs: ReportJobEntity[]; total: number }> {
  const qb = deps.db.getRepository(ReportJobEntity).createQueryBuilder('j').where('j.projectId = :projectId AND j.deletedAt IS NULL', { projectId });
  if (q.search) qb.andWhere('strpos(lower(j.name), lower(:search)) > 0', { search: q.search });
  const [jobs, total] = await qb.orderBy('j.createdAt', 'DESC').addOrderBy('j.id', 'DESC').skip((q.page - 1) * q.limit).take(q.limit).getManyAndCount();
  return { jobs, total };
}

/** Soft delete; runs under way finish. 409 ERR_RJOB_006 while a live schedule targets the job. */
export async function deleteJob(deps: JobDeps, projectId: string, ref: string): Promise<void> {
  const job = await findJob(deps.db, projectId, ref);
  if (await isScheduled(deps.db, 'job', job.id)) throw new AppError('ERR_RJOB_006', undefined, { jobId: job.id, usedBy: 'schedules' });
  await deps.db.getRepository(ReportJobEntity).update({ id: job.id, projectId }, { deletedAt: new Date() });
}

/**
 * Opens a job run (`queued`, with its outbox mark) and starts its workflow after the answer
 * (platform/workflow-outbox.ts). `inTransaction` runs in the transaction that inserts it (the
 * Idempotency-Key's answer, docs/idempotency.md). A start that fails is made by a worker's outbox sweep.
 */
export async function startJobRun(
  deps: JobDeps,
  caller: JobCaller,
  ref: string,
  input: { channelIds?: string[]; metadata?: Record<string, unknown> },
  inTransaction?: (m: EntityManager, jobRun: ReportJobRunEntity) => Promise<void>,
): Promise<ReportJobRunEntity> {
  const job = await findJob(deps.db, caller.projectId, ref);
  const jobRun = newJobRun({
    job,
    trigger: caller.apiKeyId || caller.oauthClientId ? 'api' : 'manual',
    channelIds: input.channelIds ? await resolveChannelRefs(deps.db, caller.projectId, input.channelIds) : job.channelIds,
    metadata: checkMetadata(input.metadata) ?? {},
    createdBy: caller.userId,
    apiKeyId: caller.apiKeyId,
  });
  await deps.db.transaction(async (m) => {
    await insertJobRun(m, jobRun);
    await inTransaction?.(m, jobRun);
  });
  deps.outbox.start({ kind: 'reportJobRun', id: jobRun.id, projectId: jobRun.projectId });
  return jobRun;
}

async function findJobRun(db: DataSource, projectId: string, ref: string): Promise<ReportJobRunEntity> {
  const where = isUuid(ref) ? { id: ref, projectId } : ref.startsWith(JOB_RUN_SHORT_ID_PREFIX) ? { shortId: ref, projectId } : null;
  const jobRun = where ? await db.getRepository(ReportJobRunEntity).findOneBy(where) : null;
  if (!jobRun) throw new AppError('ERR_RJOB_003');
  return jobRun;
}

export function getJobRun(deps: JobDeps, projectId: string, ref: string): Promise<ReportJobRunEntity> {
  return findJobRun(deps.db, projectId, ref);
}

export async function listJobRuns(deps: JobDeps, projectId: string, q: ListJobRunsQuery): Promise<{ jobRuns: ReportJobRunEntity[]; total: number }> {
  const qb = deps.db.getRepository(ReportJobRunEntity).createQueryBuilder('r').where('r.projectId = :projectId', { projectId });
  if (q.jobId) {
    const job = await findJob(deps.db, projectId, q.jobId).catch(() => null);
    if (!job) return { jobRuns: [], total: 0 };
    qb.andWhere('r.jobId = :jobId', { jobId: job.id });
  }
  if (q.status) qb.andWhere('r.status = :status', { status: q.status });
  if (q.from) qb.andWhere('r.createdAt >= :from', { from: q.from });
  if (q.to) qb.andWhere('r.createdAt < :to', { to: q.to });
  const [jobRuns, total] = await qb.orderBy('r.createdAt', 'DESC').addOrderBy('r.id', 'DESC').skip((q.page - 1) * q.limit).take(q.limit).getManyAndCount();
  return { jobRuns, total };
}

/** Cancels a job run before its delivery (409 ERR_RJOB_005 otherwise); its running reports are cancelled with its workflow. */
export async function cancelJobRun(deps: JobDeps, projectId: string, ref: string): Promise<ReportJobRunEntity> {
  const jobRun = await findJobRun(deps.db, projectId, ref);
  if (!jobRunMachine.sourcesOf('cancelled').includes(jobRun.status) || !(await moveJobRun(deps.db, jobRun.id, 'cancelled'))) {
    throw new AppError('ERR_RJOB_005', undefined, { status: (await findJobRun(deps.db, projectId, jobRun.id)).status });
  }
  try {
    await deps.temporal.workflow.getHandle(workflowIds.reportJobRun(jobRun.id)).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  return findJobRun(deps.db, projectId, jobRun.id);
}
