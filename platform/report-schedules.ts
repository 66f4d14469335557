import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import { scheduleRevision, type ReportSchedulePort } from '../activities/reporting/schedule.activity';
import type { ReportScheduleEntity } from '../db/reporting/schedule.entity';
import { REPORT_SCHEDULE_PREFIX, scheduleIds, workflowIds, type TaskQueues } from '../domain/temporal-names';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../workflows/shared/search-attributes';
import type { Workflows } from './start-workflow';

/**
 * The Temporal Schedule of each report schedule (docs/reporting.md "Scheduling", "Temporal workflows"):
 * `report-schedule-<scheduleId>`, which starts `scheduledReportWorkflow` on the main queue at every
 * fire time of the row's cron in its zone. The row is the source of truth: callers write it first,
 * then call these; a failure in between is repaired by the maintenance reconciler
 * (activities/reporting/schedule.activity.ts), which uses the same functions.
 *
 * Overlap SKIP (the workflow waits for its run, so a run still going makes the next fire a skip,
 * counted in `numActionsSkippedOverlap`), no pause on failure, and a catch-up window from the row:
 * Temporal refuses less than 10 seconds, so 0 minutes means 10 seconds (a fire missed by an outage
 * is dropped). The memo names the row and the task queue, so the reconciler of one deployment never
 * touches another's schedules on a shared namespace; the action's memo carries the row's revision
 * (`updated_at`), so it can tell a stale spec from a current one.
 */

export interface ReportScheduleDeps {
  temporal: Client;
  taskQueues: TaskQueues;
}

/** What the schedule's memo says (ScheduleSummary.memo). */
export interface ReportScheduleMemo {
  projectId: string;
  scheduleId: string;
  /** The main task queue of the deployment that owns it. */
  taskQueue: string;
}

const KIND = 'report-schedule';
/** Temporal's smallest catch-up window. */
const MIN_CATCHUP_MS = 10_000;


function options(deps: ReportScheduleDeps, row: ReportScheduleEntity): Omit<ScheduleOptions, 'scheduleId'> {
  const args: Parameters<Workflows['scheduledReportWorkflow']> = [{ scheduleId: row.id, queryTaskQueue: deps.taskQueues.query, renderTaskQueue: deps.taskQueues.render }];
  const attributes = [
    { key: SA_KIND, value: KIND },
    { key: SA_ENTITY_ID, value: row.id },
    { key: SA_PROJECT_ID, value: row.projectId },
  ];
  return {
    spec: {
      cronExpressions: [row.cron],
      timezone: row.timezone,
      ...(row.startAt ? { startAt: new Date(row.startAt) } : {}),
      ...(row.endAt ? { endAt: new Date(row.endAt) } : {}),
    },
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledReportWorkflow' satisfies keyof Workflows,
      workflowId: workflowIds.reportScheduleRun(row.id),
      taskQueue: deps.taskQueues.main,
      args,
      typedSearchAttributes: attributes,
      memo: { projectId: row.projectId, scheduleId: row.id, revision: scheduleRevision(row) },
    },
    policies: {
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: Math.max(MIN_CATCHUP_MS, row.catchupWindowMinutes * 60_000),
      pauseOnFailure: false,
    },
    memo: { projectId: row.projectId, scheduleId: row.id, taskQueue: deps.taskQueues.main } satisfies ReportScheduleMemo,
    typedSearchAttributes: attributes,
    state: { paused: row.status === 'paused', note: row.status === 'paused' ? (row.pauseNote ?? 'paused') : undefined },
  };
}

const handle = (deps: ReportScheduleDeps, scheduleId: string) => deps.temporal.schedule.getHandle(scheduleIds.reportSchedule(scheduleId));

/**
 * Creates the row's Temporal Schedule, or brings an existing one in line with the row (a create
 * repeated after a crash, the reconciler, an update): spec, action, policies and paused state.
 */
