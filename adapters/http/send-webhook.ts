import { AppError } from '../../domain/errors';
import { webhookSignature } from '../../domain/signing';
import { DELIVERY_TIMEOUT_MS, RESERVED_HEADERS, outcomeForStatus, type AttemptOutcome } from '../../domain/webhooks/delivery';
import type { OutboundGuard } from './outbound';

/**
 * One HTTP POST of a webhook and what it means for the schedule. Never throws: every way a
 * request can go wrong is an outcome the delivery workflow acts on (svix's worker does the same).
 */

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface SendResult {
  outcome: AttemptOutcome;
  /** The receiver's HTTP status; null when none came back (network error, timeout, refusal). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The answer's Retry-After header as sent (429 and 503 answers), for callers that honour it. */
  retryAfter?: string;
}

/** How much of a refusing receiver's answer is kept in the attempt's `error`, for its owner to read. */
const ERROR_BODY_BYTES = 256;

/** Guard refusals a later attempt could get past: a name that does not resolve yet is a network error. */
const TRANSIENT_REFUSALS = new Set(['unresolvable']);

/**
 * POSTs a signed event, the one webhook sender of document, Flow and report deliveries (docs/webhooks.md
 * "Headers and signature"): the target's own headers minus the reserved ones, the spec's headers, and an
 * HMAC of `<timestamp>.<body>` (the exact bytes sent) timed `at` the attempt, fresh on every attempt.
 */
export function sendSignedEvent(
  guard: OutboundGuard,
  e: { url: string; body: string; secret: string; eventId: string; eventType: string; userAgent: string; headers?: Record<string, string> | null; at?: Date },
  timeoutMs = DELIVERY_TIMEOUT_MS,
): Promise<SendResult> {
  const timestamp = Math.floor((e.at ?? new Date()).getTime() / 1000);
  const own = Object.entries(e.headers ?? {}).filter(([name, value]) => !RESERVED_HEADERS.includes(name.toLowerCase()) && typeof value === 'string');
  const headers = {
    ...Object.fromEntries(own),
    'Content-Type': 'application/json',
    'User-Agent': e.userAgent,
    'X-Service-Signature': webhookSignature(e.secret, timestamp, e.body),
    'X-Service-Timestamp': String(timestamp),
    'X-Service-Event-Id': e.eventId,
    'X-Service-Event-Type': e.eventType,
  };
  return sendWebhook(guard, { url: e.url, body: e.body, headers }, timeoutMs);
}

export async function sendWebhook(guard: OutboundGuard, req: WebhookRequest, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await guard.guardedFetch(req.url, { method: 'POST', headers: req.headers, body: req.body, timeoutMs });
    const outcome = outcomeForStatus(res.status);
    if (outcome === 'delivered') {
      // The answer's body means nothing to us; release the connection without reading it.
      await res.body?.cancel().catch(() => undefined);
      return { outcome, statusCode: res.status, error: null, durationMs: elapsed() };
    }
    const snippet = await readSnippet(res).catch(() => '');
    const error = `HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`;
    const retryAfter = res.headers.get('retry-after');
    return { outcome, statusCode: res.status, error, durationMs: elapsed(), ...(retryAfter ? { retryAfter } : {}) };
  } catch (err) {
    return { ...classifyFailure(err, timeoutMs), statusCode: null, durationMs: elapsed() };
  }
}

function classifyFailure(err: unknown, timeoutMs: number): { outcome: AttemptOutcome; error: string } {
  if (err instanceof AppError && err.code === 'ERR_OUTBOUND_001') {
    const reason = String(err.relatedInfo?.reason ?? '');
    if (reason === 'too_many_redirects') return { outcome: 'permanent', error: 'Redirects are not followed: point the webhook at the final URL' };
    return { outcome: TRANSIENT_REFUSALS.has(reason) ? 'retry' : 'permanent', error: err.message };
  }
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return { outcome: 'retry', error: `Timed out after ${timeoutMs / 1000} s` };
  // undici reports connection failures as TypeError('fetch failed') with the socket error as cause.
  const detail = e?.cause?.code ?? e?.cause?.message ?? (err as { code?: string })?.code ?? e?.message ?? String(err);
  return { outcome: 'retry', error: `Network error: ${detail}` };
}

/** The first bytes of an error answer as text, without waiting for (or buffering) a large body. */
async function readSnippet(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, ERROR_BODY_BYTES).toString('utf8');
  return text.replace(/\s+/g, ' ').trim();
}
