import { ApplicationFailure, log, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities } from '../../activities/documents';
import type { FlowActivities } from '../../activities/flow';
import type { IdempotencyActivities } from '../../activities/idempotency';
import type { AccountMaintenanceActivities } from '../../activities/identity/account-maintenance.activity';
import type { MaintenanceActivities } from '../../activities/maintenance';
import type { ReportMaintenanceActivities } from '../../activities/reporting/report-maintenance.activity';
import type { ScheduleActivities } from '../../activities/reporting/schedule.activity';
import { RETRY } from '../shared/retry-policies';

// One policy for every sweep, as before the sweeps were split: the next scheduled run tries again anyway.
const sweepActivities = proxyActivities<
  DocumentActivities & FlowActivities & AccountMaintenanceActivities & ReportMaintenanceActivities & ScheduleActivities & IdempotencyActivities & MaintenanceActivities
>({ startToCloseTimeout: '5 minutes', retry: RETRY.maintenance });
const { expireArtefacts, restartStrandedDocuments, expireFlowArtefacts, restartStrandedAccounts, sweepWorkflowOutbox } = sweepActivities;
const { expireReportOutputs, expireReportDatasets, deleteOldReportRuns, restartStrandedReportRuns, reconcileReportSchedules, expireAgentTasks } = sweepActivities;
const { deleteExpiredIdempotencyKeys } = sweepActivities;

/** Rows one call of a retention step handles; a full batch means there may be more. */
const BATCH = 500;

/** The schedule's input (worker/schedules.ts fills every field from the configuration). */
export interface MaintenanceInput {
  /** DOCUMENT_RETENTION_SECONDS: document artefacts and batch archives older than this are removed. */
  retentionSeconds: number;
  /** Accepted work older than this without a running workflow is started again (or ended). */
  strandedAfterSeconds: number;
  /** ACCOUNT_DELETION_GRACE_SECONDS, so a restarted deletion keeps its original purge date. */
  deletionGraceSeconds: number;
  /** REPORTING_ARTEFACT_RETENTION_DAYS. */
  reportArtefactRetentionDays: number;
  /** REPORTING_RUN_RETENTION_DAYS. */
  reportRunRetentionDays: number;
  /** REPORTING_AGENT_QUEUE_TIMEOUT_SECONDS. */
  reportAgentQueueTimeoutSeconds: number;
}

/** What the sweeps removed (files, rows, agent tasks; idempotency keys are not counted) and started or ended. */
export interface MaintenanceTally {
  expired: number;
  restarted: number;
}

/** Calls a retention step while it handles a full batch; resolves to how many it handled in all. */
async function drain(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step();
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * Each domain's sweep, its steps in order, counting into a tally of its own as it goes (the sweeps
 * run side by side: `tally.n += await …` on a shared tally would add to a value read before the
 * await and lose the others' counts). A sweep's activities are its domain's (activities/<domain>);
 * the outbox backstop serves every domain.
 */
const SWEEPS: Record<string, (input: MaintenanceInput, tally: MaintenanceTally) => Promise<void>> = {
  async outbox(input, tally) {
    tally.restarted += await sweepWorkflowOutbox({ olderThanSeconds: input.strandedAfterSeconds });
  },
  async documents(input, tally) {
    tally.expired += await drain(() => expireArtefacts({ olderThanSeconds: input.retentionSeconds, limit: BATCH }));
    tally.restarted += await restartStrandedDocuments({ olderThanSeconds: input.strandedAfterSeconds });
  },
  async flow(_input, tally) {
    // Flow run artefacts: retention by the project's plan (3 or 5 days), not DOCUMENT_RETENTION_SECONDS.
    tally.expired += await drain(() => expireFlowArtefacts({ limit: BATCH }));
  },
  async identity(input, tally) {
    tally.restarted += await restartStrandedAccounts({ olderThanSeconds: input.strandedAfterSeconds, deletionGraceSeconds: input.deletionGraceSeconds });
  },
  async reporting(input, tally) {
    // Output files past their expires_at, then dataset files of runs ended past the artefact
    // retention, then whole runs past the run retention (their remaining files first).
    tally.expired += await drain(() => expireReportOutputs({ limit: BATCH }));
    tally.expired += await drain(() => expireReportDatasets({ olderThanDays: input.reportArtefactRetentionDays, limit: BATCH }));
    tally.expired += await drain(() => deleteOldReportRuns({ olderThanDays: input.reportRunRetentionDays, limit: BATCH }));
    // One pass: a queued run whose workflow exists stays queued and would loop.
    tally.restarted += await restartStrandedReportRuns({ olderThanSeconds: input.strandedAfterSeconds, limit: BATCH });
    // Rows first, then Temporal: a crash between the two (or a Temporal outage) is repaired here.
    const repaired = await reconcileReportSchedules();
    tally.restarted += repaired.created + repaired.updated;
    tally.expired += await expireAgentTasks({ queueTimeoutSeconds: input.reportAgentQueueTimeoutSeconds, runRetentionDays: input.reportRunRetentionDays, limit: BATCH });
  },
  async idempotency() {
    await drain(() => deleteExpiredIdempotencyKeys({ limit: BATCH }));
  },
};

/**
 * Run by the maintenance schedule (`<prefix>-maintenance`, worker/schedules.ts): retention of every
 * domain's files and records and the restart of accepted work whose workflow is not running. The
 * domains' sweeps run side by side and independently: one whose activity fails (after
 * RETRY.maintenance's attempts) stops there, the others go on to their end; then the run fails
 * naming the sweeps that failed, so an operator sees it, and the next scheduled run tries again.
 */
export async function maintenanceWorkflow(input: MaintenanceInput): Promise<MaintenanceTally> {
  const names = Object.keys(SWEEPS);
  const tallies = names.map((): MaintenanceTally => ({ expired: 0, restarted: 0 }));
  const outcomes = await Promise.allSettled(names.map((name, i) => SWEEPS[name](input, tallies[i])));
  // A failed sweep's steps before its failure count too.
  const tally = tallies.reduce((sum, t) => ({ expired: sum.expired + t.expired, restarted: sum.restarted + t.restarted }), { expired: 0, restarted: 0 });
  const failed: Array<{ sweep: string; error: string }> = [];
  outcomes.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') return;
    const reason = outcome.reason as Error & { cause?: Error };
    failed.push({ sweep: names[i], error: reason.cause?.message ?? reason.message });
  });
  if (failed.length > 0) {
    for (const f of failed) log.warn('maintenance sweep failed', f);
    throw ApplicationFailure.create({
      type: 'MaintenanceSweepFailed',
      message: `Maintenance sweeps failed: ${failed.map((f) => `${f.sweep} (${f.error})`).join('; ')}`,
      nonRetryable: true,
      details: [{ ...tally, failed }],
    });
  }
  return tally;
}
