import { randomUUID } from 'node:crypto';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { DataSource } from 'typeorm';
import { jobRunMachine, type JobRunItem, type JobRunStatus } from '../../domain/reporting/job-run-status';
import { randomBase62 } from '../../domain/signing';
import { modifyReturning, type Queryable } from '../sql';
import { ReportJobRunEntity } from './job-run.entity';
import type { ReportJobEntity } from './job.entity';

/**
 * The only writer of `reporting_job_runs.status` (docs/reporting.md "Statuses"): inserted `queued` (or
 * `skipped` for a schedule's duplicate occurrence), moved by conditional UPDATEs from the statuses
 * domain/reporting/job-run-status.ts allows. Deliveries are settled by db/reporting/delivery-state.ts.
 */

export const JOB_RUN_SHORT_ID_PREFIX = 'rjrun_';

export interface NewJobRunFields {
  job: Pick<ReportJobEntity, 'id' | 'projectId' | 'items' | 'channelIds'>;
  trigger: ReportJobRunEntity['trigger'];
  channelIds?: string[];
  scheduleId?: string | null;
  occurrenceKey?: string | null;
  scheduledFor?: Date;
  timezone?: string;
  metadata?: Record<string, unknown>;
  createdBy?: string | null;
  apiKeyId?: string | null;
  status?: 'queued' | 'skipped';
  skipReason?: string | null;
}

/** A new job run record, not yet inserted: one pending item per job item. */
export function newJobRun(f: NewJobRunFields): ReportJobRunEntity {
  const now = new Date();
  return {
    id: randomUUID(),
    projectId: f.job.projectId,
    shortId: JOB_RUN_SHORT_ID_PREFIX + randomBase62(16),
    jobId: f.job.id,
    trigger: f.trigger,
    scheduleId: f.scheduleId ?? null,
    occurrenceKey: f.occurrenceKey ?? null,
    scheduledFor: f.scheduledFor ?? now,
    timezone: f.timezone ?? 'UTC',
    status: f.status ?? 'queued',
    skipReason: f.skipReason ?? null,
    items: f.job.items.map((i) => ({ reportId: i.reportId, runId: null, status: 'pending', parameters: i.parameters ?? {}, ...(i.outputs ? { outputs: i.outputs } : {}) })),
    totalRuns: f.job.items.length,
    completedRuns: 0,
    failedRuns: 0,
    deliveryStatus: 'none',
    channelIds: f.channelIds ?? f.job.channelIds,
    error: null,
    metadata: f.metadata ?? {},
    createdBy: f.createdBy ?? null,
    apiKeyId: f.apiKeyId ?? null,
    // The API's job runs start through the outbox; a schedule's through the schedule workflow.
    workflowPending: f.status !== 'skipped' && (f.trigger === 'manual' || f.trigger === 'api'),
    workflowStartedAt: null,
    createdAt: now,
    startedAt: null,
    completedAt: f.status === 'skipped' ? now : null,
    updatedAt: now,
  };
}

export async function insertJobRun(db: Queryable, jobRun: ReportJobRunEntity): Promise<void> {
  if (!jobRunMachine.initial.includes(jobRun.status)) throw new Error(`a job run is not created ${jobRun.status}`);
  await db.getRepository(ReportJobRunEntity).insert(jobRun as QueryDeepPartialEntity<ReportJobRunEntity>);
}

/** Moves a job run if the table allows it from where it is; answers whether it moved. */
export async function moveJobRun(db: Queryable, jobRunId: string, status: JobRunStatus, error?: { code: string; message: string } | null): Promise<boolean> {
  const rows = await modifyReturning(
    db,
    `UPDATE reporting_job_runs SET status = $2, updated_at = now(),
        error = CASE WHEN $4::boolean THEN $3::jsonb ELSE error END,
        started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
        completed_at = CASE WHEN $2 = ANY($5::text[]) THEN coalesce(completed_at, now()) ELSE completed_at END
      WHERE id = $1 AND status = ANY($6::text[]) RETURNING id`,
    [jobRunId, status, error ? JSON.stringify(error) : null, error !== undefined, jobRunMachine.ended, jobRunMachine.sourcesOf(status)],
  );
  return rows.length > 0;
}

/** One item's run and status on the job run record, and the counts with it. */
export async function recordJobItem(db: DataSource, jobRunId: string, index: number, item: Partial<JobRunItem>): Promise<void> {
  await db.query(
    `UPDATE reporting_job_runs SET updated_at = now(),
        items = jsonb_set(items, ARRAY[$2::text], (items -> $2::int) || $3::jsonb)
      WHERE id = $1`,
    [jobRunId, index, JSON.stringify(item)],
  );
  await db.query(
    `UPDATE reporting_job_runs SET
        completed_runs = (SELECT count(*) FROM jsonb_array_elements(items) i WHERE i->>'status' = 'completed'),
        failed_runs = (SELECT count(*) FROM jsonb_array_elements(items) i WHERE i->>'status' IN ('failed','cancelled'))
      WHERE id = $1`,
    [jobRunId],
  );
}

/**
 * The job run's delivery status once its bundle's delivery workflows ended (db/reporting/delivery-state.ts
 * counts them): a job run still `delivering` ends with it (with `error`); one that left `delivering`
 * meanwhile takes only the delivery status.
 */
export async function settleJobRunDeliveries(db: Queryable, jobRunId: string, outcome: 'completed' | 'failed', error: { code: string; message: string } | null): Promise<void> {
  await db.query(
    `UPDATE reporting_job_runs SET delivery_status = $2, updated_at = now(),
        status = CASE WHEN status = ANY($4::text[]) THEN $2 ELSE status END,
        error = CASE WHEN status = ANY($4::text[]) THEN $3::jsonb ELSE error END,
        completed_at = CASE WHEN status = ANY($4::text[]) THEN now() ELSE completed_at END
      WHERE id = $1`,
    [jobRunId, outcome, error ? JSON.stringify(error) : null, jobRunMachine.sourcesOf(outcome, ['delivering'])],
  );
}

/**
 * `failed → completed` after manual retries delivered every failed delivery of the bundle (the
 * caller checked none is failed or open): only a job run whose delivery status is `failed` and that
 * failed for its deliveries (`ERR_RDLV_004`), or did not fail, moves. Answers whether it moved.
 */
export async function completeJobRunAfterRedelivery(db: Queryable, jobRunId: string): Promise<boolean> {
  const rows = await modifyReturning(
    db,
    `UPDATE reporting_job_runs SET delivery_status = 'completed', updated_at = now(),
        status = CASE WHEN status = ANY($2::text[]) THEN 'completed' ELSE status END,
        error = NULL
      WHERE id = $1 AND delivery_status = 'failed' AND (status <> ALL($2::text[]) OR error->>'code' = 'ERR_RDLV_004')
      RETURNING id`,
    [jobRunId, jobRunMachine.sourcesOf('completed', ['failed'])],
  );
  return rows.length > 0;
}
