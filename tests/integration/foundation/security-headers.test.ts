import { randomBytes } from 'node:crypto';
import { writeFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp } from '../../support/factories';
import { waitFor } from '../../support/wait';

describe('security headers and health (development)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  });
  afterAll(() => app.close());

  const expectBaseHeaders = (headers: Headers) => {
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
  };

  it('heads every JSON answer, errors included, and leaves HSTS to production', async () => {
    const health = await app.request('GET', '/api/health');
    expect(health.status).toBe(200);
    expectBaseHeaders(health.headers);
    expect(health.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(health.headers.get('strict-transport-security')).toBeNull();
    expect(health.headers.get('cache-control')).toBeNull();

    const missing = await app.request('GET', '/api/nothing-here');
    expect(missing.status).toBe(404);
    expectBaseHeaders(missing.headers);
    const malformed = await app.request('POST', '/api/auth/login', { rawBody: '{"email": ', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expectBaseHeaders(malformed.headers);
  });

  it('answers every credential with Cache-Control: no-store, and only those', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { email: `h-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery', name: 'H' } });
    expect(signup.status).toBe(201);
    expect(signup.body.accessToken).toEqual(expect.any(String));
    expect(signup.headers.get('cache-control')).toBe('no-store');

    const user = await signUp(app, { verified: true });
    const login = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(login.status).toBe(200);
    expect(login.headers.get('cache-control')).toBe('no-store');
    expectBaseHeaders(login.headers);

    const refresh = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: login.body.refreshToken } });
    expect(refresh.status).toBe(200);
    expect(refresh.headers.get('cache-control')).toBe('no-store');

    const key = await app.request('POST', '/api/api-keys', { token: login.body.accessToken, body: { name: 'headers' } });
    expect(key.status).toBe(201);
    expect(JSON.stringify(key.body)).toContain('fm_live_');
    expect(key.headers.get('cache-control')).toBe('no-store');

    const hook = await app.request('POST', '/api/webhooks', { token: login.body.accessToken, body: { url: 'http://127.0.0.1:9/hooks', events: ['document.generated'] } });
    expect(hook.status).toBe(201);
    expect(hook.body.secret).toEqual(expect.any(String));
    expect(hook.headers.get('cache-control')).toBe('no-store');

    // Answers without a credential stay cacheable as before: the key list shows prefixes only.
    const list = await app.request('GET', '/api/api-keys', { token: login.body.accessToken });
    expect(list.status).toBe(200);
    expect(list.headers.get('cache-control')).toBeNull();
    expect((await app.request('GET', `/api/webhooks/${hook.body.id}`, { token: login.body.accessToken })).headers.get('cache-control')).toBeNull();
  });

  it('tells anonymous callers which dependency failed, never its error text', async () => {
    // Break local storage: its health probe writes under <artefacts>/.tmp, now a plain file.
    const root = (app.services.storage as unknown as { rootDir: string }).rootDir;
    expect(root).toContain(app.dataDir);
    const probeDir = join(root, '.tmp');
    await rm(probeDir, { recursive: true, force: true });
    await writeFile(probeDir, 'not a directory');
    try {
      const res = await waitFor(
        async () => {
          const r = await app.request('GET', '/api/health');
          return r.status === 503 ? r : undefined;
        },
        { timeoutMs: 30_000, what: 'health to report the broken storage' },
      );
      expect(res.body).toMatchObject({ statusCode: 503, code: 'ERR_INTERNAL_002', relatedInfo: { checks: { database: 'ok', temporal: 'ok', storage: 'error' } } });
      expect(res.text).not.toContain(app.dataDir);
      expect(res.text).not.toMatch(/EEXIST|ENOTDIR|mkdir|\.tmp/);
      expectBaseHeaders(res.headers);
    } finally {
      await rm(probeDir, { force: true });
      await mkdir(probeDir, { recursive: true });
    }
    await waitFor(async () => (await app.request('GET', '/api/health')).status === 200, { timeoutMs: 30_000, what: 'health to recover' });
  });
});

describe('security headers (production)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      env: { NODE_ENV: 'production', TRUST_PROXY: 'true', ENCRYPTION_KEY: randomBytes(32).toString('base64') },
    });
  });
  afterAll(() => app.close());

  it('sends HSTS in production, on answers and on refusals alike', async () => {
    const health = await app.request('GET', '/api/health', { headers: { 'X-Forwarded-Proto': 'https' } });
    expect(health.status).toBe(200);
    expect(health.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');

    const plain = await app.request('POST', '/api/auth/login', { body: { email: 'a@example.com', password: 'x' } });
    expect(plain.body.code).toBe('ERR_REQ_004');
    expect(plain.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
  });
});
