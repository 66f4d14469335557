import { mapHeaderValues, unsealSecret } from '../../domain/secret-box';
import type { DeliverySource, DeliveryStatus } from '../../domain/webhooks/delivery';
import { webhookDeliveryMachine } from '../../domain/webhooks/delivery-status';
import { modifyReturning, type Queryable } from '../sql';

/**
 * The queries of one delivery attempt (activities/webhooks/attempt-delivery.activity.ts) and of a
 * manual retry, and the only writer of `webhook_deliveries.status` (docs/architecture.md, "State
 * machines"): rows are inserted `pending` (the column default, db/webhooks/deliveries.ts) and moved
 * by conditional UPDATEs from the statuses domain/webhooks/delivery-status.ts allows to reach the target.
 */

export interface DeliveryTargetRow {
  id: string;
  source: DeliverySource;
  status: DeliveryStatus;
  url: string;
  /** The payload's JSON text exactly as stored: the bytes that are sent and signed. */
  body: string;
  eventId: string;
  eventType: string;
  headers: Record<string, string> | null;
  secret: string | null;
  subscriptionId: string | null;
  /** Document deliveries: the subscription's state now (null when it was deleted). */
  subscriptionState: 'active' | 'inactive' | 'deleted' | null;
}

/**
 * Loads a delivery with what its next attempt needs. A document delivery follows its
 * subscription: the current URL and secret, so an owner who fixed a URL and retries reaches it.
 */
export async function loadDeliveryTarget(db: Queryable, deliveryId: string): Promise<DeliveryTargetRow | undefined> {
  const rows: DeliveryTargetRow[] = await db.query(
    `SELECT d.id, d.source, d.status, COALESCE(s.url, d.url) AS url, d.payload::text AS body,
            d.event_id AS "eventId", d.event_type AS "eventType", d.headers,
            COALESCE(d.secret, s.secret) AS secret, d.subscription_id AS "subscriptionId",
            CASE WHEN d.subscription_id IS NULL THEN NULL
                 WHEN s.deleted_at IS NOT NULL THEN 'deleted'
                 WHEN s.is_active THEN 'active' ELSE 'inactive' END AS "subscriptionState"
       FROM webhook_deliveries d
       LEFT JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  const row = rows[0];
  if (!row) return undefined;
  // Stored encrypted (db/secret-columns.ts); a raw query gets no transformer, so decrypt here.
  return { ...row, secret: row.secret === null ? null : unsealSecret(row.secret), headers: mapHeaderValues(row.headers, unsealSecret) ?? null };
}

/** Shows the delivery as in flight while the request runs; a completed one is left alone. */
export async function markDelivering(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET status = 'delivering', next_attempt_at = NULL WHERE id = $1 AND status = ANY($2::text[])`, [
    deliveryId,
    webhookDeliveryMachine.sourcesOf('delivering'),
  ]);
}

export interface AttemptRecord {
  at: Date;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** Status after this attempt: completed, failed, or delivering (a retry is scheduled). */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/**
 * Appends the attempt and moves the status in one statement, so a reader never sees an attempt
 * without its consequence. The number counts every attempt of the delivery, manual retries too. A
 * delivery the table does not let reach `a.status` (one completed meanwhile) records nothing.
 */
export async function recordAttempt(db: Queryable, deliveryId: string, a: AttemptRecord): Promise<number | undefined> {
  const rows = await modifyReturning<{ number: number }>(
    db,
    `UPDATE webhook_deliveries SET
        attempts = attempts || jsonb_build_array(jsonb_build_object(
          'number', jsonb_array_length(attempts) + 1,
          'at', $2::text, 'statusCode', $3::int, 'error', $4::text, 'durationMs', $5::int)),
        url = $6, status = $7, next_attempt_at = $8,
        completed_at = CASE WHEN $7 = 'completed' THEN now() ELSE completed_at END
      WHERE id = $1 AND status = ANY($9::text[])
      RETURNING jsonb_array_length(attempts) AS number`,
    [deliveryId, a.at.toISOString(), a.statusCode, a.error, Math.round(a.durationMs), a.url, a.status, a.nextAttemptAt, webhookDeliveryMachine.sourcesOf(a.status)],
  );
  return rows[0]?.number;
}

/**
 * A delivery workflow cancelled between attempts (its Flow run was cancelled): the row must not
 * stay "delivering" forever, and failed is what a manual retry can pick up again.
 */
export async function abandonDelivery(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = $1 AND status = ANY($2::text[])`,
    [deliveryId, webhookDeliveryMachine.sourcesOf('failed', ['pending', 'delivering'])],
  );
}

/**
 * Manual retry (docs/webhooks.md): `failed → pending`, counting it, for a delivery of this project
 * and source whose subscription (if any) is still active. One conditional UPDATE: of two concurrent
 * retries only one moves the row. Answers the retry number, or undefined when nothing moved.
 */
export async function reopenDelivery(db: Queryable, input: { deliveryId: string; projectId: string; source: DeliverySource }): Promise<number | undefined> {
  const rows = await modifyReturning<{ manual_retries: number }>(
    db,
    `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = NULL, manual_retries = manual_retries + 1
      WHERE d.id = $1 AND d.project_id = $2 AND d.source = $3 AND d.status = ANY($4::text[])
        AND (d.subscription_id IS NULL OR EXISTS (
              SELECT 1 FROM webhook_subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NULL AND s.is_active))
      RETURNING d.manual_retries`,
    [input.deliveryId, input.projectId, input.source, webhookDeliveryMachine.sourcesOf('pending')],
  );
  return rows[0]?.manual_retries;
}

/**
 * A pending delivery whose workflow could not be started (a test event, a manual retry): `failed`,
 * unless something picked it up meanwhile. Left pending it could never be retried (retry takes failed ones).
 */
export async function failUnstartedDelivery(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1 AND status = ANY($2::text[])`, [deliveryId, webhookDeliveryMachine.sourcesOf('failed', ['pending'])]);
}
