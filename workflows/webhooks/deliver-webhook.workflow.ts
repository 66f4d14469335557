import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks';
import type { DeliveryFinalStatus, DeliveryScheduleInput } from '../../domain/webhooks/delivery';
import { deliveryLoop } from '../deliveries/delivery-loop';
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
 * Delivers one webhook (spec, Events: retry policy) through the one delivery loop
 * (workflows/deliveries/delivery-loop.ts): 2xx completes, 4xx (or a refused target) fails at once,
 * and 5xx or network errors fail after the last retry. Returns the final status, which Flow runs wait for.
 *
 * A document event's retries start at `startAttempt: 2` (its first attempt was an activity of the
 * document's workflow, deliverDocumentEvent in dispatch-deliveries.ts): the run begins with the wait that
 * attempt 1 announced as the record's `nextAttemptAt`.
 */
export async function deliverWebhookWorkflow(input: DeliveryScheduleInput): Promise<DeliveryFinalStatus> {
  return deliveryLoop({ name: 'webhook', attempt: attemptDelivery, abandon: abandonWebhookDelivery }, input);
}
