import type { Context, Next } from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../domain/errors';
import { clientAddressKey } from '../../domain/identity/client-address';
import { rateLimitIdentity, type Principal } from '../../domain/identity/principal';
import type { LimiterFactory } from '../rate-limits';

export interface PerMinuteLimits {
  apiKey: number;
  /** RATE_LIMIT_OAUTH: per OAuth client, all its access tokens together (docs/oauth.md). */
  oauth: number;
  jwt: number;
  anonymous: number;
  /** RATE_LIMIT_FILE_LINKS: downloads per minute through valid signed links, per owner (project). */
  fileLinks: number;
}

/**
 * Reporting agents (docs/reporting.md "Limits"): per agent, whatever the API-key budget; a poll waits up to 50 s, so
 * 120 is ample.
 */
const AGENT_REQUESTS_PER_MINUTE = 120;

/**
 * For a request that presents a valid signed download link, the owner its budget is counted on
 * (e.g. `documents/<projectId>`); undefined for anything else, a forged or expired link included.
 */
export type CapabilityOwner = (ctx: Context) => string | undefined;

/**
 * Spec Limits §1: a per-minute budget per credential kind, keyed by the credential (API key id,
 * user id) or, unauthenticated, by client address (its /64 for IPv6; behind TRUST_PROXY hops, the
 * address the outermost trusted proxy saw, docs/security.md). Every response carries the three
 * X-RateLimit-* headers; past the budget, 429 ERR_QUOTA_003 with Retry-After (and `retryAfter` in
 * the body). A valid signed download link is a capability, not an anonymous call: it spends its
 * owner's own, generous budget (`fileLinks`), so fetching a batch's documents is not held to the
 * anonymous 30 a minute. Health probes are not counted but see the caller's current budget.
 */
export function rateLimit(limits: PerMinuteLimits, makeLimiter: LimiterFactory, capabilityOwner?: CapabilityOwner) {
  const limiters = {
    apiKey: makeLimiter('apikey', limits.apiKey, 60),
    oauth: makeLimiter('oauth', limits.oauth, 60),
    jwt: makeLimiter('jwt', limits.jwt, 60),
    anonymous: makeLimiter('anon', limits.anonymous, 60),
    fileLinks: makeLimiter('file-links', limits.fileLinks, 60),
    agent: makeLimiter('agent', AGENT_REQUESTS_PER_MINUTE, 60),
  };
  return async function limit(ctx: Context, next: Next): Promise<void> {
    const owner = capabilityOwner?.(ctx);
    const { kind, key } = owner
      ? { kind: 'fileLinks' as const, key: owner }
      : rateLimitIdentity(ctx.state.principal as Principal, clientAddressKey(ctx.ip));
    const limiter = limiters[kind];
    if (ctx.path === '/api/health') {
      // Not counted (a load balancer probes often), but the headers show the caller's budget.
      const seen = await limiter.get(key);
      setLimitHeaders(ctx, limiter.points, seen ? seen.remainingPoints : limiter.points, seen ? seen.msBeforeNext : limiter.duration * 1000);
      return next();
    }
    let res: RateLimiterRes;
    let exceeded = false;
    try {
      res = await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res = rejection;
      exceeded = true;
    }
    setLimitHeaders(ctx, limiter.points, res.remainingPoints, res.msBeforeNext);
    if (exceeded) {
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      ctx.set('Retry-After', String(retryAfter));
      throw new AppError('ERR_QUOTA_003', undefined, { limit: limiter.points, retryAfter });
    }
    await next();
  };
}

function setLimitHeaders(ctx: Context, points: number, remaining: number, msBeforeNext: number): void {
  ctx.set('X-RateLimit-Limit', String(points));
  ctx.set('X-RateLimit-Remaining', String(Math.max(0, remaining)));
  ctx.set('X-RateLimit-Reset', String(Math.ceil((Date.now() + msBeforeNext) / 1000)));
}
