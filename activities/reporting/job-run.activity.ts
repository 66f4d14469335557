import type { DataSource } from 'typeorm';
import { ReportJobRunEntity } from '../../db/reporting/job-run.entity';
import { ReportJobEntity } from '../../db/reporting/job.entity';
import { insertJobRun, moveJobRun, newJobRun, recordJobItem } from '../../db/reporting/job-run-state';
import { ReportScheduleEntity } from '../../db/reporting/schedule.entity';
import { isUniqueViolation } from '../../db/sql';
import { newReportRun, storableValues } from '../../db/reporting/new-run';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { insertReportRun } from '../../db/reporting/run-state';
import { AppError } from '../../domain/errors';
import type { JobRunItem } from '../../domain/reporting/job-run-status';
import { coerceParameters } from '../../domain/reporting/parameters';

/**
 * The bookkeeping activities of `reportJobRunWorkflow` (main task queue; docs/reporting.md
 * "Jobs", "Statuses", "Temporal workflows"): the job run's moves, one child run per item (opened here, run by its
 * own `report-run-<id>` workflow), and the end: a bundle delivery when some report completed.
 */

export interface JobRunPlan {
  projectId: string;
  itemCount: number;
  concurrency: number;
  stopOnFailure: boolean;
}

const errorOf = (err: unknown) => (err instanceof AppError ? { code: err.code, message: err.message } : { code: 'ERR_INTERNAL_001', message: 'The report could not be started' });

export interface JobRunActivityDeps {
  db: DataSource;
  /** REPORT_DELIVERY_RETRY_DELAYS, for the job runs schedules open (their workflow input). */
  deliveryRetryDelaysMs: number[];
}

