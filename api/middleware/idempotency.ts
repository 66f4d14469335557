import type { Context, Middleware, Next } from 'koa';
import type { DataSource, EntityManager } from 'typeorm';
import { claimKey, completeKey, releaseKey, type Claim, type StoredAnswer } from '../../db/idempotency/idempotency-keys';
import { AppError } from '../../domain/errors';
import { isValidIdempotencyKey, requestFingerprint } from '../../domain/idempotency';
import type { Logger } from '../../domain/logger';
import type { Scope } from './guards';

/**
 * `Idempotency-Key` on the POSTs that create something (docs/idempotency.md). Mounted on each such
 * route after its guard (the key lives in the caller's project) and after its body parser (the body
 * is part of the fingerprint). A first request claims the key; a repeat with the same fingerprint
 * gets the stored answer with `Idempotent-Replayed: true`, one with another body 422 ERR_IDEM_001,
 * one while the first is in flight 409 ERR_IDEM_002 with `Retry-After`.
 *
 * Routes whose service writes what it created in one transaction store the answer in that same
 * transaction (`answerInTransaction`); on the others the answer is stored once the route answered.
 */

/** Response headers a replay repeats. */
const KEPT_HEADERS = ['location'];

interface Held {
  claim: Claim;
  /** The route stored its answer in its own transaction. */
  stored: boolean;
}

export function idempotent(deps: { db: DataSource; logger?: Logger }): Middleware {
  return async function idempotencyKey(ctx: Context, next: Next): Promise<void> {
    if (ctx.headers['idempotency-key'] === undefined) return next();
    const key = ctx.get('Idempotency-Key');
    if (!isValidIdempotencyKey(key)) {
      throw new AppError('ERR_VALID_001', 'Idempotency-Key must be 1 to 255 visible ASCII characters', { field: 'Idempotency-Key' });
    }
    const scope = ctx.state.scope as Scope | undefined;
    if (!scope) throw new Error('idempotent() is mounted after the route guard');
    const path = ctx.querystring ? `${ctx.path}?${ctx.querystring}` : ctx.path;
    const fingerprint = requestFingerprint({ method: ctx.method, path, projectId: scope.projectId, body: ctx.request.body });
    const outcome = await claimKey(deps.db, { projectId: scope.projectId, key, fingerprint, method: ctx.method, path });
    switch (outcome.kind) {
      case 'replay':
        applyAnswer(ctx, outcome.answer);
        ctx.set('Idempotent-Replayed', 'true');
        return;
      case 'mismatch':
        throw new AppError('ERR_IDEM_001', undefined, { method: outcome.method, path: outcome.path });
      case 'in_flight': {
        // The first request usually ends within a second; its lease bounds how long a dead one blocks the key.
        const retryAfter = Math.max(1, Math.min(5, Math.ceil(outcome.leaseSecondsLeft)));
        ctx.set('Retry-After', String(retryAfter));
        throw new AppError('ERR_IDEM_002', undefined, { retryAfter });
      }
      case 'claimed':
        break;
    }
    const held: Held = { claim: outcome.claim, stored: false };
    ctx.state.idempotency = held;
    try {
      await next();
    } catch (err) {
      // Deletes only a claim still in flight: an answer committed before the failure stays for replays.
      await releaseQuietly(deps, held.claim);
      throw err;
    }
    if (held.stored) return;
    const answer = answerOf(ctx);
    if (!answer) return releaseQuietly(deps, held.claim);
    // The resource exists: the client gets its answer even if storing it fails (the claim was taken
    // over after its lease, or the database is gone); a repeat may then create again (docs/idempotency.md).
    await completeKey(deps.db, held.claim, answer).catch((err: unknown) => deps.logger?.warn('idempotent answer not stored', { err, key: held.claim.key }));
  };
}

async function releaseQuietly(deps: { db: DataSource; logger?: Logger }, claim: Claim): Promise<void> {
  // A key left claimed frees itself when its lease runs out.
  await releaseKey(deps.db, claim).catch((err: unknown) => deps.logger?.warn('idempotency key not released', { err }));
}

/** A 2xx JSON answer, as a replay repeats it; undefined for anything else (not stored). */
function answerOf(ctx: Context): StoredAnswer | undefined {
  if (ctx.status < 200 || ctx.status > 299) return undefined;
  const body: unknown = ctx.body;
  if (body != null && typeof body !== 'object' && typeof body !== 'string') return undefined;
  if (Buffer.isBuffer(body) || (body !== null && typeof (body as { pipe?: unknown }).pipe === 'function')) return undefined;
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name] = value;
  }
  return { status: ctx.status, headers, body: body ?? null };
}

/** Sets status, kept headers and body: the same for a first answer and its replays. */
export function applyAnswer(ctx: Context, answer: StoredAnswer): void {
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.body = answer.body;
}

/**
 * For a route whose service creates in one transaction: a callback that service runs inside that
 * transaction, storing the answer with what it created (nothing without a key). The route then
 * answers with `applyAnswer(ctx, answer)`, so the first answer and its replays are the same.
 */
export function answerInTransaction(ctx: Context): ((m: EntityManager, answer: StoredAnswer) => Promise<void>) | undefined {
  const held = ctx.state.idempotency as Held | undefined;
  if (!held) return undefined;
  return async (m, answer) => {
    await completeKey(m, held.claim, answer);
    held.stored = true;
  };
}
