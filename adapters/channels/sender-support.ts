import { AppError } from '../../domain/errors';
import { dateInZone, type MessageToken } from '../../domain/reporting/message-text';
import type { ReportAttemptOutcome } from '../../domain/reporting/delivery';
import type { ChannelContext, DeliveryFile, DeliveryMessage, SendResult, TestResult } from './channel-sender';

/**
 * What the chat, webhook and e-mail senders share (docs/reporting.md "Channels", "Outbound connections"): what an HTTP
 * answer means for the delivery, one POST through the outbound guard that never follows a redirect and
 * never keeps the remote body, and the placeholder values of a message.
 */

/** One attempt's budget for connecting, sending and reading the answer's head. */
export const CHANNEL_TIMEOUT_MS = 10_000;
/** Sent as User-Agent by every HTTP channel. */
export const REPORTS_USER_AGENT = 'Formwork-Reports/1.0';
/** A Retry-After longer than this is not waited for (the delivery's own schedule takes over). */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** 2xx delivered; 429 and 5xx may pass later; a 3xx (never followed) and other 4xx will not. */
function outcomeOfStatus(status: number): ReportAttemptOutcome {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 429 || (status >= 500 && status < 600)) return 'retry';
  return 'permanent';
}

/** A Retry-After header (seconds or an HTTP date) in milliseconds, capped; undefined when absent or unreadable. */
function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  const ms = /^\d{1,10}$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** An attempt that got no HTTP answer: a guard refusal is final unless the name may resolve later; time-outs and network errors retry. */
function failureWithoutAnswer(err: unknown): SendResult {
  if (err instanceof AppError && err.code === 'ERR_OUTBOUND_001') {
    const reason = String(err.relatedInfo?.reason ?? '');
    return { outcome: reason === 'unresolvable' ? 'retry' : 'permanent', error: `Target refused by the outbound guard (${reason || 'not allowed'})` };
  }
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return { outcome: 'retry', error: `No answer within ${CHANNEL_TIMEOUT_MS / 1000} s` };
  const code = e?.cause?.code ?? e?.code;
  return { outcome: 'retry', error: `Network error${typeof code === 'string' && /^[A-Z_]{1,40}$/.test(code) ? ` (${code})` : ''}` };
}

/**
 * POSTs a JSON body to `url` through the guard: no redirect followed, `what` names the receiver in
 * the error ("Slack answered 404"). The answer's body is never read into the result.
 */
export async function postJson(ctx: ChannelContext, url: string, body: unknown, what: string, headers: Record<string, string> = {}): Promise<SendResult> {
  let res: Response;
  try {
    res = await ctx.guard.guardedFetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': REPORTS_USER_AGENT, ...headers },
      body: JSON.stringify(body),
      timeoutMs: CHANNEL_TIMEOUT_MS,
      followRedirects: false,
      signal: ctx.signal,
    });
  } catch (err) {
    return failureWithoutAnswer(err);
  }
  await res.body?.cancel().catch(() => undefined);
  return resultOfStatus(res.status, what, res.headers.get('retry-after'));
}

/** The result of an HTTP answer's status, in our words. */
export function resultOfStatus(status: number, what: string, retryAfter: string | null = null): SendResult {
  const outcome = outcomeOfStatus(status);
  if (outcome === 'delivered') return { outcome, statusCode: status };
  const wait = status === 429 ? retryAfterMs(retryAfter) : undefined;
  const redirect = status >= 300 && status < 400 ? ': redirects are not followed, use the final URL' : '';
  return { outcome, statusCode: status, error: `${what} answered ${status}${redirect}`, ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
}

/** The placeholder values of a message but `{{links}}`, which each sender writes its own way. */
export function messageValues(message: DeliveryMessage): Partial<Record<MessageToken, string>> {
  return {
    'report.name': message.report.name,
    'report.slug': message.report.slug ?? '',
    'run.shortId': message.run.shortId,
    'run.status': message.run.status,
    'run.scheduledFor': message.run.scheduledFor,
    'run.scheduledFor | date': dateInZone(message.run.scheduledFor, message.run.timezone),
  };
}

/** One line per file: `name: url (link valid until …)`. */
export function plainLinks(files: DeliveryFile[]): string {
  return files.map((f) => `${f.filename}: ${f.url} (link valid until ${f.expiresAt})`).join('\n');
}

/** A job run's bundle: one line per report saying how it ended. */
export function itemLines(message: DeliveryMessage): string {
  return (message.run.items ?? []).map((i) => `${i.reportName}: ${i.status}`).join('\n');
}

/** A test message's send result as the test endpoint answers it. */
export function testResult(r: SendResult): TestResult {
  const details = r.statusCode !== undefined ? { statusCode: r.statusCode } : undefined;
  return r.outcome === 'delivered' ? { ok: true, details } : { ok: false, error: r.error, details };
}
