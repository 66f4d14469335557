import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

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
