import type { Context, Middleware, Next } from 'koa';
import type { DataSource, EntityManager } from 'typeorm';
import { claimKey, completeKey, releaseKey, type Claim, type KeyRequest, type StoredAnswer } from '../../db/idempotency/idempotency-keys';
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
 * Every such route's service stores the answer in the transaction that writes what it created
 * (`answerInTransaction`), so the answer is committed with the resource or not at all.
 */

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
    let claimed: { claim: Claim } | { replay: StoredAnswer };
    try {
      claimed = await claimOrReplay(deps.db, { projectId: scope.projectId, key, fingerprint, method: ctx.method, path });
    } catch (err) {
      if (err instanceof AppError && err.code === 'ERR_IDEM_002') ctx.set('Retry-After', String((err.relatedInfo as { retryAfter: number }).retryAfter));
      throw err;
    }
    if ('replay' in claimed) {
      applyAnswer(ctx, claimed.replay);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    const held: Held = { claim: claimed.claim, stored: false };
    ctx.state.idempotency = held;
    try {
      await next();
    } catch (err) {
      // Deletes only a claim still in flight: an answer committed before the failure stays for replays.
      await releaseQuietly(deps, held.claim);
      throw err;
    }
    if (held.stored) return;
    // Nothing was committed under the key (the route created nothing): free it for the next try.
    if (ctx.status >= 200 && ctx.status < 300) deps.logger?.error('idempotent route answered without storing its answer', { path: ctx.path });
    await releaseQuietly(deps, held.claim);
  };
}

/** Claims the key, or answers with the stored answer; 422 ERR_IDEM_001 for another request's key, 409 ERR_IDEM_002 while it is in flight. */
async function claimOrReplay(db: DataSource, req: KeyRequest): Promise<{ claim: Claim } | { replay: StoredAnswer }> {
  const outcome = await claimKey(db, req);
  switch (outcome.kind) {
    case 'replay':
      return { replay: outcome.answer };
    case 'mismatch':
      throw new AppError('ERR_IDEM_001', undefined, { method: outcome.method, path: outcome.path });
    case 'in_flight':
      // The first request usually ends within a second; its lease bounds how long a dead one blocks the key.
      throw new AppError('ERR_IDEM_002', undefined, { retryAfter: Math.max(1, Math.min(5, Math.ceil(outcome.leaseSecondsLeft))) });
    case 'claimed':
      return { claim: outcome.claim };
  }
}

/**
 * An idempotency key outside HTTP (the MCP tools' `idempotencyKey` argument, docs/idempotency.md):
 * `create` gets a `store` to call inside the transaction that writes what it created, with the
 * answer to keep; a repeat with the same request gets that answer back (`replayed: true`) instead of
 * calling `create`. `request` names the operation (its method and path) for the fingerprint.
 */
export async function withIdempotencyKey<T>(
  deps: { db: DataSource; logger?: Logger },
  request: { projectId: string; key: string; method: string; path: string; body: unknown },
  create: (store: (m: EntityManager, answer: T) => Promise<void>) => Promise<T>,
): Promise<{ answer: T; replayed: boolean }> {
  if (!isValidIdempotencyKey(request.key)) throw new AppError('ERR_VALID_001', 'idempotencyKey must be 1 to 255 visible ASCII characters', { field: 'idempotencyKey' });
  const fingerprint = requestFingerprint(request);
  const claimed = await claimOrReplay(deps.db, { projectId: request.projectId, key: request.key, fingerprint, method: request.method, path: request.path });
  if ('replay' in claimed) return { answer: claimed.replay.body as T, replayed: true };
  let stored = false;
  try {
    const answer = await create(async (m, value) => {
      await completeKey(m, claimed.claim, { status: 200, headers: {}, body: value });
      stored = true;
    });
    if (!stored) await releaseQuietly(deps, claimed.claim);
    return { answer, replayed: false };
  } catch (err) {
    await releaseQuietly(deps, claimed.claim);
    throw err;
  }
}

async function releaseQuietly(deps: { db: DataSource; logger?: Logger }, claim: Claim): Promise<void> {
  // A key left claimed frees itself when its lease runs out.
  await releaseKey(deps.db, claim).catch((err: unknown) => deps.logger?.warn('idempotency key not released', { err }));
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
