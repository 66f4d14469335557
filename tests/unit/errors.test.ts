import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ERRORS, errorBody, isRetryable, type ErrorCode } from '../../domain/errors';

describe('error catalogue', () => {
  it('is documented: docs/errors.md lists every code with its status', () => {
    const doc = readFileSync(join(__dirname, '../../docs/errors.md'), 'utf8');
    const missing = Object.entries(ERRORS).filter(([code, e]) => !doc.includes(`| \`${code}\` | ${e.status} |`));
    expect(missing.map(([c]) => c)).toEqual([]);
  });

  it('says for every code whether retrying can help, and docs/errors.md says the same', () => {
    const doc = readFileSync(join(__dirname, '../../docs/errors.md'), 'utf8');
    for (const [code, e] of Object.entries(ERRORS) as Array<[ErrorCode, (typeof ERRORS)[ErrorCode]]>) {
      expect({ code, retryable: typeof e.retryable }).toEqual({ code, retryable: 'boolean' });
      expect({ code, documented: doc.includes(`| \`${code}\` | ${e.status} | ${e.retryable ? 'yes' : 'no'} |`) }).toEqual({ code, documented: true });
    }
  });

  it('marks outages and rate limits retryable, and validation, not-found, permission and spent quotas not', () => {
    const retryable = (Object.keys(ERRORS) as ErrorCode[]).filter(isRetryable);
    expect(retryable.sort()).toEqual(
      ['ERR_AGENT_012', 'ERR_AUTH_015', 'ERR_AUTH_016', 'ERR_FLOW_RUN_003', 'ERR_FLOW_RUN_004', 'ERR_IDEM_002', 'ERR_INTERNAL_001', 'ERR_INTERNAL_002', 'ERR_LIMIT_012', 'ERR_LIMIT_013', 'ERR_LIMIT_014', 'ERR_LIMIT_015', 'ERR_LIMIT_016', 'ERR_OAUTH_008', 'ERR_QUOTA_003', 'ERR_SIGN_003', 'ERR_TMPL_012'].sort(),
    );
    // Every 5xx is a dependency or an outage; no 4xx but a refilling rate limit is, and a 409 for an Idempotency-Key in flight (the repeat gets the answer).
    // 501 (a method the service implements nowhere) is the client's to change, not a passing state.
    for (const [code, e] of Object.entries(ERRORS)) if (e.status >= 500) expect({ code, retryable: e.retryable }).toEqual({ code, retryable: e.status !== 501 });
    expect(new AppError('ERR_INTERNAL_002').retryable).toBe(true);
    expect(new AppError('ERR_VALID_005').retryable).toBe(false);
    expect(new AppError('ERR_QUOTA_008').retryable).toBe(false);
  });

  it('keeps the spec statuses of the spec codes', () => {
    expect(ERRORS.ERR_AKEY_002.status).toBe(401);
    expect(ERRORS.ERR_AUTH_005.status).toBe(403);
    expect(ERRORS.ERR_QUOTA_003.status).toBe(429);
    expect(ERRORS['FLOW.GATE_PAUSED'].status).toBe(409);
    expect(ERRORS.ERR_FLOW_RUN_005.status).toBe(413);
  });

  it('renders the spec body, with relatedInfo only when given', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    expect(errorBody(new AppError('ERR_TMPL_001'), '/api/templates/x', at)).toEqual({
      statusCode: 404,
      code: 'ERR_TMPL_001',
      message: 'Template not found',
      timestamp: '2026-01-02T03:04:05.000Z',
      path: '/api/templates/x',
    });
    expect(errorBody(new AppError('ERR_TMPL_002', 'bad', { field: 'name' }), '/p', at).relatedInfo).toEqual({ field: 'name' });
  });

  it('a validation error raised by hand lists its one problem in relatedInfo.errors, as the schema checks do', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    expect(errorBody(new AppError('ERR_VALID_005', 'name is required', { field: 'name' }), '/p', at).relatedInfo).toEqual({
      field: 'name',
      errors: [{ path: 'name', code: 'ERR_VALID_005', message: 'name is required' }],
    });
    expect(errorBody(new AppError('ERR_VALID_001', 'startDate must not be after endDate'), '/p', at).relatedInfo).toEqual({
      errors: [{ path: '', code: 'ERR_VALID_001', message: 'startDate must not be after endDate' }],
    });
    // A schema check's list stays as it is.
    const listed = { field: 'a', errors: [{ path: 'a', code: 'ERR_VALID_005', message: "'a' is required" }, { path: 'b', code: 'ERR_VALID_001', message: "'b' must be a number" }] };
    expect(errorBody(new AppError('ERR_VALID_005', "'a' is required", listed), '/p', at).relatedInfo).toEqual(listed);
  });
});
