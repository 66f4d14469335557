import { CompleteAsyncError, type Context } from '@temporalio/activity';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { isAbortError } from '@temporalio/common/lib/type-helpers';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, WorkerInterceptors } from '@temporalio/worker';
import { AppError } from '../domain/errors';

/**
 * The one place an activity's error becomes what Temporal's retry policy reads (style.md, "One
 * error vocabulary"):
 *
 * - an AppError becomes an ApplicationFailure whose `type` is its code, `nonRetryable` unless the
 *   catalogue says retrying can help (domain/errors.ts `retryable`: outages and rate limits), and
 *   whose `details` carry its relatedInfo (and its stack, where it was thrown);
 * - a Temporal failure (already converted, a cancellation) passes unchanged;
 * - a row that is gone (TypeORM's EntityNotFoundError from a `…OrFail` load) or a write that
 *   refers to one (a foreign-key violation, Postgres 23503) is not retryable from the activity's
 *   RECORD_GONE_ATTEMPTS-th attempt on: the project was purged or the record deleted while its
 *   workflow ran, and retrying would wait for it forever (the first attempts still retry, so a
 *   race with a concurrent delete, such as a webhook subscription removed while its deliveries are
 *   recorded, is retried past as before);
 * - anything else (a crash, a lost connection) stays retryable, as Temporal would treat it.
 *
 * Workflows match on the type, so the codes an activity throws are its contract
 * (e.g. `nonRetryableErrorTypes: ['ERR_JOB_001']`). Activities need not call it: every Worker
 * registers `activityInterceptors()`, which maps whatever an activity throws.
 */
export function toApplicationFailure(err: unknown, attempt = 1): TemporalFailure {
  if (err instanceof TemporalFailure) return err;
  if (err instanceof AppError) {
    const mapped = ApplicationFailure.create({
      message: err.message,
      type: err.code,
      nonRetryable: !err.retryable,
      details: err.relatedInfo ? [err.relatedInfo] : undefined,
    });
    mapped.stack = err.stack; // where it was thrown, not where it was mapped
    return mapped;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  const cause = e.cause instanceof Error ? e.cause : undefined;
  const converted = ApplicationFailure.create({ message: e.message, type: e.name, nonRetryable: attempt >= RECORD_GONE_ATTEMPTS && isRecordGone(e), cause });
  converted.stack = e.stack;
  return converted;
}

/** The attempt from which a record that is still gone ends the activity (and, unless caught, its workflow). */
const RECORD_GONE_ATTEMPTS = 3;
/** Postgres' foreign_key_violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/** By name and SQLSTATE rather than by class: the driver (pg or PGlite) decides which class arrives. */
function isRecordGone(e: Error): boolean {
  if (e.name === 'EntityNotFoundError') return true;
  const code = (e as { code?: unknown; driverError?: { code?: unknown } }).code ?? (e as { driverError?: { code?: unknown } }).driverError?.code;
  return e.name === 'QueryFailedError' && code === FOREIGN_KEY_VIOLATION;
}

/**
 * Maps every error an activity throws with `toApplicationFailure`, so an AppError that escapes an
 * activity reaches the retry policy typed by its code and retryable only as the catalogue says
 * (without it, Temporal sees a plain Error of type `AppError` and retries it whatever its code).
 * What the SDK itself interprets passes unchanged: Temporal failures (a cancellation, one already
 * converted), an abort of a cancelled activity (reported as cancelled, not failed) and
 * `CompleteAsyncError`.
 */
const mapActivityFailures: ActivityInterceptorsFactory = (ctx: Context) => {
  const inbound: ActivityInboundCallsInterceptor = {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        if (err instanceof CompleteAsyncError) throw err;
        if (isAbortError(err) && ctx.cancellationSignal.aborted) throw err;
        throw toApplicationFailure(err, ctx.info.attempt);
      }
    },
  };
  return { inbound };
};

/** The interceptors of every Worker that runs activities: `Worker.create({ …, interceptors: activityInterceptors() })`. */
export function activityInterceptors(): WorkerInterceptors {
  return { activity: [mapActivityFailures] };
}
