import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Config } from '../domain/config';
import { signalNames, workflowIds, type TaskQueues } from '../domain/temporal-names';
import type { JobWorkflowOptions } from '../workflows/documents/process-job';
import type { FlowRunInput } from '../workflows/flow/flow-run.workflow';
import type { ReportRunInput } from '../workflows/reporting/report-run.workflow';
import type { ReportJobRunInput } from '../workflows/reporting/report-job-run.workflow';
import type { AccountDeletionInput, DeletionRequest } from '../domain/identity/account-deletion';
import type { ReviewDigestInput } from '../workflows/flow/review-digest.workflow';
import type { AccountEmailInput } from '../workflows/identity/account-email.workflow';
import type { DeliverWebhookInput, DeliveryScheduleInput } from '../domain/webhooks/delivery';
import { startWorkflow } from './start-workflow';

/**
 * Every workflow the service starts from outside a workflow, one launcher each, for the API and the
 * worker alike (the worker restarts stranded work with the same launchers). Each fills the config
 * its workflow needs into the input, where the workflow's type makes it required, and takes its
 * id from `workflowIds`. They throw when Temporal refuses or cannot be reached; what that means
 * (retry, undo, leave it to the maintenance sweep) is the caller's decision.
 */
export interface WorkflowStartDeps {
  temporal: Client;
  taskQueues: TaskQueues;
  config: { webhooks: Pick<Config['webhooks'], 'retryDelaysMs'>; documents: Pick<Config['documents'], 'batchConcurrency' | 'batchChunkSize'> };
}

/** What starting a report run needs: the client, the queues and REPORT_DELIVERY_RETRY_DELAYS. */
export type ReportRunStartDeps = Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'> & { config: { reporting: Pick<Config['reporting'], 'deliveryRetryDelaysMs'> } };

/** A report run workflow's input (started here, or as the child of a schedule's or a job's workflow). */
function reportRunInput(deps: Pick<ReportRunStartDeps, 'taskQueues' | 'config'>, runId: string): ReportRunInput {
  return { runId, queryTaskQueue: deps.taskQueues.query, renderTaskQueue: deps.taskQueues.render, deliveryRetryDelaysMs: deps.config.reporting.deliveryRetryDelaysMs };
}

/** What every document job's workflow needs from the config (single jobs and batches). */
function jobWorkflowOptions(deps: Pick<WorkflowStartDeps, 'taskQueues' | 'config'>): JobWorkflowOptions {
  return { renderTaskQueue: deps.taskQueues.render, webhookRetryDelaysMs: deps.config.webhooks.retryDelaysMs };
}

/**
 * A job's workflow (id = job id) with REJECT_DUPLICATE, so a second start (the API and the outbox
 * sweep racing, even after the first run closed) never runs the job twice; a retry is a new job.
 */