export async function upsertReportSchedule(deps: ReportScheduleDeps, row: ReportScheduleEntity): Promise<void> {
  const opts = options(deps, row);
  try {
    await deps.temporal.schedule.create({ scheduleId: scheduleIds.reportSchedule(row.id), ...opts });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await updateReportSchedule(deps, row);
  }
}

/** Updates the Temporal Schedule in place (counts and history stay); creates it when it is missing. */
export async function updateReportSchedule(deps: ReportScheduleDeps, row: ReportScheduleEntity): Promise<void> {
  const opts = options(deps, row);
  try {
    await handle(deps, row.id).update((prev) => ({ ...prev, spec: opts.spec, action: opts.action as typeof prev.action, policies: opts.policies, state: { ...prev.state, ...opts.state } }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await deps.temporal.schedule.create({ scheduleId: scheduleIds.reportSchedule(row.id), ...opts });
  }
}

/** Deletes the Temporal Schedule; one already gone is fine. Workflows it started keep running. */
export async function deleteReportSchedule(deps: ReportScheduleDeps, scheduleId: string): Promise<void> {
  try {
    await handle(deps, scheduleId).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Pauses or resumes with a note (Temporal keeps the note in the schedule's state). */
export async function setReportSchedulePaused(deps: ReportScheduleDeps, row: ReportScheduleEntity): Promise<void> {
  try {
    if (row.status === 'paused') await handle(deps, row.id).pause(row.pauseNote ?? 'paused');
    else await handle(deps, row.id).unpause('resumed');
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await deps.temporal.schedule.create({ scheduleId: scheduleIds.reportSchedule(row.id), ...options(deps, row) });
  }
}

/** Starts one occurrence now under the schedule's overlap policy (SKIP: nothing while a run goes on). */
export async function triggerReportSchedule(deps: ReportScheduleDeps, row: ReportScheduleEntity): Promise<void> {
  try {
    await handle(deps, row.id).trigger(ScheduleOverlapPolicy.SKIP);
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    // Missing (a failed create not yet repaired): made now, then triggered.
    await upsertReportSchedule(deps, row);
    await handle(deps, row.id).trigger(ScheduleOverlapPolicy.SKIP);
  }
}

/** The Temporal Schedule as Temporal describes it; null when it does not exist. */
export async function describeReportSchedule(deps: ReportScheduleDeps, scheduleId: string): Promise<ScheduleDescription | null> {
  try {
    return await handle(deps, scheduleId).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
}

/** This deployment's report schedules in Temporal (by id prefix and the memo's task queue): row id and paused state. */
async function listReportSchedules(deps: ReportScheduleDeps): Promise<Array<{ scheduleId: string; paused: boolean }>> {
  const found: Array<{ scheduleId: string; paused: boolean }> = [];
  for await (const s of deps.temporal.schedule.list()) {
    if (!s.scheduleId.startsWith(REPORT_SCHEDULE_PREFIX)) continue;
    const memo = s.memo as Partial<ReportScheduleMemo> | undefined;
    if (memo?.taskQueue !== deps.taskQueues.main) continue;
    found.push({ scheduleId: s.scheduleId.slice(REPORT_SCHEDULE_PREFIX.length), paused: s.state.paused });
  }
  return found;
}

/** The port the reconcile activity uses (activities/ do not import platform/: the worker passes this in). */
export function reportSchedulePort(deps: ReportScheduleDeps): ReportSchedulePort {
  return {
    async describe(scheduleId) {
      const d = await describeReportSchedule(deps, scheduleId);
      if (!d) return null;
      const memo = (d.action as { memo?: { revision?: unknown } }).memo;
      return { paused: d.state.paused, revision: typeof memo?.revision === 'string' ? memo.revision : null };
    },
    upsert: (row) => upsertReportSchedule(deps, row),
    remove: (scheduleId) => deleteReportSchedule(deps, scheduleId),
    list: () => listReportSchedules(deps),
  };
}
