import { createHash } from 'node:crypto';
import { mapHeaderValues, sealSecret } from '../../domain/secret-box';
import type { DeliverySource, WebhookEnvelope } from '../../domain/webhooks/delivery';
import type { Queryable } from '../sql';

/**
 * Creating delivery records: the one step between "an event happened" and "its deliveries are
 * durable". Ids are derived from (project, source, event id, target), so calling this again for
 * the same event (a retried activity, a replayed request) finds the same rows instead of adding
 * duplicates; the delivery workflow ids built from them dedupe the same way.
 */

/** A Flow delivery channel (spec, Gate `deliveryChannels`), or any explicit target. */
export interface DeliveryTarget {
  url: string;
  /** Signing secret of the channel; stored on the delivery row, encrypted (domain/secret-box.ts). */
  secret: string;
  /** Extra request headers; the service's own headers always win. */
  headers?: Record<string, string>;
}

export interface DocumentEventInput {
  projectId: string;
  source: 'document';
  /** The envelope sent as the body; `id` is the X-Service-Event-Id and must be unique per event. */
  event: WebhookEnvelope;
}

export interface FlowEventInput {
  projectId: string;
  source: 'flow';
  runId: string;
  /** `id` becomes X-Service-Event-Id (the run id, per spec), `type` X-Service-Event-Type. */
  event: WebhookEnvelope;
  /** The JSON body to send instead of the envelope (Flow's `{event, run, gate, timestamp}`). */
  body?: Record<string, unknown>;
  targets: DeliveryTarget[];
}

export type PrepareDeliveriesInput = DocumentEventInput | FlowEventInput;

/** One row to insert; `key` names the target within the event (subscription id, channel index). */
export interface NewDelivery {
  projectId: string;
  source: DeliverySource;
  key: string;
  subscriptionId?: string;
  runId?: string;
  url: string;
  secret?: string;
  headers?: Record<string, string>;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

const NAMESPACE = Buffer.from('6f0f3e1c8a4b4e52a1f07d35c2b9e4aa', 'hex');

/** RFC 9562 name-based UUID (version 5, SHA-1) in a namespace of our own. */
export function deliveryIdFor(projectId: string, source: DeliverySource, eventId: string, key: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(JSON.stringify([projectId, source, eventId, key])).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Inserts the rows (status pending) and returns their ids in input order, including the ids of
 * rows that existed already. The payload is stored as the exact JSON text that will be sent.
 */
export async function createDeliveries(db: Queryable, rows: NewDelivery[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => deliveryIdFor(r.projectId, r.source, r.eventId, r.key));
  const params: unknown[] = [];
  const values = rows.map((r, i) => {
    const at = params.length;
    // Secret and header values are encrypted at rest, as the entity's transformers would (db/secret-columns.ts).
    params.push(ids[i], r.projectId, r.source, r.subscriptionId ?? null, r.runId ?? null, r.url, r.secret ? sealSecret(r.secret) : null);
    params.push(r.headers ? JSON.stringify(mapHeaderValues(r.headers, sealSecret)) : null, r.eventId, r.eventType, JSON.stringify(r.payload));
    const p = (n: number) => `$${at + n}`;
    return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}::jsonb, ${p(9)}, ${p(10)}, ${p(11)}::json)`;
  });
  await db.query(
    `INSERT INTO webhook_deliveries (id, project_id, source, subscription_id, run_id, url, secret, headers, event_id, event_type, payload)
     VALUES ${values.join(', ')}
     ON CONFLICT (id) DO NOTHING`,
    params,
  );
  return ids;
}

/**
 * The deliveries of one event. Documents: one per active subscription of the project whose
 * `events` include the type. Flow: one per target (delivery channel) of the run.
 * Returns the delivery ids, to hand to `deliverDocumentEvent` or `dispatchDeliveries` (workflows/webhooks).
 */
export async function prepareEventDeliveries(db: Queryable, input: PrepareDeliveriesInput): Promise<string[]> {
  const { projectId, event } = input;
  if (input.source === 'flow') {
    return createDeliveries(
      db,
      input.targets.map((t, i) => ({
        projectId,
        source: 'flow' as const,
        key: `channel-${i}`,
        runId: input.runId,
        url: t.url,
        secret: t.secret,
        headers: t.headers,
        eventId: event.id,
        eventType: event.type,
        payload: input.body ?? envelope(event),
      })),
    );
  }
  const subscriptions: Array<{ id: string; url: string }> = await db.query(
    `SELECT id, url FROM webhook_subscriptions
      WHERE project_id = $1 AND is_active AND deleted_at IS NULL AND $2 = ANY (events)
      ORDER BY created_at, id`,
    [projectId, event.type],
  );
  return createDeliveries(
    db,
    subscriptions.map((s) => ({
      projectId,
      source: 'document' as const,
      key: s.id,
      subscriptionId: s.id,
      url: s.url,
      eventId: event.id,
      eventType: event.type,
      payload: envelope(event),
    })),
  );
}

/** The spec's envelope with its fields in the spec's order, whatever order the caller built them in. */
export function envelope(event: WebhookEnvelope): WebhookEnvelope {
  return { id: event.id, type: event.type, timestamp: event.timestamp, data: event.data };
}
