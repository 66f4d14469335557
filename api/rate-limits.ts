import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError, type ErrorCode } from '../domain/errors';
import type { Services } from '../platform/services';

/**
 * Makes fixed-window limiters. With REDIS_URL the counters live in Redis and every API replica
 * shares them; without it (the embedded single-process default) they live in process memory.
 * If Redis stops answering, a per-process memory limiter takes over instead of failing requests.
 */
export type LimiterFactory = (name: string, points: number, durationSeconds: number) => RateLimiterAbstract;

export function createLimiterFactory(redis?: Redis, prefix = 'formwork'): LimiterFactory {
  return (name, points, duration) => {
    const keyPrefix = `${prefix}:rl:${name}`;
    if (!redis) return new RateLimiterMemory({ keyPrefix, points, duration });
    return new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points,
      duration,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
    });
  };
}

// --- Uploads, output and mail (docs/security.md, "Uploads, output and mail") -------------------
// Budgets that are not per credential: template previews per project, and e-mail re-sends per
// recipient address and per project (approval links, verification e-mails). Separate from the
// per-account sign-in and e-mail back-off (api/identity/attempt-limits.ts).

/**
 * Takes one point of `key`'s budget; past it, the catalogued 429 `code` with the wait in
 * `relatedInfo.retryAfter` (seconds; the error body also has it at the top level, and the error
 * renderer sends it as Retry-After).
 */
export async function consumeOrRefuse(limiter: RateLimiterAbstract, key: string, code: ErrorCode, message?: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw new AppError(code, message, { limit: limiter.points, retryAfter });
  }
}

type LimiterServices = Pick<Services, 'redis' | 'config'>;

/** One set of limiters per process's services: every router counts on the same (in-memory) counters. */
function perServices<T extends object>(make: (services: LimiterServices) => T): (services: LimiterServices) => T {
  const made = new WeakMap<LimiterServices, T>();
  return (services) => {
    let value = made.get(services);
    if (!value) made.set(services, (value = make(services)));
    return value;
  };
}

/** PREVIEW_RATE_LIMIT_PER_MINUTE: template previews one project may render per minute (ERR_LIMIT_014). */
export const previewLimiter = perServices<RateLimiterAbstract>(({ redis, config }) =>
  createLimiterFactory(redis, config.temporal.taskQueuePrefix)('preview-project', config.mailAbuse.previewsPerMinute, config.mailAbuse.previewWindowSeconds),
);

export interface ResendLimiters {
  /** RESEND_PER_RECIPIENT_PER_HOUR, keyed by the lower-cased address (ERR_LIMIT_012). */
  perRecipient: RateLimiterAbstract;
  /** RESEND_PER_PROJECT_PER_HOUR, keyed by project id (ERR_LIMIT_013). */
  perProject: RateLimiterAbstract;
}

export const resendLimiters = perServices<ResendLimiters>(({ redis, config }) => {
  const make = createLimiterFactory(redis, config.temporal.taskQueuePrefix);
  return {
    perRecipient: make('resend-recipient', config.mailAbuse.resendsPerRecipientPerHour, 3600),
    perProject: make('resend-project', config.mailAbuse.resendsPerProjectPerHour, 3600),
  };
});
