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

  it('a cancelled activity is reported as cancelled: its CancelledFailure or AbortError passes unchanged', async () => {
    const env = environment();
    const cancelled = thrownBy(env, () => Context.current().cancelled);
    env.cancel('CANCELLED');
    expect(await cancelled).toBeInstanceOf(CancelledFailure);
    const abort = new DOMException('This operation was aborted', 'AbortError');
    expect(await thrownBy(env, async () => Promise.reject(abort))).toBe(abort);
  });
});