export function createJobRunActivities(deps: JobRunActivityDeps) {
  const { db } = deps;

  async function load(jobRunId: string): Promise<{ jobRun: ReportJobRunEntity; job: ReportJobEntity }> {
    const jobRun = await db.getRepository(ReportJobRunEntity).findOneBy({ id: jobRunId });
    if (!jobRun) throw new AppError('ERR_RJOB_003', `job run ${jobRunId} no longer exists`);
    const job = await db.getRepository(ReportJobEntity).findOneBy({ id: jobRun.jobId, projectId: jobRun.projectId });
    if (!job) throw new AppError('ERR_RJOB_001', `the job of job run ${jobRunId} no longer exists`);
    return { jobRun, job };
  }

  /** Opens one item's run: the report's latest published version, the item's values, the job run's clock. */
  async function openItemRun(jobRun: ReportJobRunEntity, job: ReportJobEntity, item: JobRunItem): Promise<string> {
    const [report] = await db.query(`SELECT id, latest_version FROM reporting_reports WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL`, [item.reportId, jobRun.projectId]);
    if (!report) throw new AppError('ERR_RPT_001', 'The report of this item no longer exists');
    if (report.latest_version === 0) throw new AppError('ERR_RPT_003', 'The report of this item has no published version');
    const version = await db.getRepository(ReportVersionEntity).findOneBy({ reportId: report.id, version: report.latest_version });
    if (!version) throw new AppError('ERR_RPT_002');
    const available = [...new Set(version.definition.outputs.map((o) => o.format))];
    const formats = item.outputs ? item.outputs.filter((f) => available.includes(f)) : available;
    if (formats.length === 0) throw new AppError('ERR_RJOB_002', `The report has none of the item's outputs (${(item.outputs ?? []).join(', ')})`);
    const values = coerceParameters(version.definition.parameters, item.parameters ?? {}, { now: jobRun.scheduledFor, timezone: jobRun.timezone, scheduledFor: jobRun.scheduledFor });
    const run = newReportRun({
      projectId: jobRun.projectId,
      reportId: report.id,
      reportVersion: version.version,
      trigger: 'job',
      jobRunId: jobRun.id,
      scheduleId: jobRun.scheduleId,
      parameters: storableValues(values),
      formats,
      metadata: jobRun.metadata,
      // `separate`: each run delivers itself; `bundle`: the job run delivers every file at the end.
      channelIds: job.delivery === 'separate' ? jobRun.channelIds : [],
      scheduledFor: jobRun.scheduledFor,
      timezone: jobRun.timezone,
      createdBy: jobRun.createdBy,
      apiKeyId: jobRun.apiKeyId,
    });
    await insertReportRun(db, run);
    return run.id;
  }

  return {
    /** `queued → running` and what the workflow needs; null when the job run already ended (cancelled). */
    async startJobRun(input: { jobRunId: string }): Promise<JobRunPlan | null> {
      const { jobRun, job } = await load(input.jobRunId);
      if (jobRun.status !== 'queued' && jobRun.status !== 'running') return null;
      if (jobRun.status === 'queued' && !(await moveJobRun(db, jobRun.id, 'running'))) return null;
      return { projectId: jobRun.projectId, itemCount: jobRun.items.length, concurrency: job.concurrency, stopOnFailure: job.stopOnFailure };
    },

    /**
     * Opens the run of item `index` (idempotent: a retried activity finds the run it opened). A
     * report that cannot run (gone, unpublished, values refused) fails the item with its code; the
     * other items go on.
     */
    async openJobItemRun(input: { jobRunId: string; index: number }): Promise<{ runId: string } | { failed: true }> {
      const { jobRun, job } = await load(input.jobRunId);
      const item = jobRun.items[input.index];
      if (item.runId) return { runId: item.runId };
      if (jobRun.status !== 'running') return { failed: true };
      try {
        const runId = await openItemRun(jobRun, job, item);
        await recordJobItem(db, jobRun.id, input.index, { runId, status: 'queued' });
        return { runId };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await recordJobItem(db, jobRun.id, input.index, { status: 'failed', error: errorOf(err) });
        return { failed: true };
      }
    },

    /** The item's run status on the job run once its workflow ended. */
    async finishJobItem(input: { jobRunId: string; index: number }): Promise<JobRunItem['status']> {
      const { jobRun } = await load(input.jobRunId);
      const item = jobRun.items[input.index];
      if (!item.runId) return item.status;
      const [run] = await db.query(`SELECT status FROM reporting_runs WHERE id = $1`, [item.runId]);
      const status: JobRunItem['status'] = run?.status ?? 'failed';
      await recordJobItem(db, jobRun.id, input.index, { status });
      return status;
    },

    /**
     * After every item: `delivering` when the job bundles, has channels and some report completed;
     * else `completed` when some report completed, `failed` when none did or `stopOnFailure`
     * stopped the job. Items never started are marked `skipped`. Null when cancelled meanwhile.
     */
    async concludeJobRun(input: { jobRunId: string; stopped: boolean }): Promise<'delivering' | 'completed' | 'failed' | null> {
      const { jobRun, job } = await load(input.jobRunId);
      if (jobRun.status !== 'running') return null;
      for (const [index, item] of jobRun.items.entries()) if (item.status === 'pending') await recordJobItem(db, jobRun.id, index, { status: 'skipped' });
      const completed = jobRun.items.filter((i) => i.status === 'completed').length;
      if (input.stopped || completed === 0) {
        const message = input.stopped ? 'A report failed and the job stops on failure' : 'Every report of the job failed';
        await moveJobRun(db, jobRun.id, 'failed', { code: 'ERR_RJOB_004', message });
        return 'failed';
      }
      const next = job.delivery === 'bundle' && jobRun.channelIds.length > 0 ? 'delivering' : 'completed';
      return (await moveJobRun(db, jobRun.id, next)) ? next : null;
    },

    /**
     * Opens the job run of one schedule occurrence (the schedule's channels, clock and zone; the
     * occurrence key unique per schedule like runs'): a second fire of the same local minute is
     * recorded as a `skipped` job run (`duplicate_occurrence`). The ids come from the workflow, so a
     * retried attempt finds its own insert. `gone`: the schedule or the job was deleted.
     */
    async openScheduledJobRun(input: { scheduleId: string; scheduledFor: string; occurrenceKey: string; jobRunId: string; duplicateJobRunId: string }): Promise<{ outcome: 'gone' } | { outcome: 'skipped'; jobRunId: string } | { outcome: 'job-run'; jobRunId: string; projectId: string; deliveryRetryDelaysMs: number[] }> {
      const schedule = await db.getRepository(ReportScheduleEntity).findOneBy({ id: input.scheduleId });
      if (!schedule || schedule.deletedAt || schedule.targetType !== 'job') return { outcome: 'gone' };
      const job = await db.getRepository(ReportJobEntity).findOneBy({ id: schedule.targetId, projectId: schedule.projectId });
      if (!job || job.deletedAt) return { outcome: 'gone' };
      const fields = {
        job,
        trigger: 'schedule' as const,
        scheduleId: schedule.id,
        occurrenceKey: input.occurrenceKey,
        channelIds: schedule.channelIds,
        scheduledFor: new Date(input.scheduledFor),
        timezone: schedule.timezone,
        createdBy: schedule.createdBy,
      };
      const jobRun = { ...newJobRun(fields), id: input.jobRunId };
      try {
        await insertJobRun(db, jobRun);
      } catch (err) {
        if (!isUniqueViolation(err, 'reporting_job_runs_occurrence_idx') && !isUniqueViolation(err, 'reporting_job_runs_pkey')) throw err;
        const [mine] = await db.query(`SELECT id FROM reporting_job_runs WHERE id = ANY($1::uuid[])`, [[input.jobRunId, input.duplicateJobRunId]]);
        if (mine?.id === input.jobRunId) return { outcome: 'job-run', jobRunId: mine.id, projectId: job.projectId, deliveryRetryDelaysMs: deps.deliveryRetryDelaysMs };
        if (!mine) await insertJobRun(db, { ...newJobRun({ ...fields, status: 'skipped', skipReason: 'duplicate_occurrence' }), id: input.duplicateJobRunId });
        return { outcome: 'skipped', jobRunId: input.duplicateJobRunId };
      }
      return { outcome: 'job-run', jobRunId: jobRun.id, projectId: job.projectId, deliveryRetryDelaysMs: deps.deliveryRetryDelaysMs };
    },

    /** Ends the job run `failed` with the error that stopped its workflow. */
    async failJobRun(input: { jobRunId: string; error: { code: string; message: string } }): Promise<void> {
      await moveJobRun(db, input.jobRunId, 'failed', input.error);
    },

    /** Ends the job run `cancelled` (its workflow was cancelled); a no-op when the API already did. */
    async cancelJobRun(input: { jobRunId: string }): Promise<void> {
      await moveJobRun(db, input.jobRunId, 'cancelled');
    },
  };
}

export type JobRunActivities = ReturnType<typeof createJobRunActivities>;
