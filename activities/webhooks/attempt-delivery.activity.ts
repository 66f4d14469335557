import type { DataSource } from 'typeorm';
import { completeRunIfDelivered } from '../../db/flow/run-state';
import { currentFlowChannel } from '../../db/flow/delivery-channel';
import { abandonDelivery, loadDeliveryTarget, markDelivering, recordAttempt, type DeliveryTargetRow } from '../../db/webhooks/delivery-attempts';
import { webhookSignature } from '../../domain/signing';
import { RESERVED_HEADERS, USER_AGENTS, type AttemptOutcome, type DeliveryStatus } from '../../domain/webhooks/delivery';
import type { OutboundGuard } from '../http/outbound';
import { sendWebhook } from './send-webhook';

export interface AttemptDeliveryDeps {
  db: DataSource;
  /** Outbound guard for webhook targets: no redirects followed, OUTBOUND_ALLOWLIST applied. */
  webhookGuard: OutboundGuard;
}

export interface AttemptDeliveryInput {
  deliveryId: string;
  /** 1-based position in this workflow's schedule (logs and history only; records count all attempts). */
  attempt: number;
  /**
   * The wait before the next automatic attempt should this one fail in a retryable way; absent on
   * the last attempt of the schedule, which then ends the delivery as failed.
   */
  retryInMs?: number;
}

export interface AttemptDeliveryResult {
  outcome: AttemptOutcome;
  statusCode?: number;
  error?: string;
}

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
      await recordAttempt(deps.db, target.id, { at, url: target.url, statusCode: null, error: refusal, durationMs: 0, status: 'failed', nextAttemptAt: null });
      return { outcome: 'permanent', error: refusal };
    }

    await markDelivering(deps.db, target.id);
    const timestamp = Math.floor(at.getTime() / 1000);
    const result = await sendWebhook(deps.webhookGuard, {
      url: target.url,
      body: target.body,
      headers: {
        ...extraHeaders(target.headers),
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENTS[target.source],
        // A fresh timestamp per attempt: a retry ten minutes later still passes a receiver's replay window.
        'X-Service-Signature': webhookSignature(target.secret!, timestamp, target.body),
        'X-Service-Timestamp': String(timestamp),
        'X-Service-Event-Id': target.eventId,
        'X-Service-Event-Type': target.eventType,
      },
    });

    const willRetry = result.outcome === 'retry' && input.retryInMs !== undefined;
    const status: DeliveryStatus = result.outcome === 'delivered' ? 'completed' : willRetry ? 'delivering' : 'failed';
    await recordAttempt(deps.db, target.id, {
      at,
      url: target.url,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      status,
      nextAttemptAt: willRetry ? new Date(Date.now() + input.retryInMs!) : null,
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

/** A Flow channel's own headers, minus any that would replace the service's (signature, type…). */
function extraHeaders(headers: Record<string, string> | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!RESERVED_HEADERS.includes(name.toLowerCase()) && typeof value === 'string') out[name] = value;
  }
  return out;
}

export function createAbandonDeliveryActivity(deps: Pick<AttemptDeliveryDeps, 'db'>) {
  /** Ends a delivery whose workflow was cancelled, unless it already ended. */
  return async function abandonWebhookDelivery(input: { deliveryId: string }): Promise<void> {
    await abandonDelivery(deps.db, input.deliveryId);
  };
}
