import { CancellationScope, isCancellation, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks';
import { retrySchedule, type DeliveryFinalStatus, type DeliveryScheduleInput } from '../../domain/webhooks/delivery';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';

const { attemptDelivery } = proxyEgressActivities<WebhookActivities>({
  // The HTTP request has its own 10 s budget; the rest is two small database writes.
  startToCloseTimeout: '1 minute',
  // Only infrastructure failures reach this policy (receiver failures are returned as outcomes):
  // a database outage is waited out instead of losing the delivery.
  retry: RETRY.delivery,
});
const { abandonWebhookDelivery } = proxyActivities<WebhookActivities>({ startToCloseTimeout: '1 minute', retry: RETRY.delivery });

/**
 * Delivers one webhook (spec, Events: retry policy). The workflow owns the schedule like svix's
 * worker: each attempt is one activity that records itself and returns an outcome; on a
 * retryable failure the workflow sleeps the next delay, a durable timer that survives restarts.
 * 2xx completes, 4xx (or a refused target) fails at once, and 5xx or network errors fail after
 * the last retry. Returns the final status, which Flow runs wait for.
 *
 * A document event's retries start at `startAttempt: 2` (its first attempt was an activity of the
 * document's workflow, deliverDocumentEvent in dispatch-deliveries.ts): the run begins with the wait that
 * attempt 1 announced as the record's `nextAttemptAt`.
 */
export async function deliverWebhookWorkflow(input: DeliveryScheduleInput): Promise<DeliveryFinalStatus> {
  const delays = retrySchedule(input.retryDelaysMs);
  // Inputs from before startAttempt begin at 1, and so make the commands they made then.
  const first = Number.isSafeInteger(input.startAttempt) && input.startAttempt! > 1 ? input.startAttempt! : 1;
  try {
    if (first > 1) {
      const wait = delays[first - 2];
      // No retry left after the attempt made elsewhere: that attempt already recorded the failure.
      if (wait === undefined) return 'failed';
      await sleep(wait);
    }
    for (let attempt = first; ; attempt += 1) {
      const retryInMs = delays[attempt - 1];
      const result = await attemptDelivery({ deliveryId: input.deliveryId, attempt, retryInMs });
      if (result.outcome === 'delivered') return 'completed';
      if (result.outcome === 'permanent' || retryInMs === undefined) {
        log.info('webhook delivery failed', { deliveryId: input.deliveryId, attempt, error: result.error });
        return 'failed';
      }
      await sleep(retryInMs);
    }
  } catch (err) {
    // Cancelled with its parent (a Flow run): say so on the record, where a manual retry can find it.
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => abandonWebhookDelivery({ deliveryId: input.deliveryId }));
    throw err;
  }
}
