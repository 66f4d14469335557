/**
 * Webhook delivery rules shared by the API, the activities and the delivery workflow (spec, Events;
 * contract §4 and §5). Pure and free of Node built-ins: the workflow bundle imports it too.
 */

/** Document events a subscription may ask for (spec, "Document events"). */
export const DOCUMENT_EVENT_TYPES = ['document.generated', 'document.failed', 'batch.completed'] as const;
export type DocumentEventType = (typeof DOCUMENT_EVENT_TYPES)[number];

/** Sent by POST /api/webhooks/:id/test whatever the subscription's `events` say. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Who a delivery belongs to: a document subscription, or a Flow run's delivery channel. */
export type DeliverySource = 'document' | 'flow';

/** Contract §5. pending: not tried yet; delivering: tried, or waiting for its next retry. */
export type DeliveryStatus = 'pending' | 'delivering' | 'completed' | 'failed';
export type DeliveryFinalStatus = 'completed' | 'failed';

/** What one attempt tells the workflow to do next (svix-style: returned, never thrown). */
export type AttemptOutcome = 'delivered' | 'retry' | 'permanent';

/** Contract §5 delivery record attempt. `statusCode` is null when no HTTP answer came back. */
export interface DeliveryAttempt {
  number: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * The spec only names Flow's agent ("the gate component's name with version 1.0"); document
 * deliveries name theirs the same way so a receiver can tell the two apart.
 */
export const USER_AGENTS: Record<DeliverySource, string> = {
  document: 'Formwork-Webhooks/1.0',
  flow: 'Formwork-Flow/1.0',
};

/** Spec, Limits 6: at most 3 retries, after 30 s, 2 min and 10 min. */
const MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [30_000, 120_000, 600_000];

/** One attempt's budget for connecting, sending and reading the answer's head. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Requests a batch group's delivery activity has open at once (attemptEventDeliveries): the sockets one group can hold. */
export const EVENT_DELIVERY_SOCKETS = 8;

/** Headers the service sets on every delivery; a Flow channel's own headers cannot replace them. */
export const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'x-service-signature',
  'x-service-timestamp',
  'x-service-event-id',
  'x-service-event-type',
];

/**
 * Spec retry policy: 2xx delivered; 4xx is the receiver saying no, so retrying cannot help; 5xx
 * may pass later. Anything else (1xx, a 3xx the guard did not follow) counts as permanent: a moved
 * endpoint does not come back within ten minutes, its owner has to update the URL.
 */
export function outcomeForStatus(statusCode: number): AttemptOutcome {
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode >= 500 && statusCode < 600) return 'retry';
  return 'permanent';
}

const UNIT_MS: Record<string, number> = { ms: 1, '': 1, s: 1000, m: 60_000, h: 3_600_000 };

/** One duration: `200` or `200ms` (milliseconds), `30s`, `2m`, `1h`. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/i.exec(text.trim());
  if (!match) throw new RangeError(`not a duration: ${JSON.stringify(text)} (use e.g. 500, 30s, 2m)`);
  const ms = Math.round(Number(match[1]) * UNIT_MS[(match[2] ?? '').toLowerCase()]);
  if (!Number.isSafeInteger(ms)) throw new RangeError(`duration out of range: ${JSON.stringify(text)}`);
  return ms;
}

/** WEBHOOK_RETRY_DELAYS: comma-separated, one to MAX_RETRIES entries ("30s,2m,10m"). */
export function parseRetryDelays(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > MAX_RETRIES || parts.some((p) => p === '')) {
    throw new RangeError(`must list 1 to ${MAX_RETRIES} comma-separated durations`);
  }
  return parts.map(parseDuration);
}

/** Input of deliverWebhookWorkflow: what the API and the activities that start a delivery pass it. */
export interface DeliverWebhookInput {
  deliveryId: string;
  /**
   * Waits before each retry, filled by callers from WEBHOOK_RETRY_DELAYS (config.webhooks.retryDelaysMs).
   * Default the spec's 30 s, 2 min, 10 min; more than three are ignored (spec: at most 3 retries).
   */
  retryDelaysMs?: number[];
}

/**
 * What deliverWebhookWorkflow takes: a launcher's input, or that of a document event's retries. A
 * document event's first attempt is made by the document's own workflow, which starts the delivery
 * workflow only when that attempt asked for a retry, with `startAttempt: 2`. (Not a field of
 * DeliverWebhookInput: launchers pass `Required<DeliverWebhookInput>`, and they start at 1.)
 */
export interface DeliveryScheduleInput extends DeliverWebhookInput {
  /**
   * The attempt this run begins with (default 1, absent from older inputs). Above 1, the run first
   * waits the delay that follows the attempt before it, then carries on with the schedule.
   */
  startAttempt?: number;
}

/** The delays a delivery workflow waits between attempts: the spec's by default, never more than 3. */
export function retrySchedule(delaysMs: readonly number[] | undefined): number[] {
  return [...(delaysMs ?? DEFAULT_RETRY_DELAYS_MS)].slice(0, MAX_RETRIES).map((d) => Math.max(0, Math.floor(d)));
}

/** The document event envelope (spec, Events): what a document delivery's body is. */
// A type, not an interface, so an envelope passes where any JSON object is expected.
export type WebhookEnvelope = {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
};