export function startDocumentJob(deps: WorkflowStartDeps, job: { id: string; projectId: string }): Promise<void> {
  return startWorkflow(deps.temporal, 'generateDocumentWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.documentJob(job.id),
    args: [{ jobId: job.id, ...jobWorkflowOptions(deps) }],
    kind: 'document',
    projectId: job.projectId,
    entityId: job.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/** A merge job's workflow (id = job id; POST /api/documents/merge), REJECT_DUPLICATE like a job's. */
export function startMergeJob(deps: WorkflowStartDeps, job: { id: string; projectId: string }): Promise<void> {
  return startWorkflow(deps.temporal, 'mergeDocumentWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.documentJob(job.id),
    args: [{ jobId: job.id, projectId: job.projectId, ...jobWorkflowOptions(deps) }],
    kind: 'document',
    projectId: job.projectId,
    entityId: job.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/** A batch's workflow (id = batch id), REJECT_DUPLICATE like a job's. */
export function startDocumentBatch(deps: WorkflowStartDeps, batch: { id: string; projectId: string }): Promise<void> {
  const { batchConcurrency, batchChunkSize } = deps.config.documents;
  return startWorkflow(deps.temporal, 'generateBatchWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.documentBatch(batch.id),
    args: [{ batchId: batch.id, concurrency: batchConcurrency, chunkSize: batchChunkSize, ...jobWorkflowOptions(deps) }],
    kind: 'batch',
    projectId: batch.projectId,
    entityId: batch.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/** The configuration part of every Flow run workflow's input, the same from the API and the worker sweep. */
export function flowRunWorkflowInput(deps: Pick<WorkflowStartDeps, 'taskQueues' | 'config'>): Omit<FlowRunInput, 'runId'> {
  return { retryDelaysMs: deps.config.webhooks.retryDelaysMs, renderTaskQueue: deps.taskQueues.render };
}

/**
 * A Flow run's workflow (id = run id) with REJECT_DUPLICATE, so a second start (the API and the
 * sweep racing) fails as already started instead of running the run twice.
 */
export function startFlowRun(deps: { temporal: Client; taskQueue: string }, run: { id: string; projectId: string }, config: Omit<FlowRunInput, 'runId'>): Promise<void> {
  return startWorkflow(deps.temporal, 'flowRunWorkflow', {
    taskQueue: deps.taskQueue,
    workflowId: workflowIds.flowRun(run.id),
    args: [{ runId: run.id, ...config }],
    kind: 'flow-run',
    projectId: run.projectId,
    entityId: run.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/**
 * An account e-mail (verification, password reset, sign-in lock notice): the workflow mints the
 * token and sends it, retried through SMTP outages. A fresh id each time unless the caller names
 * one (a sign-up's verification: `workflowIds.signupEmail`, so a restart never sends it twice).
 */
export function startAccountEmail(deps: Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'>, input: AccountEmailInput, workflowId?: string): Promise<void> {
  const emailId = randomUUID();
  return startWorkflow(deps.temporal, 'sendAccountEmailWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowId ?? workflowIds.accountEmail(emailId),
    args: [input],
    kind: `account-email:${input.purpose}`,
    // A reset asked for by address has no account yet (the activity looks it up): the e-mail's own id.
    entityId: input.userId ?? emailId,
  });
}

/** The workflow that owns an account's grace period and purge (id per user). */
export function startAccountDeletion(deps: Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'>, input: Required<AccountDeletionInput>, purgeAt: Date): Promise<void> {
  const request: DeletionRequest = { requestToken: input.requestToken, purgeAt: purgeAt.toISOString() };
  return startWorkflow(deps.temporal, 'deleteAccountWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.accountDeletion(input.userId),
    args: [input],
    kind: 'account-deletion',
    entityId: input.userId,
    // The request reaches the run already waiting (an older request's, its restore signal lost) instead of terminating it.
    signal: { name: signalNames.deletionRequested, args: [request] },
  });
}

/** The invitation e-mail (the activity mints the accept token). */
export function startInvitationEmail(deps: Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'>, invitation: { id: string; projectId: string }): Promise<void> {
  return startWorkflow(deps.temporal, 'sendInvitationEmailWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.teamInvitation(invitation.id),
    args: [{ invitationId: invitation.id }],
    kind: 'team-invitation',
    projectId: invitation.projectId,
    entityId: invitation.id,
  });
}

/**
 * A delivery's workflow started from outside a workflow: the test event (`workflowIds.webhookDelivery`),
 * manual retries (`workflowIds.webhookDeliveryRetry`) and the events of work the maintenance sweep
 * ended. Other event deliveries are made by the job's or run's workflow (workflows/webhooks/dispatch-deliveries.ts).
 */
export function startWebhookDelivery(
  deps: Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'>,
  // Required here although the workflow falls back to the spec's delays: every start passes the configured ones.
  delivery: { projectId: string | null; workflowId: string; input: Required<DeliverWebhookInput> & DeliveryScheduleInput; once?: boolean },
): Promise<void> {
  return startWorkflow(deps.temporal, 'deliverWebhookWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: delivery.workflowId,
    args: [delivery.input],
    kind: 'webhook-delivery',
    ...(delivery.projectId ? { projectId: delivery.projectId } : {}),
    entityId: delivery.input.deliveryId,
    // `once`: a second start of that id is refused even after the first run closed (a retried sweep).
    ...(delivery.once ? { workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE } : {}),
  });
}

/**
 * The retries of a document event's delivery whose first attempt was made by a batch group's
 * activity (activities/webhooks/attempt-event-deliveries.activity.ts): its own workflow
 * `webhook-delivery-<id>`, beginning at `startAttempt`. Started already (the activity retried) counts as started.
 */
export async function startDeliveryRetries(deps: Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'>, delivery: { projectId: string | null; input: Required<DeliveryScheduleInput> }): Promise<void> {
  try {
    await startWebhookDelivery(deps, { projectId: delivery.projectId, workflowId: workflowIds.webhookDelivery(delivery.input.deliveryId), input: delivery.input });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * A report run's workflow (`report-run-<runId>`, docs/reporting.md "Temporal workflows") with REJECT_DUPLICATE, so the
 * API and a restart of stranded runs cannot run it twice.
 */
export function startReportRun(deps: ReportRunStartDeps, run: { id: string; projectId: string }): Promise<void> {
  const args: [ReportRunInput] = [reportRunInput(deps, run.id)];
  return startWorkflow(deps.temporal, 'reportRunWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.reportRun(run.id),
    args,
    kind: 'report-run',
    projectId: run.projectId,
    entityId: run.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/** A report job run's workflow `report-job-run-<id>` (the API, and the maintenance sweep's restart). */
export function startJobRunWorkflow(deps: ReportRunStartDeps, jobRun: { id: string; projectId: string }): Promise<void> {
  const args: [ReportJobRunInput] = [{ jobRunId: jobRun.id, queryTaskQueue: deps.taskQueues.query, renderTaskQueue: deps.taskQueues.render, deliveryRetryDelaysMs: deps.config.reporting.deliveryRetryDelaysMs }];
  return startWorkflow(deps.temporal, 'reportJobRunWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.reportJobRun(jobRun.id),
    args,
    kind: 'report-job-run',
    projectId: jobRun.projectId,
    entityId: jobRun.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/**
 * A manual retry of a report delivery, `report-delivery-<id>-retry-<n>`, with the full retry
 * schedule again; REJECT_DUPLICATE, so the API and the outbox sweep starting retry `n` twice run it once.
 */
export function startReportDeliveryRetry(deps: ReportRunStartDeps, retry: { deliveryId: string; retry: number; projectId: string }): Promise<void> {
  return startWorkflow(deps.temporal, 'deliverReportWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.reportDeliveryRetry(retry.deliveryId, retry.retry),
    args: [{ deliveryId: retry.deliveryId, retryDelaysMs: deps.config.reporting.deliveryRetryDelaysMs }],
    kind: 'report-delivery',
    projectId: retry.projectId,
    entityId: retry.deliveryId,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/**
 * Tells a gate's review digest (`flow-review-digest-<gateId>`) that a run entered review: the signal
 * reaches the digest if it runs, else starts it (workflows/flow/review-digest.workflow.ts).
 */
export function signalReviewDigest(deps: Pick<WorkflowStartDeps, 'temporal' | 'taskQueues'>, digest: ReviewDigestInput & { projectId: string }): Promise<void> {
  const { projectId, ...input } = digest;
  return startWorkflow(deps.temporal, 'flowReviewDigestWorkflow', {
    taskQueue: deps.taskQueues.main,
    workflowId: workflowIds.reviewDigest(input.gateId),
    args: [input],
    kind: 'flow-review-digest',
    projectId,
    entityId: input.gateId,
    signal: { name: signalNames.reviewPending, args: [] },
  });
}
