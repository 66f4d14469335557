import { Context } from '@temporalio/activity';
import pLimit from 'p-limit';
import { EVENT_DELIVERY_SOCKETS, retrySchedule, type DeliveryScheduleInput } from '../../domain/webhooks/delivery';
import type { AttemptDeliveryInput, AttemptDeliveryResult } from './attempt-delivery.activity';

/** Starts a delivery's own workflow (`webhook-delivery-<id>`) for its retries; an "already started" answer counts as started. */
export type StartDeliveryRetry = (delivery: { projectId: string | null; input: Required<DeliveryScheduleInput> }) => Promise<void>;

export interface AttemptEventDeliveriesDeps {
  attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptDeliveryResult>;
  startDeliveryRetry: StartDeliveryRetry;
}

export interface AttemptEventDeliveriesInput {
  deliveryIds: string[];
  /** WEBHOOK_RETRY_DELAYS, from the calling workflow's input. */
  retryDelaysMs: number[];
  /** The deliveries' project: the search attribute and fairness key of their retries' workflows. */
  projectId: string | null;
}

export interface AttemptEventDeliveriesResult {
  delivered: number;
  /** Deliveries whose retries now run in their own workflow. */
  retrying: number;
  failed: number;
}

/**
 * The first attempts of a batch group's event deliveries in one egress activity (docs/webhooks.md
 * "Retries"), EVENT_DELIVERY_SOCKETS at a time, so a batch's workflow history grows by three events
 * per group whatever the number of subscriptions, and one batch holds a bounded share of the egress
 * queue's sockets. A delivery whose attempt asks for a retry (or whose attempt failed for want of the
 * database) gets its own `deliverWebhookWorkflow`, started here through the client: a workflow of its
 * own, not a child the batch would have to count.
 *
 * Progress is heartbeated (the ids done, retries started): a retry of this activity after a worker
 * died goes on with the rest instead of posting again what was posted.
 */
export function createAttemptEventDeliveriesActivity(deps: AttemptEventDeliveriesDeps) {
  return async function attemptEventDeliveries(input: AttemptEventDeliveriesInput): Promise<AttemptEventDeliveriesResult> {
    const ctx = Context.current();
    const done = new Set<string>(Array.isArray(ctx.info.heartbeatDetails) ? (ctx.info.heartbeatDetails as string[]) : []);
    const delays = retrySchedule(input.retryDelaysMs);
    const result: AttemptEventDeliveriesResult = { delivered: 0, retrying: 0, failed: 0 };
    const todo = input.deliveryIds.filter((id) => !done.has(id));
    const retry = (deliveryId: string, startAttempt: number) =>
      deps.startDeliveryRetry({ projectId: input.projectId, input: { deliveryId, retryDelaysMs: input.retryDelaysMs, startAttempt } });

    const deliverOne = async (deliveryId: string) => {
      let outcome: AttemptDeliveryResult['outcome'] | 'error';
      try {
        outcome = (await deps.attemptDelivery({ deliveryId, attempt: 1, retryInMs: delays[0] })).outcome;
      } catch (err) {
        // Not the receiver's answer: the database failed around the attempt. The delivery's own
        // workflow tries it from the start and fails visibly if it must.
        ctx.log.warn('first webhook attempt failed; starting the delivery workflow', { deliveryId, error: String(err) });
        outcome = 'error';
      }
      if (outcome === 'error') {
        await retry(deliveryId, 1);
        result.retrying += 1;
      } else if (outcome === 'retry' && delays.length > 0) {
        await retry(deliveryId, 2);
        result.retrying += 1;
      } else if (outcome === 'delivered') {
        result.delivered += 1;
      } else {
        // Refused, or a retry with no delay configured: the record says failed.
        result.failed += 1;
      }
      done.add(deliveryId);
      ctx.heartbeat([...done]);
    };

    // Cancelled (a stopping worker's grace ran out): no new attempt begins, those in flight end within
    // their 10 s budget, and the retry on another worker goes on from the heartbeated progress.
    const limit = pLimit(EVENT_DELIVERY_SOCKETS);
    await Promise.all(todo.map((id) => limit(async () => (ctx.cancellationSignal.aborted ? undefined : deliverOne(id)))));
    if (ctx.cancellationSignal.aborted) await ctx.cancelled;
    return result;
  };
}
