import jwt from 'jsonwebtoken';
import { startTestApp, type TestApp } from '../../support/app';
import { linkToken, signUp, type SignedUpUser } from '../../support/factories';
import { totp } from '../../support/totp';

/**
 * docs/security.md, "Credentials: sessions and revocation": an access token lives only as long as
 * its session (the refresh-token family it was issued with), not until its 15-minute expiry.
 */
describe('sessions: access tokens end with their session', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const me = (accessToken: string) => app.request('GET', '/api/users/me', { token: accessToken });
  const login = (user: SignedUpUser, code?: string) =>
    app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password, ...(code === undefined ? {} : { code }) } });

  /** A second, independent session of the same user (another device). */
  async function secondSession(user: SignedUpUser): Promise<{ accessToken: string; refreshToken: string }> {
    const res = await login(user);
    expect(res.status).toBe(200);
    return res.body;
  }

  function expectEnded(res: { status: number; body: any }) {
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'ERR_AUTH_004', message: 'Session has ended: sign in again' });
  }

  /** Asks for a reset link and returns its token (one e-mail per call, told apart by the token). */
  async function resetLink(user: SignedUpUser, seen: string[] = []): Promise<string> {
    const res = await app.request('POST', '/api/auth/forgot-password', { body: { email: user.email } });
    expect(res.status).toBe(200);
    const mail = await app.smtp!.waitForMessage(
      (m) => m.to.includes(user.email) && m.subject === 'Reset your password' && !seen.includes(linkToken(m, '/reset-password')),
    );
    return linkToken(mail, '/reset-password');
  }

  it('logout ends that session at once: its access token is refused, other sessions keep working', async () => {
    const user = await signUp(app);
    const other = await secondSession(user);
    expect((await me(user.accessToken)).status).toBe(200);

    const out = await app.request('POST', '/api/auth/logout', { body: { refreshToken: user.refreshToken } });
    expect(out.status).toBe(200);
    expectEnded(await me(user.accessToken));
    // Every JWT route, not only /me: the project guard refuses it too.
    expect((await app.request('GET', '/api/teams/members', { token: user.accessToken })).status).toBe(401);
    expect((await me(other.accessToken)).status).toBe(200);
  });

  it('keeps the access token of a session across refreshes, and ends it when a used refresh token comes back', async () => {
    const user = await signUp(app);
    const rotated = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(rotated.status).toBe(200);
    // Rotation continues the session: the earlier access token of the family still works.
    expect((await me(user.accessToken)).status).toBe(200);
    expect((await me(rotated.body.accessToken)).status).toBe(200);

    // Replaying the rotated token (it leaked) revokes the family: both access tokens end.
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status).toBe(401);
    expectEnded(await me(user.accessToken));
    expectEnded(await me(rotated.body.accessToken));
  });

  it('a password change ends every session, answers a fresh one, and kills outstanding reset links', async () => {
    const user = await signUp(app);
    const other = await secondSession(user);
    const link = await resetLink(user);

    const res = await app.request('POST', '/api/users/me/change-password', { token: user.accessToken, body: { currentPassword: user.password, newPassword: 'a changed password' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({ message: expect.any(String), accessToken: expect.any(String), refreshToken: expect.stringMatching(/^fmr_/), expiresIn: 900 });

    expectEnded(await me(user.accessToken));
    expectEnded(await me(other.accessToken));
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: other.refreshToken } })).status).toBe(401);
    expect((await me(res.body.accessToken)).status).toBe(200);
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: res.body.refreshToken } })).status).toBe(200);

    // The link mailed before the change cannot set the password again.
    const reuse = await app.request('POST', '/api/auth/reset-password', { body: { token: link, newPassword: 'attacker chosen 1' } });
    expect(reuse.status).toBe(400);
    expect(reuse.body.code).toBe('ERR_AUTH_007');
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'a changed password' } })).status).toBe(200);
  });

  it('a password reset ends every session and every other reset link', async () => {
    const user = await signUp(app);
    const other = await secondSession(user);
    const first = await resetLink(user);
    const second = await resetLink(user, [first]);

    const reset = await app.request('POST', '/api/auth/reset-password', { body: { token: second, newPassword: 'the reset password' } });
    expect(reset.status).toBe(200);
    expectEnded(await me(user.accessToken));
    expectEnded(await me(other.accessToken));

    const older = await app.request('POST', '/api/auth/reset-password', { body: { token: first, newPassword: 'someone else again' } });
    expect(older.status).toBe(400);
    expect(older.body.code).toBe('ERR_AUTH_007');
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'the reset password' } })).status).toBe(200);
  });

  it('enabling 2FA ends the sessions signed in without it; the verify answer carries a fresh session', async () => {
    const user = await signUp(app);
    const other = await secondSession(user);
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    expect(setup.status).toBe(200);
    // Setup alone changes nothing yet.
    expect((await me(other.accessToken)).status).toBe(200);

    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(setup.body.secret) } });
    expect(verify.status).toBe(200);
    expect(verify.headers.get('cache-control')).toBe('no-store');
    expect(verify.body).toEqual({ success: true, accessToken: expect.any(String), refreshToken: expect.stringMatching(/^fmr_/), expiresIn: 900 });
    expectEnded(await me(user.accessToken));
    expectEnded(await me(other.accessToken));
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: other.refreshToken } })).status).toBe(401);
    const fresh = await me(verify.body.accessToken);
    expect(fresh.status).toBe(200);
    expect(fresh.body.twoFactorEnabled).toBe(true);
  });

  it('disabling 2FA needs the password and a current code (TOTP or backup code)', async () => {
    const user = await signUp(app);
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(setup.body.secret) } });
    const token = verify.body.accessToken as string;
    const disable = (body: unknown) => app.request('POST', '/api/users/me/2fa/disable', { token, body });
    const enabled = async () => (await app.request('GET', '/api/users/me/2fa/status', { token })).body.enabled;

    const noCode = await disable({ password: user.password });
    expect(noCode.status).toBe(401);
    expect(noCode.body).toMatchObject({ code: 'ERR_AUTH_012', relatedInfo: { field: 'code' } });
    const wrongCode = await disable({ password: user.password, code: totp(setup.body.secret, Date.now() + 10 * 60_000) });
    expect(wrongCode.status).toBe(401);
    expect(wrongCode.body).toMatchObject({ code: 'ERR_AUTH_012', relatedInfo: { field: 'code' } });
    // A right code with a wrong password: the password is asked first.
    const wrongPassword = await disable({ password: 'not the password', code: setup.body.backupCodes[0] });
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body).toMatchObject({ code: 'ERR_AUTH_002', relatedInfo: { field: 'password' } });
    // Hostile shapes are refused by validation, not evaluated.
    for (const code of [{ $ne: null }, ['123456'], 'x'.repeat(33)]) {
      const res = await disable({ password: user.password, code });
      expect([res.status, res.body.code, res.body.relatedInfo.field]).toEqual([400, 'ERR_VALID_001', 'code']);
    }
    expect(await enabled()).toBe(true);

    // The backup code was not spent by the refused attempt: it disables now.
    const ok = await disable({ password: user.password, code: ` ${setup.body.backupCodes[0]} ` });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect(await enabled()).toBe(false);
    expect((await login(user)).status).toBe(200);
  });

  it('disables with a TOTP code too', async () => {
    const user = await signUp(app);
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(setup.body.secret) } });
    // Verify used the current time step; the next one is inside the accepted window.
    const res = await app.request('POST', '/api/users/me/2fa/disable', {
      token: verify.body.accessToken,
      body: { password: user.password, code: totp(setup.body.secret, Date.now() + 30_000) },
    });
    expect(res.status).toBe(200);
    expect((await app.request('GET', '/api/users/me/2fa/status', { token: verify.body.accessToken })).body.enabled).toBe(false);
  });

  it('refuses a validly signed token without a session, or naming another user\'s session', async () => {
    const alice = await signUp(app);
    const bob = await signUp(app);
    const secret = app.services.secret;
    const sign = (claims: object, sub: string) => jwt.sign({ typ: 'access', ...claims }, secret, { algorithm: 'HS256', subject: sub, expiresIn: 900, issuer: 'formwork' });
    const bobSession = (jwt.decode(bob.accessToken) as { sid: string }).sid;
    expect(bobSession).toMatch(/^[0-9a-f-]{36}$/);

    for (const token of [sign({}, alice.id), sign({ sid: 'not-a-uuid' }, alice.id), sign({ sid: bobSession }, alice.id)]) {
      const res = await me(token);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('ERR_AUTH_004');
    }
    expect((await me(alice.accessToken)).body.id).toBe(alice.id);
  });
});
