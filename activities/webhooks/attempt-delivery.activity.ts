import type { DataSource } from 'typeorm';
import { completeRunIfDelivered } from '../../db/flow/run-state';
import { currentFlowChannel } from '../../db/flow/delivery-channel';
import { abandonDelivery, markDelivering, recordAttempt } from '../../db/deliveries/delivery-state';
import { loadDeliveryTarget, type DeliveryTargetRow } from '../../db/webhooks/delivery-attempts';
import type { DeliveryAttemptInput, DeliveryAttemptResult } from '../../domain/deliveries/attempt';
import { USER_AGENTS } from '../../domain/webhooks/delivery';
import type { OutboundGuard } from '../../adapters/http/outbound';
import { sendSignedEvent } from '../../adapters/http/send-webhook';

export interface AttemptDeliveryDeps {
  db: DataSource;
  /** Outbound guard for webhook targets: no redirects followed, OUTBOUND_ALLOWLIST applied. */
  webhookGuard: OutboundGuard;
}

export type AttemptDeliveryInput = DeliveryAttemptInput;
export type AttemptDeliveryResult = DeliveryAttemptResult;

/**
 * One delivery attempt: POST the stored body with the spec's headers and a fresh signature,
 * record the attempt, and say what the schedule should do. Delivery failures are returned, never
 * thrown; only infrastructure failures (the database) throw, and Temporal retries those.
 *
 * At-least-once: a crash between the POST and the record repeats the POST. Receivers dedupe on
 * X-Service-Event-Id (docs/webhooks.md).
 */
export function createAttemptDeliveryActivity(deps: AttemptDeliveryDeps) {
  return async function attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptDeliveryResult> {
    const target = await withCurrentChannel(deps.db, await loadDeliveryTarget(deps.db, input.deliveryId));
    // Deleted with its project or subscription: nothing left to deliver or to record on.
    if (!target) return { outcome: 'permanent', error: 'Delivery no longer exists' };
    // A repeated workflow run (or manual retry racing a success) must not send twice.
    if (target.status === 'completed') {
      // …but a Flow run left `failed` by a crash right after the record still gets completed.
      if (target.source === 'flow') await completeRunIfDelivered(deps.db, target.id);
      return { outcome: 'delivered' };
    }

    const at = new Date();
    const refusal = refusalOf(target);
    if (refusal) {
      await recordAttempt(deps.db, TABLE, target.id, { attempt: attemptOf(at, { statusCode: null, error: refusal, durationMs: 0 }), status: 'failed', nextAttemptAt: null, set: { url: target.url } });
      return { outcome: 'permanent', error: refusal };
    }

    await markDelivering(deps.db, TABLE, target.id);
    const result = await sendSignedEvent(deps.webhookGuard, {
      url: target.url,
      body: target.body,
      secret: target.secret!,
      eventId: target.eventId,
      eventType: target.eventType,
      userAgent: USER_AGENTS[target.source],
      headers: target.headers,
      at,
    });

    const willRetry = result.outcome === 'retry' && input.retryInMs !== undefined;
    const status = result.outcome === 'delivered' ? 'completed' : willRetry ? 'delivering' : 'failed';
    await recordAttempt(deps.db, TABLE, target.id, {
      attempt: attemptOf(at, result),
      status,
      nextAttemptAt: willRetry ? new Date(Date.now() + input.retryInMs!) : null,
      set: { url: target.url },
    });
    // A Flow delivery fixed by a manual retry after its run ended `failed` completes the run (docs/flow.md).
    if (status === 'completed' && target.source === 'flow') await completeRunIfDelivered(deps.db, target.id);
    return {
      outcome: result.outcome,
      ...(result.statusCode !== null ? { statusCode: result.statusCode } : {}),
      ...(result.error !== null ? { error: result.error } : {}),
    };
  };
}

const TABLE = 'webhook_deliveries';

/** Contract §5 attempt (its number is given by the record): `statusCode` null when no HTTP answer came back. */
const attemptOf = (at: Date, r: { statusCode: number | null; error: string | null; durationMs: number }) => ({
  at: at.toISOString(),
  statusCode: r.statusCode,
  error: r.error,
  durationMs: Math.round(r.durationMs),
});

/**
 * A Flow delivery goes to its gate channel as it is now, like a document delivery follows its
 * subscription: a retry after the channel was fixed reaches the new URL with the channel's
 * current secret and headers; a channel removed since is not sent to (docs/flow.md "Delivery
 * channels: checked when saved and when used").
 */
async function withCurrentChannel(db: DataSource, target: DeliveryTargetRow | undefined): Promise<(DeliveryTargetRow & { removed?: boolean }) | undefined> {
  if (!target || target.source !== 'flow' || target.status === 'completed') return target;
  const channel = await currentFlowChannel(db, target.id);
  if (channel === undefined) return target;
  if (channel === 'removed') return { ...target, removed: true };
  return { ...target, url: channel.url, secret: channel.secret, headers: channel.headers ?? null };
}

/** Why a delivery must not be sent at all, recorded as a final attempt so its owner can read it. */
function refusalOf(target: DeliveryTargetRow & { removed?: boolean }): string | undefined {
  if (target.removed) return 'Delivery channel was removed from the gate: not sent';
  if (target.subscriptionState === 'deleted') return 'Subscription was deleted: not sent';
  if (target.subscriptionState === 'inactive') return 'Subscription is inactive: not sent';
  if (!target.secret) return 'No signing secret: not sent';
  return undefined;
}

export function createAbandonDeliveryActivity(deps: Pick<AttemptDeliveryDeps, 'db'>) {
  /** Ends a delivery whose workflow was cancelled, unless it already ended. */
  return async function abandonWebhookDelivery(input: { deliveryId: string }): Promise<void> {
    await abandonDelivery(deps.db, TABLE, input.deliveryId);
  };
}
