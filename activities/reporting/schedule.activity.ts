import type { DataSource } from 'typeorm';
import { newReportRun, storableValues } from '../../db/reporting/new-run';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { ReportEntity } from '../../db/reporting/report.entity';
import { insertReportRun, moveReportRun } from '../../db/reporting/run-state';
import { ReportScheduleEntity } from '../../db/reporting/schedule.entity';
import { isUniqueViolation } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { occurrenceKey } from '../../domain/reporting/cron';
import { coerceParameters } from '../../domain/reporting/parameters';

/**
 * The activities of report schedules (docs/reporting.md "Scheduling", "Temporal workflows"), main task queue:
 * `openScheduledRun` turns one fire of a Temporal Schedule into a run record, and
 * `reconcileReportSchedules` (maintenance) makes Temporal's schedules match the rows.
 */

/** The Temporal Schedules of report schedules, as platform/report-schedules.ts `reportSchedulePort` provides them. */
export interface ReportSchedulePort {
  /** Null when the Temporal Schedule does not exist; `revision` is the row's `updated_at` it was written from. */
  describe(scheduleId: string): Promise<{ paused: boolean; revision: string | null } | null>;
  /** Creates it, or brings it in line with the row. */
  upsert(row: ReportScheduleEntity): Promise<void>;
  remove(scheduleId: string): Promise<void>;
  /** This deployment's report schedules in Temporal (row id, paused), as the visibility store lists them. */
  list(): Promise<Array<{ scheduleId: string; paused: boolean }>>;
}

export interface ScheduleActivityDeps {
  db: DataSource;
  schedules: ReportSchedulePort;
  /** REPORT_DELIVERY_RETRY_DELAYS as the worker has it now, for the run's workflow (not frozen into the Temporal Schedule). */
  deliveryRetryDelaysMs: number[];
}

/** Rows changed this recently have their Temporal Schedule's revision checked (one describe each). */
const RECENT_CHANGE_MS = 24 * 3600_000;

/** The row's revision as the Temporal Schedule's action memo keeps it. */
export const scheduleRevision = (row: Pick<ReportScheduleEntity, 'updatedAt'>) => new Date(row.updatedAt).toISOString();

/** What one fire opened. */
export type ScheduledOpening =
  /** The schedule was deleted (or never existed): nothing recorded. */
  | { outcome: 'gone' }
  /** The occurrence already has a run: a `skipped` run (`duplicate_occurrence`) records the second fire. */
  | { outcome: 'skipped'; runId: string }
  /** The run could not be opened (bad parameters, no format left): recorded `failed` at `query`. */
  | { outcome: 'failed'; runId: string; code: string }
  /** A queued run, for `report-run-<runId>`. */
  | { outcome: 'run'; runId: string; projectId: string; deliveryRetryDelaysMs: number[] }
  /** A job target: opened by the job's own activity (lead: `openScheduledJobRun`). */
  | { outcome: 'job'; projectId: string; jobId: string; occurrenceKey: string };

const conflictOn = (constraint: string) => (err: unknown) => isUniqueViolation(err, constraint);
const isOccurrenceConflict = conflictOn('reporting_runs_occurrence_idx');
const isPrimaryKeyConflict = conflictOn('reporting_runs_pkey');

export interface OpenScheduledRunInput {
  scheduleId: string;
  /** Temporal's scheduled start time (ISO 8601). */
  scheduledFor: string;
  /** Ids made by the workflow (deterministic), so a retried attempt recognises its own insert. */
  runId: string;
  duplicateRunId: string;
}

