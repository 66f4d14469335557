import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Services } from './services';

/**
 * REPORT_MAIL_PER_PROJECT_PER_HOUR (docs/security.md "Reporting channels: verified senders, budgets,
 * header secrets"): the report-delivery e-mails one project may send per hour, one point per
 * recipient message. Counted like the API's re-send budgets (rate-limiter-flexible; in Redis with
 * REDIS_URL, shared by every worker, else in this process's memory, which also takes over when
 * Redis does not answer). `take` answers null when a point was taken, else the milliseconds until
 * the budget has room again.
 */
export interface ReportMailBudget {
  take(projectId: string): Promise<number | null>;
}

export function reportMailBudget(services: Pick<Services, 'redis' | 'config'>): ReportMailBudget {
  const { redis, config } = services;
  const opts = { keyPrefix: `${config.temporal.taskQueuePrefix}:rl:report-mail-project`, points: config.mailAbuse.reportMailsPerProjectPerHour, duration: 3600 };
  const limiter = redis ? new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) }) : new RateLimiterMemory(opts);
  return {
    async take(projectId) {
      try {
        await limiter.consume(projectId);
        return null;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return Math.max(1000, rejection.msBeforeNext);
      }
    },
  };
}
