import type { ScheduleView } from './schedules.service';

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

/**
 * A schedule (docs/reporting.md "Scheduling"). `nextRunTimes`, `missedRuns` and `skippedOverlapRuns` are
 * Temporal's (the Temporal Schedule's describe); lists and a schedule whose Temporal Schedule is
 * missing (awaiting the reconciler) show them as null.
 */
export function presentSchedule(view: ScheduleView) {
  const s = view.schedule;
  const info = view.description?.info;
  const last = view.lastRun;
  return {
    id: s.id,
    shortId: s.shortId,
    name: s.name,
    target: { type: s.targetType, id: s.targetId },
    cron: s.cron,
    timezone: s.timezone,
    description: view.cronDescription ?? null,
    parameters: s.parameters,
    channelIds: s.channelIds,
    outputs: s.outputs,
    skipIfEmpty: s.skipIfEmpty,
    status: s.status,
    pauseNote: s.pauseNote,
    catchupWindowMinutes: s.catchupWindowMinutes,
    startAt: iso(s.startAt),
    endAt: iso(s.endAt),
    nextRunTimes: info ? info.nextActionTimes.slice(0, 5).map((d) => d.toISOString()) : null,
    lastRun: last ? { ...(last.jobRunId ? { jobRunId: last.jobRunId } : { runId: last.runId }), status: last.status, scheduledFor: iso(last.scheduledFor) } : null,
    missedRuns: info ? info.numActionsMissedCatchupWindow : null,
    skippedOverlapRuns: info ? info.numActionsSkippedOverlap : null,
    warnings: view.warnings ?? [],
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  };
}
