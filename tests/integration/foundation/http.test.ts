import { startTestApp, type TestApp } from '../../support/app';

describe('HTTP foundation', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ smtp: false, env: { JSON_BODY_LIMIT: '2kb', RATE_LIMIT_ANONYMOUS: '8' } });
  });
  afterAll(() => app.close());

  const expectErrorBody = (body: any, status: number, code: string, path: string) => {
    expect(body).toEqual(
      expect.objectContaining({ statusCode: status, code, path, message: expect.any(String), timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }),
    );
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  };

  it('answers health with every dependency checked', async () => {
    const res = await app.request('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok', temporal: 'ok', storage: 'ok' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps a sane caller request id and replaces a hostile one', async () => {
    expect((await app.request('GET', '/api/health', { headers: { 'X-Request-Id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const bad = await app.request('GET', '/api/health', { headers: { 'X-Request-Id': 'a b<script>' } });
    expect(bad.headers.get('x-request-id')).not.toBe('a b<script>');
  });

  it('answers an unknown route with 404 in the spec error body', async () => {
    const res = await app.request('GET', '/api/nothing-here?x=1');
    expect(res.status).toBe(404);
    expectErrorBody(res.body, 404, 'ERR_REQ_003', '/api/nothing-here');
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await app.request('POST', '/api/auth/login', { rawBody: '{"email": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expectErrorBody(res.body, 400, 'ERR_REQ_001', '/api/auth/login');
  });

  it('refuses a body over the limit with 413', async () => {
    const res = await app.request('POST', '/api/auth/login', { body: { email: 'a@b.co', password: 'x'.repeat(4000) } });
    expect(res.status).toBe(413);
    expectErrorBody(res.body, 413, 'ERR_REQ_002', '/api/auth/login');
  });

  it('names the offending field on a validation error, and refuses unknown fields', async () => {
    const missing = await app.request('POST', '/api/auth/login', { body: { email: 'a@b.co' } });
    expect(missing.status).toBe(400);
    expectErrorBody(missing.body, 400, 'ERR_VALID_005', '/api/auth/login');
    expect(missing.body.relatedInfo).toEqual({ field: 'password', errors: [{ path: 'password', code: 'ERR_VALID_005', message: "'password' is required" }] });
    const unknown = await app.request('POST', '/api/auth/login', { body: { email: 'a@b.co', password: 'x', admin: true } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.relatedInfo).toEqual({ field: 'admin', errors: [{ path: 'admin', code: 'ERR_VALID_001', message: "'admin' is not allowed" }] });
  });

  it('answers a malformed or unknown credential with 401 on a protected route', async () => {
    const key = await app.request('POST', '/api/auth/resend-verification', { token: 'fm_live_notARealKey0000000000000000000000' });
    expect(key.status).toBe(401);
    expectErrorBody(key.body, 401, 'ERR_AKEY_002', '/api/auth/resend-verification');
    const jwt = await app.request('POST', '/api/auth/resend-verification', { token: 'eyJhbGciOiJIUzI1NiJ9.e30.x' });
    expect(jwt.status).toBe(401);
    expect(jwt.body.code).toBe('ERR_AUTH_004');
    const none = await app.request('POST', '/api/auth/resend-verification');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('ERR_AUTH_003');
  });
});

describe('rate limits', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ smtp: false, worker: false, env: { RATE_LIMIT_ANONYMOUS: '3' } });
  });
  afterAll(() => app.close());

  it('carries the limit headers on every response, errors included, then answers 429 with Retry-After', async () => {
    const before = Math.floor(Date.now() / 1000);
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = await app.request('GET', '/api/no-such-route');
      // The window started with the first request, somewhere between `before` and this answer (on a loaded
      // machine seconds after `before`): it resets 60 s after that, rounded up to the second.
      const answered = Math.ceil(Date.now() / 1000);
      expect(res.status).toBe(404);
      seen.push(res.headers.get('x-ratelimit-remaining'));
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(before);
      expect(reset).toBeLessThanOrEqual(answered + 61);
    }
    expect(seen).toEqual(['2', '1', '0']);
    const limited = await app.request('GET', '/api/no-such-route');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, code: 'ERR_QUOTA_003', path: '/api/no-such-route' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('does not count health probes', async () => {
    const res = await app.request('GET', '/api/health');
    expect(res.status).toBe(200);
  });
});
