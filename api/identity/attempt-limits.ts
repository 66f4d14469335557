import { createHash } from 'node:crypto';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError, type ErrorCode } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { createLimiterFactory, type LimiterFactory } from '../rate-limits';

/**
 * Brute-force limits on the sign-in steps and on the e-mails anyone may trigger (docs/security.md,
 * "Credentials: brute force and client addresses"). They count per account or per e-mail address,
 * never per client address, so rotating X-Forwarded-For or a botnet's addresses gains nothing.
 *
 * An attempt is counted before it is checked (one atomic increment), so a burst of parallel
 * guesses cannot all slip in before the first failure is recorded. The first `free` attempts run
 * freely; from the `free`-th failure on the subject is locked for lockSeconds, doubling with each
 * further failure up to maxLockSeconds, and past the free ones only one attempt at a time gets
 * through. Locked: 429 with `relatedInfo.retryAfter` (and Retry-After). A success forgets the
 * failures; otherwise they are forgotten a day after the first one.
 */

export interface AttemptPolicy {
  free: number;
  lockSeconds: number;
  maxLockSeconds: number;
  /** Answer when locked: ERR_AUTH_015 (sign-in steps) or ERR_AUTH_016 (e-mails). */
  code: ErrorCode;
}

const FORGET_SECONDS = 24 * 3600;

export class AttemptLimit {
  private readonly attempts: RateLimiterAbstract;
  private readonly lock: RateLimiterAbstract;

  constructor(makeLimiter: LimiterFactory, name: string, private readonly policy: AttemptPolicy) {
    this.attempts = makeLimiter(`attempts:${name}`, Number.MAX_SAFE_INTEGER, FORGET_SECONDS);
    // One point: past the free attempts, one attempt at a time; `block` holds the back-off.
    this.lock = makeLimiter(`lock:${name}`, 1, policy.lockSeconds);
  }

  /** Counts an attempt on `subject` before it is checked; throws 429 while locked. Returns the attempt's number. */
  async begin(subject: string): Promise<number> {
    const key = keyOf(subject);
    const locked = await this.lock.get(key);
    if (locked && locked.consumedPoints > 1) throw this.tooMany(locked.msBeforeNext);
    const n = (await this.attempts.consume(key)).consumedPoints;
    if (n > this.policy.free) {
      try {
        await this.lock.consume(key);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        await this.attempts.reward(key, 1);
        throw this.tooMany(rejection.msBeforeNext);
      }
    }
    return n;
  }

  /** Attempt `n` failed. Returns the lock's length when this failure is the one that first locks the subject. */
  async failed(subject: string, n: number): Promise<number | undefined> {
    const { free, lockSeconds, maxLockSeconds } = this.policy;
    if (n < free) return undefined;
    const seconds = Math.min(maxLockSeconds, lockSeconds * 2 ** Math.min(n - free, 30));
    await this.lock.block(keyOf(subject), seconds);
    return n === free ? seconds : undefined;
  }

  /** Counts one request that always "fails" (an e-mail sent): begin + failed. */
  async spend(subject: string): Promise<void> {
    await this.failed(subject, await this.begin(subject));
  }

  async succeeded(subject: string): Promise<void> {
    const key = keyOf(subject);
    await Promise.all([this.attempts.delete(key), this.lock.delete(key)]);
  }

  private tooMany(msBeforeNext: number): AppError {
    return new AppError(this.policy.code, undefined, { retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)) });
  }
}

/** Keys are hashes: e-mail addresses never sit in Redis, and hostile input has a fixed length. */
function keyOf(subject: string): string {
  return createHash('sha256').update(subject).digest('base64url');
}

export interface AttemptLimits {
  /** Per e-mail address: login, the invitation page's login, restore-account (one counter for all three). */
  password: AttemptLimit;
  /** Per account: TOTP and backup codes at login. */
  secondFactor: AttemptLimit;
  /** Per e-mail address: forgot-password, whether or not the address has an account. */
  resetEmail: AttemptLimit;
  /** Per account: resend-verification. */
  verificationEmail: AttemptLimit;
}

export type AttemptDeps = Pick<Services, 'db' | 'config' | 'redis'>;

const byService = new WeakMap<object, AttemptLimits>();

/** The limits of one service instance (one per database connection, so per test app too). */
export function attemptLimits(deps: AttemptDeps): AttemptLimits {
  let limits = byService.get(deps.db);
  if (!limits) {
    const { attempts } = deps.config;
    const make = createLimiterFactory(deps.redis, deps.config.temporal.taskQueuePrefix);
    const signIn = { free: attempts.failuresBeforeLock, lockSeconds: attempts.lockSeconds, maxLockSeconds: attempts.maxLockSeconds, code: 'ERR_AUTH_015' as const };
    const emails = { free: attempts.emailsBeforeLock, lockSeconds: attempts.lockSeconds, maxLockSeconds: attempts.maxLockSeconds, code: 'ERR_AUTH_016' as const };
    limits = {
      password: new AttemptLimit(make, 'password', signIn),
      secondFactor: new AttemptLimit(make, 'second-factor', signIn),
      resetEmail: new AttemptLimit(make, 'reset-email', emails),
      verificationEmail: new AttemptLimit(make, 'verification-email', emails),
    };
    byService.set(deps.db, limits);
  }
  return limits;
}
