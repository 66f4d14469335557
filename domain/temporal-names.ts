/**
 * Task queues, workflow ids and schedule ids in one place: no other file builds one. Workflow ids
 * are the product's ids, so an operator who has a jobId or runId from a customer pastes it
 * straight into the Temporal Web UI.
 */
export function taskQueues(prefix: string) {
  return {
    /** Workflows and bookkeeping activities (database writes, approvals' tallies). */
    main: `${prefix}-main`,
    /**
     * Outbound calls that wait on someone else's server: webhook attempts, report deliveries, e-mail,
     * custom render APIs. Slots sized to sockets (EGRESS_ACTIVITY_SLOTS), not to the database pool, so a
     * receiver that hangs holds no bookkeeping slot; tasks carry their project as fairness key.
     */
    egress: `${prefix}-egress`,
    /** Browser and workbook rendering: its own queue so render concurrency is bounded per worker. */
    render: `${prefix}-render`,
    /** Reporting queries against customers' databases (REPORTING_QUERY_CONCURRENCY slots per worker). */
    query: `${prefix}-query`,
  };
}
export type TaskQueues = ReturnType<typeof taskQueues>;

const MAIN_SUFFIX = '-main';

/**
 * The queues of the deployment whose main queue is `mainQueue`: what workflow code (which runs on
 * main) calls to find the egress queue without carrying it in every input, so runs started before
 * the egress queue existed use it too. A queue not named like a main queue (a test's own) has no
 * siblings: every role is that queue.
 */
export function queuesOfMain(mainQueue: string): TaskQueues {
  if (!mainQueue.endsWith(MAIN_SUFFIX)) return { main: mainQueue, egress: mainQueue, render: mainQueue, query: mainQueue };
  return taskQueues(mainQueue.slice(0, -MAIN_SUFFIX.length));
}

/** The start of every report schedule's Temporal Schedule id. */
export const REPORT_SCHEDULE_PREFIX = 'report-schedule-';

export const scheduleIds = {
  /** Retention of artefacts and restart of stranded work, every DOCUMENT_MAINTENANCE_INTERVAL_SECONDS. */
  maintenance: (prefix: string) => `${prefix}-maintenance`,
  /**
   * A report schedule's Temporal Schedule (docs/reporting.md "Temporal workflows"); the reconciler finds them by this
   * prefix.
   */
  reportSchedule: (scheduleId: string) => `${REPORT_SCHEDULE_PREFIX}${scheduleId}`,
};

/**
 * Names of the signals sent from outside workflow code by platform/ (which imports no workflow module
 * as a value); the workflows define their signals with these (the signals modules beside them).
 */
export const signalNames = {
  /** A recorded approval decision: the run's workflow looks again (workflows/flow/approval-signals.ts). */
  approvalDecision: 'approvalDecision',
  /** A run entered review in `digest` mode (workflows/flow/review-digest.workflow.ts). */
  reviewPending: 'reviewPending',
  /** A deletion request, signal-with-start (workflows/identity/account-deletion.workflow.ts). */
  deletionRequested: 'deletionRequested',
} as const;

export const workflowIds = {
  /** A document job's workflow: the job id itself. */
  documentJob: (jobId: string) => jobId,
  /** A batch's workflow: the batch id itself (its continued runs keep it). */
  documentBatch: (batchId: string) => batchId,
  accountEmail: (emailId: string) => `account-email-${emailId}`,
  /** The verification e-mail of a sign-up: one per user, so a restart by the maintenance sweep never sends it twice. */
  signupEmail: (userId: string) => `account-email-signup-${userId}`,
  accountDeletion: (userId: string) => `account-deletion-${userId}`,
  teamInvitation: (invitationId: string) => `team-invitation-${invitationId}`,
  /** One delivery's schedule (first attempt and its retries). */
  webhookDelivery: (deliveryId: string) => `webhook-delivery-${deliveryId}`,
  /** The n-th manual retry of a delivery: a new run, so the first one's history stays readable. */
  webhookDeliveryRetry: (deliveryId: string, n: number) => `webhook-delivery-${deliveryId}-retry-${n}`,
  /** A Flow run's workflow: the run id itself (contract §5), so a runId pastes straight into the Web UI. */
  flowRun: (runId: string) => runId,
  /** The review digest timer of a gate: one at a time per gate, started by the first run that enters review. */
  reviewDigest: (gateId: string) => `flow-review-digest-${gateId}`,
  /** A report run's workflow (docs/reporting.md "Temporal workflows"). */
  reportRun: (runId: string) => `report-run-${runId}`,
  /** One datasource call of the API (a test, a schema discovery, a preview) run on the query queue. */
  reportingProbe: (probeId: string) => `reporting-probe-${probeId}`,
  renderPreview: (previewId: string) => `render-preview-${previewId}`,
  /** One report delivery's schedule (first attempt and its automatic retries). */
  reportDelivery: (deliveryId: string) => `report-delivery-${deliveryId}`,
  /** The n-th manual retry of a report delivery. */
  reportDeliveryRetry: (deliveryId: string, n: number) => `report-delivery-${deliveryId}-retry-${n}`,
  /**
   * A report job run's workflow: its reports as child runs, then the bundle (docs/reporting.md "Temporal workflows").
   */
  reportJobRun: (jobRunId: string) => `report-job-run-${jobRunId}`,
  /** The workflows a report schedule starts (`scheduledReportWorkflow`; Temporal appends the start time to this id). */
  reportScheduleRun: (scheduleId: string) => scheduleIds.reportSchedule(scheduleId),
  /** The runs the maintenance schedule starts (Temporal appends the start time to this id). */
  maintenanceRun: (prefix: string) => `${scheduleIds.maintenance(prefix)}-run`,
};

