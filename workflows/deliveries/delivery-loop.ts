import { CancellationScope, isCancellation, log, sleep } from '@temporalio/workflow';
import type { DeliveryAttemptInput, DeliveryAttemptResult } from '../../domain/deliveries/attempt';
import { retrySchedule } from '../../domain/webhooks/delivery';

/** What a delivery kind gives the loop: its attempt and abandon activities (their names are in the stored histories). */
export interface DeliveryKind {
  /** Names the kind in the log ("webhook", "report"). */
  name: string;
  attempt(input: DeliveryAttemptInput): Promise<DeliveryAttemptResult>;
  abandon(input: { deliveryId: string }): Promise<void>;
}

/**
 * The one delivery loop (docs/webhooks.md "Retries"; docs/reporting.md "Deliveries"), run by
 * deliverWebhookWorkflow and deliverReportWorkflow with their own activities. The workflow owns the
 * schedule like svix's worker: each attempt is one activity that sends, records itself and returns an
 * outcome; on a retryable failure the workflow sleeps the next delay (or a longer Retry-After), a
 * durable timer. Delivered completes, permanent (or a retry past the last delay) fails.
 *
 * `startAttempt` above 1 (a document event whose attempt 1 was made elsewhere) first waits the delay
 * that attempt announced. Cancelled (with a Flow run or a report run), it marks the record failed,
 * where a manual retry can find it.
 */
export async function deliveryLoop(kind: DeliveryKind, input: { deliveryId: string; retryDelaysMs?: number[]; startAttempt?: number }): Promise<'completed' | 'failed'> {
  const { deliveryId } = input;
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
      const result = await kind.attempt({ deliveryId, attempt, retryInMs });
      if (result.outcome === 'delivered') return 'completed';
      if (result.outcome === 'permanent' || retryInMs === undefined) {
        log.info(`${kind.name} delivery failed`, { deliveryId, attempt, error: result.error });
        return 'failed';
      }
      await sleep(result.retryAfterMs ?? retryInMs);
    }
  } catch (err) {
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => kind.abandon({ deliveryId }));
    throw err;
  }
}
