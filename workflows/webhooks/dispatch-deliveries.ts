import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { CancellationScope, ChildWorkflowCancellationType, ParentClosePolicy, log, startChild, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks';
import { EVENT_DELIVERY_SOCKETS, retrySchedule, type DeliveryFinalStatus, type DeliveryScheduleInput } from '../../domain/webhooks/delivery';
import { workflowIds } from '../../domain/temporal-names';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../shared/search-attributes';
import { deliverWebhookWorkflow } from './deliver-webhook.workflow';

export interface DispatchOptions {
  /**
   * true: wait for every delivery and return the final statuses (Flow runs: a run ends
   * `completed` only when its deliveries did). The deliveries are cancelled with the parent.
   * false: return once every delivery workflow has started; they outlive the parent (a finished
   * document job must not take its pending retries down with it).
   */
  wait: boolean;
  /** FormworkProjectId search attribute of the delivery workflows, for the Web UI. */
  projectId?: string;
  /** Task queue of the delivery workflows; default the caller's (the main queue hosts them). */
  taskQueue?: string;
}

/**
 * Starts `deliverWebhookWorkflow` for each delivery (ids from the prepareEventDeliveries activity)
 * as a child workflow with the id `webhook-delivery-<deliveryId>`. Called from inside a workflow.
 * `retryDelaysMs` is the caller's config.webhooks.retryDelaysMs, passed in its workflow input.
 * Flow runs use it (they wait for the outcomes); document events go through deliverDocumentEvent.
 */
export async function dispatchDeliveries(deliveryIds: string[], retryDelaysMs: number[], opts: DispatchOptions & { wait: true }): Promise<DeliveryFinalStatus[]>;
export async function dispatchDeliveries(deliveryIds: string[], retryDelaysMs: number[], opts: DispatchOptions & { wait: false }): Promise<void>;
export async function dispatchDeliveries(deliveryIds: string[], retryDelaysMs: number[], opts: DispatchOptions): Promise<DeliveryFinalStatus[] | void> {
  const started = await Promise.all(deliveryIds.map((deliveryId) => startDelivery({ deliveryId, retryDelaysMs }, opts)));
  if (!opts.wait) return;
  return Promise.all(started.map((child) => child!.result()));
}

async function startDelivery(input: DeliveryScheduleInput, opts: DispatchOptions) {
  // The delivery belongs to the parent's project: a document's retry child inherits it (the caller passes none).
  const projectId = opts.projectId ?? workflowInfo().typedSearchAttributes.get(SA_PROJECT_ID);
  try {
    return await startChild(deliverWebhookWorkflow, {
      workflowId: workflowIds.webhookDelivery(input.deliveryId),
      args: [input],
      ...(opts.taskQueue ? { taskQueue: opts.taskQueue } : {}),
      // Left alone when the parent closes, unless the parent waits for the outcome anyway.
      parentClosePolicy: opts.wait ? ParentClosePolicy.REQUEST_CANCEL : ParentClosePolicy.ABANDON,
      cancellationType: opts.wait ? ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED : ChildWorkflowCancellationType.ABANDON,
      typedSearchAttributes: [
        { key: SA_KIND, value: 'webhook-delivery' },
        { key: SA_ENTITY_ID, value: input.deliveryId },
        ...(projectId ? [{ key: SA_PROJECT_ID, value: projectId }] : []),
      ],
    });
  } catch (err) {
    // Already running (ids are derived from the event, so a repeated dispatch finds the first
    // one): that delivery is under way. Waiting callers need a child they own, so they see the error.
    if (!opts.wait && err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
    throw err;
  }
}

/**
 * Document workflows (jobs, batches) whose events make their first delivery attempts themselves
 * (deliverDocumentEvent); runs started before it dispatch a delivery workflow per delivery.
 */
export const FIRST_ATTEMPT_INLINE_PATCH = 'document-event-first-attempt-inline';

const { attemptDelivery } = proxyEgressActivities<WebhookActivities>({
  // As in deliverWebhookWorkflow: the request has its own 10 s budget, the rest is two small writes.
  startToCloseTimeout: '1 minute',
  retry: RETRY.delivery,
});

/**
 * A document event's deliveries (document.generated, document.failed, batch.completed) without a
 * workflow each: the first attempt of every delivery is an activity of the calling workflow, all
 * at once, and only a delivery whose attempt asks for a retry gets its `deliverWebhookWorkflow`
 * child (`webhook-delivery-<id>`, abandoned by the parent like dispatchDeliveries' wait: false),
 * which waits the first delay and goes on from attempt 2. Most receivers answer 2xx the first time,
 * so a batch of a thousand documents no longer starts a thousand workflows per subscription.
 *
 * Resolves once every first attempt has ended and every retry's workflow has started; it never
 * waits for a retry. It is not cancelled with its caller: the event has happened (the job
 * finished), and a cancelled attempt would leave a record that says nothing.
 */
export async function deliverDocumentEvent(deliveryIds: string[], retryDelaysMs: number[]): Promise<void> {
  const delays = retrySchedule(retryDelaysMs);
  const deliverOne = async (deliveryId: string): Promise<void> => {
    let startAttempt = 2;
    try {
      const result = await attemptDelivery({ deliveryId, attempt: 1, retryInMs: delays[0] });
      // Delivered or refused: the record says so. A retry with no delay configured was recorded as failed.
      if (result.outcome !== 'retry' || delays.length === 0) return;
    } catch (err) {
      // Not the receiver's answer but an activity that gave up (a non-retryable error): the
      // delivery's own workflow tries it from the start and fails visibly if it must.
      log.warn('first webhook attempt failed; starting the delivery workflow', { deliveryId, error: String(err) });
      startAttempt = 1;
    }
    await startDelivery({ deliveryId, retryDelaysMs, startAttempt }, { wait: false });
  };
  await CancellationScope.nonCancellable(() => Promise.all(deliveryIds.map(deliverOne)));
}

/**
 * Batch workflows whose groups (and the batch's own `batch.completed`) deliver their events through
 * one activity per group (deliverEventsAsGroup); runs started before it make an activity per delivery.
 */
export const GROUP_DELIVERIES_PATCH = 'batch-group-deliveries';

/** The longest one attempt may take (the request's 10 s budget and two small writes), for the group's time limit. */
const ATTEMPT_BOUND_SECONDS = 15;

/**
 * A batch group's event deliveries (or a batch's `batch.completed`) as one egress activity,
 * `attemptEventDeliveries`: EVENT_DELIVERY_SOCKETS first attempts at a time, each retry in its own
 * workflow started by the activity. The batch's history grows by one activity per group, however
 * many subscriptions the project has, and it holds no pending child. Not cancelled with its caller,
 * like deliverDocumentEvent: the documents are done and their events have happened.
 */
export async function deliverEventsAsGroup(deliveryIds: string[], retryDelaysMs: number[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  const { attemptEventDeliveries } = proxyEgressActivities<WebhookActivities>({
    startToCloseTimeout: `${60 + Math.ceil(deliveryIds.length / EVENT_DELIVERY_SOCKETS) * ATTEMPT_BOUND_SECONDS} seconds`,
    // A heartbeat per finished delivery: a worker that died is noticed within the minute, and the retry goes on from its progress.
    heartbeatTimeout: '1 minute',
    retry: RETRY.delivery,
  });
  const projectId = workflowInfo().typedSearchAttributes.get(SA_PROJECT_ID) ?? null;
  await CancellationScope.nonCancellable(() => attemptEventDeliveries({ deliveryIds, retryDelaysMs, projectId }));
}
