import type { Context, Next } from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../domain/errors';
import { clientAddressKey } from '../../domain/identity/client-address';
import { rateLimitIdentity, type Principal } from '../../domain/identity/principal';
import type { LimiterFactory } from '../rate-limits';

export interface PerMinuteLimits {
  apiKey: number;
  jwt: number;
  anonymous: number;
}

/**
 * Spec Limits §1: a per-minute budget per credential kind, keyed by the credential (API key id,
 * user id) or, unauthenticated, by client address (its /64 for IPv6; behind TRUST_PROXY hops, the
 * address the outermost trusted proxy saw, docs/security.md). Every response carries the three
 * X-RateLimit-* headers; past the budget, 429 ERR_QUOTA_003 with Retry-After.
 */
export function rateLimit(limits: PerMinuteLimits, makeLimiter: LimiterFactory) {
  const limiters = {
    apiKey: makeLimiter('apikey', limits.apiKey, 60),
    jwt: makeLimiter('jwt', limits.jwt, 60),
    anonymous: makeLimiter('anon', limits.anonymous, 60),
  };
  return async function limit(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/api/health') return next();
    const { kind, key } = rateLimitIdentity(ctx.state.principal as Principal, clientAddressKey(ctx.ip));
    const limiter = limiters[kind];
    let res: RateLimiterRes;
    let exceeded = false;
    try {
      res = await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res = rejection;
      exceeded = true;
    }
    ctx.set('X-RateLimit-Limit', String(limiter.points));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, res.remainingPoints)));
    ctx.set('X-RateLimit-Reset', String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)));
    if (exceeded) {
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      ctx.set('Retry-After', String(retryAfter));
      throw new AppError('ERR_QUOTA_003', undefined, { limit: limiter.points, retryAfter });
    }
    await next();
  };
}
