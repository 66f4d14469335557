import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ChildWorkflowCancellationType, ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { DeliveryFinalStatus } from '../../domain/webhooks/delivery';
import { workflowIds } from '../../domain/temporal-names';
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
 */
export async function dispatchDeliveries(deliveryIds: string[], retryDelaysMs: number[], opts: DispatchOptions & { wait: true }): Promise<DeliveryFinalStatus[]>;
export async function dispatchDeliveries(deliveryIds: string[], retryDelaysMs: number[], opts: DispatchOptions & { wait: false }): Promise<void>;
export async function dispatchDeliveries(deliveryIds: string[], retryDelaysMs: number[], opts: DispatchOptions): Promise<DeliveryFinalStatus[] | void> {
  const started = await Promise.all(
    deliveryIds.map(async (deliveryId) => {
      try {
        return await startChild(deliverWebhookWorkflow, {
          workflowId: workflowIds.webhookDelivery(deliveryId),
          args: [{ deliveryId, retryDelaysMs }],
          ...(opts.taskQueue ? { taskQueue: opts.taskQueue } : {}),
          // Left alone when the parent closes, unless the parent waits for the outcome anyway.
          parentClosePolicy: opts.wait ? ParentClosePolicy.REQUEST_CANCEL : ParentClosePolicy.ABANDON,
          cancellationType: opts.wait ? ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED : ChildWorkflowCancellationType.ABANDON,
          typedSearchAttributes: [
            { key: SA_KIND, value: 'webhook-delivery' },
            { key: SA_ENTITY_ID, value: deliveryId },
            ...(opts.projectId ? [{ key: SA_PROJECT_ID, value: opts.projectId }] : []),
          ],
        });
      } catch (err) {
        // Already running (ids are derived from the event, so a repeated dispatch finds the first
        // one): that delivery is under way. Waiting callers need a child they own, so they see the error.
        if (!opts.wait && err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
        throw err;
      }
    }),
  );
  if (!opts.wait) return;
  return Promise.all(started.map((child) => child!.result()));
}