export function createScheduleActivities(deps: ScheduleActivityDeps) {
  const { db, schedules } = deps;

  return {
    /**
     * Opens the run of one occurrence (`scheduledFor` = Temporal's scheduled start time): the latest
     * published version of the target report, the schedule's parameters coerced with the
     * occurrence's clock and zone, its channels, outputs and skipIfEmpty. The occurrence key (local
     * wall-clock minute and zone) is unique per schedule, so a second fire of the same minute (a
     * repeated daylight-saving hour, a retried start) records a `skipped` run instead. A report that
     * was never published cannot hold a run: ERR_SCHED_005 (non-retryable; the workflow fails).
     */
    async openScheduledRun(input: OpenScheduledRunInput): Promise<ScheduledOpening> {
      const schedule = await db.getRepository(ReportScheduleEntity).findOneBy({ id: input.scheduleId });
      if (!schedule || schedule.deletedAt) return { outcome: 'gone' };
      const scheduledFor = new Date(input.scheduledFor);
      const key = occurrenceKey(scheduledFor, schedule.timezone);
      if (schedule.targetType === 'job') return { outcome: 'job', projectId: schedule.projectId, jobId: schedule.targetId, occurrenceKey: key };

      const report = await db.getRepository(ReportEntity).findOneBy({ id: schedule.targetId, projectId: schedule.projectId });
      if (!report || report.latestVersion === 0) throw new AppError('ERR_SCHED_005', 'The scheduled report has no published version', { scheduleId: schedule.id, reportId: schedule.targetId });
      const version = await db.getRepository(ReportVersionEntity).findOneBy({ reportId: report.id, version: report.latestVersion });
      if (!version) throw new AppError('ERR_RPT_002', `Report version ${report.latestVersion} not found`);

      const available = [...new Set(version.definition.outputs.map((o) => o.format))];
      const formats = schedule.outputs ? schedule.outputs.filter((f) => available.includes(f)) : available;
      let problem: { code: string; message: string } | null = report.deletedAt ? { code: 'ERR_RPT_001', message: 'The scheduled report was deleted' } : null;
      let parameters: Record<string, unknown> = schedule.parameters;
      if (!problem && formats.length === 0) problem = { code: 'ERR_VALID_001', message: `The report no longer has the schedule's outputs (${(schedule.outputs ?? []).join(', ')})` };
      if (!problem) {
        try {
          parameters = storableValues(coerceParameters(version.definition.parameters, schedule.parameters, { now: scheduledFor, timezone: schedule.timezone, scheduledFor }));
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          problem = { code: err.code, message: err.message };
        }
      }

      const fields = {
        projectId: schedule.projectId,
        reportId: report.id,
        reportVersion: version.version,
        trigger: 'schedule' as const,
        parameters,
        formats: formats.length > 0 ? formats : available,
        scheduleId: schedule.id,
        occurrenceKey: key,
        channelIds: schedule.channelIds,
        skipIfEmpty: schedule.skipIfEmpty,
        scheduledFor,
        timezone: schedule.timezone,
        createdBy: schedule.createdBy,
      };
      const run = { ...newReportRun(fields), id: input.runId };
      try {
        await insertReportRun(db, run);
      } catch (err) {
        if (!isOccurrenceConflict(err) && !isPrimaryKeyConflict(err)) throw err;
        // A retried attempt finds what its first attempt inserted (the ids come from the workflow): the same fire, not a duplicate.
        const [mine] = await db.query(`SELECT id, status, error FROM reporting_runs WHERE id = ANY($1::uuid[])`, [[input.runId, input.duplicateRunId]]);
        if (mine?.id === input.duplicateRunId) return { outcome: 'skipped', runId: mine.id };
        if (mine) return mine.status === 'failed' ? { outcome: 'failed', runId: mine.id, code: mine.error?.code ?? 'ERR_INTERNAL_001' } : { outcome: 'run', runId: mine.id, projectId: run.projectId, deliveryRetryDelaysMs: deps.deliveryRetryDelaysMs };
        const skipped = { ...newReportRun({ ...fields, status: 'skipped', skipReason: 'duplicate_occurrence' }), id: input.duplicateRunId };
        await insertReportRun(db, skipped);
        return { outcome: 'skipped', runId: skipped.id };
      }
      if (problem) {
        await moveReportRun(db, { runId: run.id, status: 'failed', failedStage: 'query', error: problem });
        return { outcome: 'failed', runId: run.id, code: problem.code };
      }
      return { outcome: 'run', runId: run.id, projectId: run.projectId, deliveryRetryDelaysMs: deps.deliveryRetryDelaysMs };
    },

    /**
     * Makes Temporal match the rows (maintenance; docs/reporting.md "Reconciliation"): each live row
     * gets its Temporal Schedule when it is missing, and is brought in line when its paused state or,
     * for rows changed in the last day, its revision differs (an update whose Temporal call failed);
     * each of this deployment's `report-schedule-*` Temporal Schedules whose row is deleted or gone is
     * deleted. Temporal is listed before the rows are read, so a schedule created meanwhile is never
     * taken for an orphan; rows the (eventually consistent) list does not show yet are described one
     * by one. Answers the number of repairs.
     */
    async reconcileReportSchedules(): Promise<{ created: number; updated: number; deleted: number }> {
      const listed = new Map((await schedules.list()).map((s) => [s.scheduleId, s.paused]));
      const rows = await db.getRepository(ReportScheduleEntity).createQueryBuilder('s').where('s.deletedAt IS NULL').getMany();
      const result = { created: 0, updated: 0, deleted: 0 };
      const live = new Set<string>();
      const recent = Date.now() - RECENT_CHANGE_MS;
      for (const row of rows) {
        live.add(row.id);
        const paused = row.status === 'paused';
        const inList = listed.get(row.id);
        if (inList !== undefined && new Date(row.updatedAt).getTime() < recent) {
          if (inList !== paused) {
            await schedules.upsert(row);
            result.updated++;
          }
          continue;
        }
        const described = await schedules.describe(row.id);
        if (!described) {
          await schedules.upsert(row);
          result.created++;
        } else if (described.revision !== scheduleRevision(row) || described.paused !== paused) {
          await schedules.upsert(row);
          result.updated++;
        }
      }
      for (const id of listed.keys()) {
        if (live.has(id)) continue;
        await schedules.remove(id);
        result.deleted++;
      }
      return result;
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
