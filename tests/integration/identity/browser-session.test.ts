import { startTestApp, type TestApp } from '../../support/app';
import { buildSignup } from '../../support/factories';
import { totp } from '../../support/totp';

/** The refresh cookie a response set: its value and attributes, as a browser would store them. */
function refreshCookie(headers: Headers): { value: string; attributes: string[] } | undefined {
  const cookie = headers.getSetCookie().find((c) => c.startsWith('formwork_refresh='));
  if (!cookie) return undefined;
  const [pair, ...attributes] = cookie.split(';').map((part) => part.trim());
  return { value: pair.slice('formwork_refresh='.length), attributes: attributes.map((a) => a.toLowerCase()) };
}

describe('browser sessions: the refresh token in an HttpOnly cookie (api/identity/browser-session.ts, docs/web.md)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const browser = (cookie?: string) => ({ 'X-Formwork-Session': 'cookie', ...(cookie ? { cookie: `formwork_refresh=${cookie}` } : {}) });

  it('signs up and in with the refresh token in an HttpOnly, SameSite=Strict cookie on /api/auth, never in the body', async () => {
    const input = buildSignup();
    const signup = await app.request('POST', '/api/auth/signup', { body: input, headers: browser() });
    expect(signup.status).toBe(201);
    expect(signup.body).toEqual({ user: expect.objectContaining({ email: input.email }), accessToken: expect.any(String), expiresIn: 900 });
    const set = refreshCookie(signup.headers);
    expect(set?.value).toMatch(/^fmr_/);
    expect(set?.attributes).toEqual(expect.arrayContaining(['path=/api/auth', 'samesite=strict', 'httponly']));
    // It lasts as long as the refresh token (REFRESH_TOKEN_TTL_SECONDS, 30 days by default).
    const expires = set!.attributes.find((a) => a.startsWith('expires='));
    expect(Date.parse(expires!.slice('expires='.length)) - Date.now()).toBeGreaterThan(29 * 24 * 3600 * 1000);
    // Not Secure on plain-HTTP development; production sets it (and refuses plain HTTP anyway).
    expect(set?.attributes).not.toContain('secure');
    expect(signup.headers.get('cache-control')).toBe('no-store');

    const login = await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password }, headers: browser() });
    expect(login.status).toBe(200);
    expect(login.body.refreshToken).toBeUndefined();
    expect(refreshCookie(login.headers)?.value).toMatch(/^fmr_/);

    // Without the header the contract's answer is unchanged: tokens in the body, no cookie.
    const api = await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password } });
    expect(api.body.refreshToken).toMatch(/^fmr_/);
    expect(refreshCookie(api.headers)).toBeUndefined();
  });

  it('refreshes from the cookie alone, rotating it; the old cookie is spent; logout clears it and ends the session', async () => {
    const input = buildSignup();
    const signup = await app.request('POST', '/api/auth/signup', { body: input, headers: browser() });
    const first = refreshCookie(signup.headers)!.value;

    const refreshed = await app.request('POST', '/api/auth/refresh', { headers: browser(first) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual({ user: expect.objectContaining({ email: input.email }), accessToken: expect.any(String), expiresIn: 900 });
    const second = refreshCookie(refreshed.headers)!.value;
    expect(second).not.toBe(first);
    const me = await app.request('GET', '/api/users/me', { token: refreshed.body.accessToken });
    expect(me.body.email).toBe(input.email);

    // A spent refresh token is refused (and, as reuse, ends its family: contract §2).
    const replay = await app.request('POST', '/api/auth/refresh', { headers: browser(first) });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('ERR_AUTH_004');

    const fresh = await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password }, headers: browser() });
    const current = refreshCookie(fresh.headers)!.value;
    const out = await app.request('POST', '/api/auth/logout', { headers: browser(current) });
    expect(out.status).toBe(200);
    const cleared = refreshCookie(out.headers);
    expect(cleared?.value).toBe('');
    expect(cleared?.attributes).toEqual(expect.arrayContaining(['path=/api/auth', 'expires=thu, 01 jan 1970 00:00:00 gmt']));
    const after = await app.request('POST', '/api/auth/refresh', { headers: browser(current) });
    expect(after.status).toBe(401);
  });

  it('refuses a refresh without the cookie, a session header of another value, and a page of another origin (CSRF)', async () => {
    const input = buildSignup();
    const signup = await app.request('POST', '/api/auth/signup', { body: input, headers: browser() });
    const token = refreshCookie(signup.headers)!.value;

    const none = await app.request('POST', '/api/auth/refresh', { headers: browser() });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ code: 'ERR_AUTH_004', statusCode: 401 });

    const other = await app.request('POST', '/api/auth/refresh', { headers: { 'X-Formwork-Session': 'body', cookie: `formwork_refresh=${token}` } });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'X-Formwork-Session' } });

    const foreign = await app.request('POST', '/api/auth/refresh', { headers: { ...browser(token), Origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ code: 'ERR_AUTH_005' });
    const foreignLogin = await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password }, headers: { ...browser(), Origin: 'https://evil.example' } });
    expect(foreignLogin.status).toBe(403);
    expect(refreshCookie(foreignLogin.headers)).toBeUndefined();

    // The refused tries spent nothing: the page's own origin refreshes with the same cookie.
    const own = await app.request('POST', '/api/auth/refresh', { headers: { ...browser(token), Origin: app.url } });
    expect(own.status).toBe(200);

    // An API client without the header still needs the body's token.
    const bodyless = await app.request('POST', '/api/auth/refresh', { headers: { cookie: `formwork_refresh=${token}` } });
    expect(bodyless.status).toBe(400);
  });

  it('enabling 2FA and changing the password hand the browser its new session in the cookie; the old cookie is dead', async () => {
    const input = buildSignup();
    const signup = await app.request('POST', '/api/auth/signup', { body: input, headers: browser() });
    const first = refreshCookie(signup.headers)!.value;
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: signup.body.accessToken });
    expect(setup.status).toBe(200);

    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token: signup.body.accessToken, headers: browser(), body: { code: totp(setup.body.secret) } });
    expect(verify.status).toBe(200);
    expect(verify.body).toEqual({ success: true, accessToken: expect.any(String), expiresIn: 900 });
    const second = refreshCookie(verify.headers)!.value;
    expect((await app.request('POST', '/api/auth/refresh', { headers: browser(first) })).status).toBe(401);
    const renewed = await app.request('POST', '/api/auth/refresh', { headers: browser(second) });
    expect(renewed.status).toBe(200);
    const third = refreshCookie(renewed.headers)!.value;

    const changed = await app.request('POST', '/api/users/me/change-password', {
      token: renewed.body.accessToken,
      headers: browser(),
      body: { currentPassword: input.password, newPassword: 'a brand new passphrase 9' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.refreshToken).toBeUndefined();
    const fourth = refreshCookie(changed.headers)!.value;
    expect((await app.request('POST', '/api/auth/refresh', { headers: browser(third) })).status).toBe(401);
    expect((await app.request('POST', '/api/auth/refresh', { headers: browser(fourth) })).status).toBe(200);
  });
});
