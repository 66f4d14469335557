import { mapHeaderValues, unsealSecret } from '../../domain/secret-box';
import type { DeliverySource, DeliveryStatus } from '../../domain/webhooks/delivery';
import type { Queryable } from '../sql';

/**
 * What one webhook delivery attempt (activities/webhooks/attempt-delivery.activity.ts) sends. Rows
 * are inserted `pending` (the column default, db/webhooks/deliveries.ts); their status is moved by
 * db/deliveries/delivery-state.ts, the attempt recorder of both delivery tables.
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
