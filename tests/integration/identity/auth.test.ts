import { startTestApp, type TestApp } from '../../support/app';
import { buildSignup, linkToken, signUp } from '../../support/factories';

describe('accounts: signup, login, refresh, logout (contract §2)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('signs up, e-mails a verification link through the workflow, and verifies', async () => {
    const input = buildSignup();
    const res = await app.request('POST', '/api/auth/signup', { body: input });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: expect.objectContaining({ id: expect.any(String), email: input.email, name: input.name, emailVerified: false, twoFactorEnabled: false }),
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^fmr_/),
      expiresIn: 900,
    });

    const mail = await app.smtp!.waitForMessage((m) => m.to.includes(input.email));
    expect(mail.subject).toBe('Confirm your e-mail address');
    expect(mail.html).toContain('Confirm e-mail address');
    const token = linkToken(mail, '/verify-email');
    expect(mail.text).toContain(`${app.url}/verify-email?token=`);

    const verified = await app.request('POST', '/api/auth/verify-email', { body: { token } });
    expect(verified.status).toBe(200);
    const again = await app.request('POST', '/api/auth/verify-email', { body: { token } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('ERR_AUTH_007');

    const login = await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password } });
    expect(login.status).toBe(200);
    expect(login.body.user.emailVerified).toBe(true);
  });

  it('creates the personal project with the user as owner', async () => {
    const user = await signUp(app);
    const rows = await app.services.db.query(
      `SELECT p.is_personal, m.role FROM projects p JOIN memberships m ON m.project_id = p.id WHERE m.user_id = $1`,
      [user.id],
    );
    expect(rows).toEqual([{ is_personal: true, role: 'owner' }]);
  });

  it('stores only a slow hash of the password', async () => {
    const user = await signUp(app);
    const [row] = await app.services.db.query(`SELECT password_hash FROM users WHERE id = $1`, [user.id]);
    expect(row.password_hash).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect(row.password_hash).not.toContain(user.password);
  });

  it('refuses a taken e-mail, a malformed e-mail and a short password', async () => {
    const user = await signUp(app);
    const dup = await app.request('POST', '/api/auth/signup', { body: buildSignup({ email: user.email.toUpperCase() }) });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ERR_USER_002');
    const bad = await app.request('POST', '/api/auth/signup', { body: buildSignup({ email: 'not-an-email' }) });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'ERR_USER_003', relatedInfo: { field: 'email' } });
    const short = await app.request('POST', '/api/auth/signup', { body: buildSignup({ password: 'short' }) });
    expect(short.status).toBe(400);
    expect(short.body.relatedInfo).toEqual({ field: 'password', errors: [{ path: 'password', code: 'ERR_VALID_001', message: expect.any(String) }] });
  });

  it('refuses wrong credentials with ERR_AUTH_001, the same for unknown accounts', async () => {
    const user = await signUp(app);
    const wrong = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'wrong password' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('ERR_AUTH_001');
    const unknown = await app.request('POST', '/api/auth/login', { body: { email: 'nobody@example.com', password: 'whatever1' } });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ code: 'ERR_AUTH_001', message: wrong.body.message });
  });

  it('rotates refresh tokens and revokes the family when a used one comes back', async () => {
    const user = await signUp(app);
    const first = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(first.status).toBe(200);
    expect(first.body.refreshToken).not.toBe(user.refreshToken);
    expect(first.body.user.id).toBe(user.id);

    const replay = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('ERR_AUTH_004');
    // The replay revoked the family: the token issued by the first rotation is dead too.
    const after = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: first.body.refreshToken } });
    expect(after.status).toBe(401);
  });

  it('lets only one of two concurrent refreshes with the same token win', async () => {
    const user = await signUp(app);
    const results = await Promise.all([0, 1].map(() => app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('logs out: the refresh token stops working', async () => {
    const user = await signUp(app);
    const out = await app.request('POST', '/api/auth/logout', { body: { refreshToken: user.refreshToken } });
    expect(out.status).toBe(200);
    const refresh = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(refresh.status).toBe(401);
  });

  it('resets a forgotten password through the e-mailed link and signs out other sessions', async () => {
    const user = await signUp(app);
    const unknown = await app.request('POST', '/api/auth/forgot-password', { body: { email: 'nobody@example.com' } });
    const known = await app.request('POST', '/api/auth/forgot-password', { body: { email: user.email } });
    expect(known.status).toBe(200);
    expect(unknown.body).toEqual(known.body);

    const mail = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Reset your password');
    const token = linkToken(mail, '/reset-password');
    const reset = await app.request('POST', '/api/auth/reset-password', { body: { token, newPassword: 'a brand new secret' } });
    expect(reset.status).toBe(200);

    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'a brand new secret' } })).status).toBe(200);
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status).toBe(401);
    const reused = await app.request('POST', '/api/auth/reset-password', { body: { token, newPassword: 'another secret1' } });
    expect(reused.body.code).toBe('ERR_AUTH_007');
  });

  it('resends the verification e-mail to a signed-in, unverified user', async () => {
    const user = await signUp(app);
    const first = await app.smtp!.waitForMessage((m) => m.to.includes(user.email));
    const res = await app.request('POST', '/api/auth/resend-verification', { token: user.accessToken });
    expect(res.status).toBe(200);
    const second = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m !== first);
    expect(linkToken(second, '/verify-email')).not.toBe(linkToken(first, '/verify-email'));
  });
});
