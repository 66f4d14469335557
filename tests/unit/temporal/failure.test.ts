import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing/lib/mocking-activity-environment';
import { activityInterceptors, toApplicationFailure } from '../../../activities/failure';
import { AppError, ERRORS, type ErrorCode } from '../../../domain/errors';

/** What Temporal's retry policy reads from an activity's failure: its type and whether it may retry. */
function seen(err: unknown) {
  const f = toApplicationFailure(err);
  expect(f).toBeInstanceOf(ApplicationFailure);
  const a = f as ApplicationFailure;
  return { type: a.type, nonRetryable: a.nonRetryable, message: a.message, details: a.details };
}

describe('toApplicationFailure: the one mapper from errors to Temporal failures', () => {
  it('a retryable code (an outage, a rate limit) stays retryable, typed by its code', () => {
    expect(seen(new AppError('ERR_INTERNAL_002', 'storage is down'))).toEqual({ type: 'ERR_INTERNAL_002', nonRetryable: false, message: 'storage is down', details: undefined });
    expect(seen(new AppError('ERR_QUOTA_003', undefined, { retryAfter: 30 }))).toEqual({
      type: 'ERR_QUOTA_003',
      nonRetryable: false,
      message: 'Rate limit exceeded',
      details: [{ retryAfter: 30 }],
    });
  });

  it('a 4xx code (validation, not found, permission) is non-retryable, with its relatedInfo as details', () => {
    expect(seen(new AppError('ERR_VALID_005', 'name is required', { field: 'name' }))).toEqual({
      type: 'ERR_VALID_005',
      nonRetryable: true,
      message: 'name is required',
      details: [{ field: 'name' }],
    });
    expect(seen(new AppError('ERR_JOB_001', 'job j1 no longer exists'))).toMatchObject({ type: 'ERR_JOB_001', nonRetryable: true, message: 'job j1 no longer exists' });
    expect(seen(new AppError('ERR_AUTH_005'))).toMatchObject({ type: 'ERR_AUTH_005', nonRetryable: true });
    const thrown = new AppError('ERR_TMPL_013');
    expect(toApplicationFailure(thrown).stack).toBe(thrown.stack);
  });

  it('follows the catalogue for every code', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) {
      expect({ code, nonRetryable: seen(new AppError(code)).nonRetryable }).toEqual({ code, nonRetryable: !ERRORS[code].retryable });
    }
  });

  it('a plain error (a crash, a lost connection) stays retryable', () => {
    const err = new TypeError('socket hang up');
    const f = toApplicationFailure(err) as ApplicationFailure;
    expect({ type: f.type, nonRetryable: f.nonRetryable, message: f.message }).toEqual({ type: 'TypeError', nonRetryable: false, message: 'socket hang up' });
    expect(f.stack).toBe(err.stack);
    const lost = new Error('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    expect((toApplicationFailure(lost) as ApplicationFailure).cause?.message).toBe('connect ECONNREFUSED');
    expect(seen('not even an Error')).toMatchObject({ nonRetryable: false, message: 'not even an Error' });
  });

  it('a row that is gone (a purged project, a deleted record) is non-retryable from the third attempt, so its workflow ends instead of retrying forever', () => {
    // Built by name and SQLSTATE as TypeORM throws them (unit tests load no typeorm).
    const notFound = Object.assign(new Error('Could not find any entity of type "RunEntity"'), { name: 'EntityNotFoundError' });
    const foreignKey = Object.assign(new Error('insert or update on table "webhook_deliveries" violates foreign key constraint'), { name: 'QueryFailedError', code: '23503' });
    const viaDriver = Object.assign(new Error('violates foreign key constraint'), { name: 'QueryFailedError', driverError: { code: '23503' } });
    const at = (err: Error, attempt: number) => {
      const f = toApplicationFailure(err, attempt) as ApplicationFailure;
      return { type: f.type, nonRetryable: f.nonRetryable };
    };
    for (const err of [notFound, foreignKey, viaDriver]) {
      // A race with a concurrent delete is retried past; a record still gone on the third attempt ends it.
      expect([at(err, 1).nonRetryable, at(err, 2).nonRetryable, at(err, 3).nonRetryable, at(err, 7).nonRetryable]).toEqual([false, false, true, true]);
    }
    expect(at(notFound, 3).type).toBe('EntityNotFoundError');
    // Other database failures (a serialization conflict, a lost connection) stay retryable.
    const conflict = Object.assign(new Error('could not serialize access'), { name: 'QueryFailedError', code: '40001' });
    expect(at(conflict, 5)).toEqual({ type: 'QueryFailedError', nonRetryable: false });
  });

  it('leaves Temporal failures (already converted, cancellations) as they are', () => {
    const already = ApplicationFailure.nonRetryable('no', 'ERR_USER_001');
    expect(toApplicationFailure(already)).toBe(already);
    const cancelled = new CancelledFailure('cancelled');
    expect(toApplicationFailure(cancelled)).toBe(cancelled);
  });
});

