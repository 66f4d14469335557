import type { ReportJobRunEntity } from '../../db/reporting/job-run.entity';
import type { ReportJobEntity } from '../../db/reporting/job.entity';

/** Report jobs and job runs as clients see them (docs/reporting.md "Jobs"). */

export function presentJob(j: ReportJobEntity) {
  return {
    id: j.id,
    shortId: j.shortId,
    name: j.name,
    description: j.description,
    items: j.items.map((i) => ({ reportId: i.reportId, parameters: i.parameters, ...(i.outputs ? { outputs: i.outputs } : {}) })),
    delivery: j.delivery,
    concurrency: j.concurrency,
    stopOnFailure: j.stopOnFailure,
    channelIds: j.channelIds,
    createdAt: j.createdAt.toISOString(),
    updatedAt: j.updatedAt.toISOString(),
  };
}

export function presentJobRun(r: ReportJobRunEntity, deliveries: unknown[] = []) {
  return {
    id: r.id,
    shortId: r.shortId,
    jobId: r.jobId,
    trigger: r.trigger,
    scheduleId: r.scheduleId,
    scheduledFor: r.scheduledFor.toISOString(),
    timezone: r.timezone,
    status: r.status,
    skipReason: r.skipReason,
    items: r.items.map((i) => ({ reportId: i.reportId, runId: i.runId, status: i.status, ...(i.error ? { error: i.error } : {}) })),
    totalRuns: r.totalRuns,
    completedRuns: r.completedRuns,
    failedRuns: r.failedRuns,
    deliveryStatus: r.deliveryStatus,
    channelIds: r.channelIds,
    deliveries,
    error: r.error,
    metadata: r.metadata,
    createdAt: r.createdAt.toISOString(),
    startedAt: r.startedAt?.toISOString() ?? null,
    completedAt: r.completedAt?.toISOString() ?? null,
  };
}
