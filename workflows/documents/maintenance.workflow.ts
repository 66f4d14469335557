import { patched, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities } from '../../activities/documents';
import type { FlowActivities } from '../../activities/flow';
import type { IdempotencyActivities } from '../../activities/idempotency';
import type { MaintenanceActivities } from '../../activities/maintenance';
import type { ReportMaintenanceActivities } from '../../activities/reporting/report-maintenance.activity';
import type { ScheduleActivities } from '../../activities/reporting/schedule.activity';
import { RETRY } from '../shared/retry-policies';

// The same activity names as when this type was current (restartStrandedWork now composes the domains' sweeps).
const { expireArtefacts, restartStrandedWork, deleteExpiredIdempotencyKeys } = proxyActivities<DocumentActivities & MaintenanceActivities & IdempotencyActivities>({
  startToCloseTimeout: '5 minutes',
  retry: RETRY.maintenance,
});
const { expireFlowArtefacts } = proxyActivities<FlowActivities>({ startToCloseTimeout: '5 minutes', retry: RETRY.maintenance });
const { expireReportOutputs, expireReportDatasets, deleteOldReportRuns, restartStrandedReportRuns, expireAgentTasks } = proxyActivities<ReportMaintenanceActivities>({
  startToCloseTimeout: '5 minutes',
  retry: RETRY.maintenance,
});

const { reconcileReportSchedules } = proxyActivities<ScheduleActivities>({ startToCloseTimeout: '5 minutes', retry: RETRY.maintenance });

/** Reporting retention and stranded report runs, added after the first schedules ran (replay of older histories skips them). */
const REPORT_RETENTION_PATCH = 'report-retention';
/** Report schedules' Temporal Schedules matched to their rows (docs/reporting.md "Scheduling"), added later still. */
const REPORT_SCHEDULE_RECONCILE_PATCH = 'report-schedule-reconcile';
/** Agent tasks past their queue timeout or lease, and old preview files (docs/reporting.md "Agents"), added with agents. */
const REPORT_AGENT_TASKS_PATCH = 'report-agent-tasks';
/** Idempotency keys past their 24 h (docs/idempotency.md), added with them; not counted in `expired` (no artefact). */
const IDEMPOTENCY_KEYS_PATCH = 'idempotency-keys';
const BATCH = 500;

export interface MaintenanceInput {
  retentionSeconds: number;
  /** Queued work older than this without a running workflow is started again. */
  strandedAfterSeconds: number;
  /** ACCOUNT_DELETION_GRACE_SECONDS, so a restarted deletion keeps its original purge date. */
  deletionGraceSeconds: number;
  /** REPORTING_ARTEFACT_RETENTION_DAYS (absent in the input of schedules created before reporting retention: 30). */
  reportArtefactRetentionDays?: number;
  /** REPORTING_RUN_RETENTION_DAYS (absent in older schedules' input: 90). */
  reportRunRetentionDays?: number;
  /** REPORTING_AGENT_QUEUE_TIMEOUT_SECONDS (absent in older schedules' input: 600). */
  reportAgentQueueTimeoutSeconds?: number;
}

/**
 * RETIRED: the schedule starts `maintenanceWorkflow` (workflows/maintenance/maintenance.workflow.ts)
 * instead. Registered, unchanged, until no run of it is open (docs/operations.md "Retiring the old
 * maintenance workflow"), so runs in flight and the recorded histories still replay.
 *
 * Was run by a Temporal schedule (`formwork-maintenance`): removes artefacts past the retention period
 * (document artefacts, and Flow run artefacts past their plan's retention; report output and
 * dataset files, and report runs past REPORTING_RUN_RETENTION_DAYS) and restarts accepted work
 * whose workflow never started (report runs included), and makes report schedules' Temporal
 * Schedules match their rows.
 */
export async function documentMaintenanceWorkflow(input: MaintenanceInput): Promise<{ expired: number; restarted: number }> {
  let expired = 0;
  for (;;) {
    const n = await expireArtefacts({ olderThanSeconds: input.retentionSeconds, limit: 500 });
    expired += n;
    if (n < 500) break;
  }
  // Flow run artefacts: retention by the project's plan (3 or 5 days), not DOCUMENT_RETENTION_SECONDS.
  for (;;) {
    const n = await expireFlowArtefacts({ limit: 500 });
    expired += n;
    if (n < 500) break;
  }
  let restarted = await restartStrandedWork({ olderThanSeconds: input.strandedAfterSeconds, deletionGraceSeconds: input.deletionGraceSeconds });
  if (patched(REPORT_RETENTION_PATCH)) {
    const artefactDays = input.reportArtefactRetentionDays ?? 30;
    const runDays = input.reportRunRetentionDays ?? 90;
    const drain = async (step: () => Promise<number>) => {
      for (;;) {
        const n = await step();
        expired += n;
        if (n < BATCH) break;
      }
    };
    // Report output files past their expires_at, then dataset result files of runs ended past the
    // artefact retention, then whole runs past the run retention (their remaining files first).
    await drain(() => expireReportOutputs({ limit: BATCH }));
    await drain(() => expireReportDatasets({ olderThanDays: artefactDays, limit: BATCH }));
    await drain(() => deleteOldReportRuns({ olderThanDays: runDays, limit: BATCH }));
    // One pass, like restartStrandedWork: a queued run whose workflow exists stays queued and would loop.
    restarted += await restartStrandedReportRuns({ olderThanSeconds: input.strandedAfterSeconds, limit: BATCH });
  }
  if (patched(REPORT_SCHEDULE_RECONCILE_PATCH)) {
    // Rows first, then Temporal: a crash between the two (or a Temporal outage) is repaired here.
    const repaired = await reconcileReportSchedules();
    restarted += repaired.created + repaired.updated;
  }
  if (patched(REPORT_AGENT_TASKS_PATCH)) {
    expired += await expireAgentTasks({ queueTimeoutSeconds: input.reportAgentQueueTimeoutSeconds ?? 600, runRetentionDays: input.reportRunRetentionDays ?? 90, limit: BATCH });
  }
  if (patched(IDEMPOTENCY_KEYS_PATCH)) {
    for (;;) {
      if ((await deleteExpiredIdempotencyKeys({ limit: BATCH })) < BATCH) break;
    }
  }
  return { expired, restarted };
}