describe('activityInterceptors: every error an activity throws goes through the mapper', () => {
  /** An activity run as a Worker registering activityInterceptors() runs it. */
  const environment = () => new MockActivityEnvironment(undefined, { interceptors: activityInterceptors().activity });
  const thrownBy = async (env: MockActivityEnvironment, activity: () => Promise<unknown>): Promise<unknown> => {
    try {
      await env.run(activity);
    } catch (err) {
      return err;
    }
    throw new Error('the activity did not throw');
  };

  it('an AppError that escapes an activity is typed by its code, retryable as the catalogue says', async () => {
    const env = environment();
    const notRetried = await thrownBy(env, async () => {
      throw new AppError('ERR_TMPL_013', 'Template version 3 no longer exists');
    });
    expect(notRetried).toBeInstanceOf(ApplicationFailure);
    expect(notRetried).toMatchObject({ type: 'ERR_TMPL_013', nonRetryable: true, message: 'Template version 3 no longer exists' });
    const retried = await thrownBy(env, async () => {
      throw new AppError('ERR_INTERNAL_002', 'storage is down');
    });
    expect(retried).toMatchObject({ type: 'ERR_INTERNAL_002', nonRetryable: false });
  });

  it('a crash stays retryable; an ApplicationFailure the activity built passes unchanged', async () => {
    const env = environment();
    expect(await thrownBy(env, async () => Promise.reject(new TypeError('socket hang up')))).toMatchObject({ type: 'TypeError', nonRetryable: false });
    const own = ApplicationFailure.nonRetryable('job j1 no longer exists', 'ERR_JOB_001');
    expect(await thrownBy(env, async () => Promise.reject(own))).toBe(own);
  });

  it("a record still gone on the activity's third attempt ends it: the interceptor passes the attempt", async () => {
    const gone = () => Promise.reject(Object.assign(new Error('Could not find any entity of type "RunEntity"'), { name: 'EntityNotFoundError' }));
    const at = (attempt: number) => new MockActivityEnvironment({ attempt }, { interceptors: activityInterceptors().activity });
    expect(await thrownBy(at(1), gone)).toMatchObject({ type: 'EntityNotFoundError', nonRetryable: false });
    expect(await thrownBy(at(3), gone)).toMatchObject({ type: 'EntityNotFoundError', nonRetryable: true });
  });

  it('a cancelled activity is reported as cancelled: its CancelledFailure or AbortError passes unchanged', async () => {
    const env = environment();
    const cancelled = thrownBy(env, () => Context.current().cancelled);
    env.cancel('CANCELLED');
    expect(await cancelled).toBeInstanceOf(CancelledFailure);
    const abort = new DOMException('This operation was aborted', 'AbortError');
    expect(await thrownBy(env, async () => Promise.reject(abort))).toBe(abort);
  });
});
