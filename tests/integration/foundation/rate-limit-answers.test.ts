import { createKey } from '../../support/api-keys';
import { startTestApp, type TestApp, type TestResponse } from '../../support/app';
import { approvalMail, approverEmail, magicToken, manualGate, submit } from '../../support/approvals';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { createTemplate } from '../../support/templates';

/**
 * Every 429 the service answers carries `retryAfter` (whole seconds) at the top level of the error
 * body, the same value in `Retry-After` and in `relatedInfo.retryAfter` (docs/errors.md), whichever
 * limit refused; and every answer, health included, carries the X-RateLimit-* headers.
 */
describe('rate limits: every 429 says when to come back', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  beforeAll(async () => {
    app = await startTestApp({
      // Behind one proxy, so each check below can be its own client address.
      env: { TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '4', RATE_LIMIT_API_KEY: '5', PREVIEW_RATE_LIMIT_PER_MINUTE: '1' },
    });
    ws = await flowWorkspace(app);
  });
  afterAll(() => app.close());

  let n = 0;
  const from = (address = `198.51.100.${++n}`) => ({ 'X-Forwarded-For': address });

  function expectWait(res: TestResponse, code: string, path: string): void {
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ statusCode: 429, code, path, retryAfter: expect.any(Number) });
    expect(Number.isInteger(res.body.retryAfter)).toBe(true);
    expect(res.body.retryAfter).toBeGreaterThan(0);
    expect(res.body.relatedInfo.retryAfter).toBe(res.body.retryAfter);
    expect(res.headers.get('retry-after')).toBe(String(res.body.retryAfter));
    expect(res.body).not.toHaveProperty('retryAfterSeconds');
    expect(res.body.relatedInfo).not.toHaveProperty('retryAfterSeconds');
  }

  it("the general limit on a gate's /validate (API key)", async () => {
    const gate = await createGate(app, ws.key, { name: 'Limited' });
    const key = (await createKey(app, ws.user.accessToken)).plainKey;
    const path = `/api/flow/gates/${gate.id}/validate`;
    for (let i = 0; i < 5; i++) {
      const res = await app.request('POST', path, { token: key, body: { amount: i } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
    }
    const limited = await app.request('POST', path, { token: key, body: { amount: 5 } });
    expectWait(limited, 'ERR_QUOTA_003', path);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('the anonymous limit', async () => {
    const address = from();
    for (let i = 0; i < 4; i++) expect((await app.request('GET', '/api/no-such-route', { headers: address })).status).toBe(404);
    expectWait(await app.request('GET', '/api/no-such-route', { headers: address }), 'ERR_QUOTA_003', '/api/no-such-route');
  });

  it('the review re-send of a magic link (retryAfter, not retryAfterSeconds)', async () => {
    const email = approverEmail();
    const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 120, onTimeout: 'reject' });
    await submit(app, ws, gate);
    let token = magicToken(await approvalMail(app, email));
    for (let sent = 2; sent <= 4; sent++) {
      const res = await app.request('POST', '/api/flow/review/resend', { body: { token, email }, headers: from() });
      expect([res.status, res.body]).toEqual([200, { success: true }]);
      token = magicToken(await approvalMail(app, email, sent));
    }
    expectWait(await app.request('POST', '/api/flow/review/resend', { body: { token, email }, headers: from() }), 'ERR_QUOTA_003', '/api/flow/review/resend');
  });

  it('the sign-in attempt limit', async () => {
    for (let i = 0; i < 5; i++) {
      const wrong = await app.request('POST', '/api/auth/login', { body: { email: ws.user.email, password: `wrong ${i}` }, headers: from() });
      expect(wrong.status).toBe(401);
    }
    const locked = await app.request('POST', '/api/auth/login', { body: { email: ws.user.email, password: 'wrong again' }, headers: from() });
    expectWait(locked, 'ERR_AUTH_015', '/api/auth/login');
  });

  it('the template preview limit', async () => {
    const template = await createTemplate(app, ws.user.accessToken);
    const path = `/api/templates/${template.id}/preview`;
    const body = { format: 'excel', variables: { customer: 'Ada' } };
    expect((await app.request('POST', path, { token: ws.user.accessToken, body })).status).toBe(200);
    expectWait(await app.request('POST', path, { token: ws.user.accessToken, body }), 'ERR_LIMIT_014', path);
  });

  it('health answers carry the limit headers without spending the budget', async () => {
    const address = from();
    const first = await app.request('GET', '/api/health', { headers: address });
    const second = await app.request('GET', '/api/health', { headers: address });
    for (const res of [first, second]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('4');
      expect(res.headers.get('x-ratelimit-remaining')).toBe('4');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    }
    // The first counted request from that address sees the whole budget less itself.
    expect((await app.request('GET', '/api/no-such-route', { headers: address })).headers.get('x-ratelimit-remaining')).toBe('3');
    expect((await app.request('GET', '/api/health', { headers: address })).headers.get('x-ratelimit-remaining')).toBe('3');
    // A refused credential is answered after the limiter too: counted as anonymous, with the headers.
    const refused = await app.request('GET', '/api/templates', { token: 'fmk_not_a_real_key', headers: address });
    expect(refused.status).toBe(401);
    expect([refused.headers.get('x-ratelimit-limit'), refused.headers.get('x-ratelimit-remaining')]).toEqual(['4', '2']);
  });
});
