import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { totp } from '../../support/totp';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('users: two-factor authentication (spec "Two-factor authentication", contract §2 login)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const status = async (user: SignedUpUser) => (await app.request('GET', '/api/users/me/2fa/status', { token: user.accessToken })).body;
  const login = (user: SignedUpUser, code?: string) =>
    app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password, ...(code === undefined ? {} : { code }) } });

  /** Enables and verifies 2FA; returns the secret and backup codes. `user` continues with the fresh session verify answers. */
  async function enable(user: SignedUpUser): Promise<{ secret: string; backupCodes: string[] }> {
    const res = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(res.body.secret) } });
    expect(verify.body).toEqual({ success: true, accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: expect.any(Number) });
    Object.assign(user, { accessToken: verify.body.accessToken, refreshToken: verify.body.refreshToken });
    return res.body;
  }

  it('sets up with a QR code, secret and ten backup codes, but turns on only after verify', async () => {
    const user = await signUp(app);
    expect(await status(user)).toEqual({ enabled: false, backupCodesRemaining: 0 });

    const res = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { qrCode, secret, backupCodes, otpauthUrl } = res.body;
    expect(qrCode).toMatch(/^data:image\/png;base64,/);
    expect(Buffer.from(qrCode.split(',')[1], 'base64').subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUrl).toBe(`otpauth://totp/Formwork:${encodeURIComponent(user.email)}?secret=${secret}&issuer=Formwork&algorithm=SHA1&digits=6&period=30`);
    expect(backupCodes).toHaveLength(10);
    expect(new Set(backupCodes).size).toBe(10);

    // Not on yet: login needs no code, and the status says so.
    expect(await status(user)).toEqual({ enabled: false, backupCodesRemaining: 0 });
    expect((await login(user)).status).toBe(200);

    const wrong = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(secret, Date.now() + 10 * 60_000) } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('ERR_AUTH_012');
    const notDigits = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: 'abcdef' } });
    expect(notDigits.body.code).toBe('ERR_AUTH_012');

    // The code an authenticator app computes from the base32 secret (RFC 6238, not speakeasy).
    const ok = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(secret) } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success: true });
    // Enabling ended the sessions signed in without 2FA (docs/security.md): continue with the fresh one.
    user.accessToken = ok.body.accessToken;
    expect(await status(user)).toEqual({ enabled: true, backupCodesRemaining: 10 });
    expect((await app.request('GET', '/api/users/me', { token: user.accessToken })).body.twoFactorEnabled).toBe(true);
    const [row] = await app.services.db.query(`SELECT code_hash FROM backup_codes WHERE user_id = $1 LIMIT 1`, [user.id]);
    expect(backupCodes).not.toContain(row.code_hash);
  });

  it('refuses verify before enable (ERR_AUTH_014) and enable while on (ERR_AUTH_013)', async () => {
    const user = await signUp(app);
    const early = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: '123456' } });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('ERR_AUTH_014');
    const missing = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: {} });
    expect(missing.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'code' } });
    await enable(user);
    const again = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ERR_AUTH_013');
  });

  it('asks for a code at login: missing or wrong 401 ERR_AUTH_012; a TOTP works once', async () => {
    const user = await signUp(app);
    const { secret } = await enable(user);
    const without = await login(user);
    expect(without.status).toBe(401);
    expect(without.body).toMatchObject({ code: 'ERR_AUTH_012', relatedInfo: { field: 'code' } });
    const wrong = await login(user, totp(secret, Date.now() + 10 * 60_000));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('ERR_AUTH_012');
    // Wrong password still reads as wrong credentials, before any 2FA question.
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'nope nope', code: totp(secret) } })).body.code).toBe('ERR_AUTH_001');

    // Verify used the current step; the next step's code is inside the one-step window.
    const next = totp(secret, Date.now() + 30_000);
    const ok = await login(user, next);
    expect(ok.status).toBe(200);
    expect(ok.body.user.twoFactorEnabled).toBe(true);
    const replay = await login(user, next);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('ERR_AUTH_012');
  });

  it('accepts each backup code once, typed loosely', async () => {
    const user = await signUp(app);
    const { backupCodes } = await enable(user);
    const ok = await login(user, ` ${backupCodes[0].toUpperCase()} `);
    expect(ok.status).toBe(200);
    expect(await status(user)).toEqual({ enabled: true, backupCodesRemaining: 9 });
    const reused = await login(user, backupCodes[0]);
    expect(reused.status).toBe(401);
    expect(reused.body.code).toBe('ERR_AUTH_012');
    expect((await login(user, 'zzzzz-zzzzz')).body.code).toBe('ERR_AUTH_012');
    expect((await login(user, backupCodes[1].replace('-', ''))).status).toBe(200);
  });

  it('regenerates backup codes with the password: old ones stop working', async () => {
    const user = await signUp(app);
    const { backupCodes: old } = await enable(user);
    const wrong = await app.request('POST', '/api/users/me/2fa/backup-codes', { token: user.accessToken, body: { password: 'not it at all' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ERR_AUTH_002');
    const res = await app.request('POST', '/api/users/me/2fa/backup-codes', { token: user.accessToken, body: { password: user.password } });
    expect(res.status).toBe(200);
    expect(res.body.backupCodes).toHaveLength(10);
    expect(res.body.backupCodes.filter((c: string) => old.includes(c))).toEqual([]);
    expect(await status(user)).toEqual({ enabled: true, backupCodesRemaining: 10 });
    expect((await login(user, old[2])).body.code).toBe('ERR_AUTH_012');
    expect((await login(user, res.body.backupCodes[2])).status).toBe(200);
  });

  it('disables with the password and a code; login needs no code afterwards; backup codes need 2FA on', async () => {
    const user = await signUp(app);
    const { backupCodes } = await enable(user);
    const wrong = await app.request('POST', '/api/users/me/2fa/disable', { token: user.accessToken, body: { password: 'wrong password', code: backupCodes[0] } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ERR_AUTH_002');
    expect((await login(user)).status).toBe(401);

    const res = await app.request('POST', '/api/users/me/2fa/disable', { token: user.accessToken, body: { password: user.password, code: backupCodes[0] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(await status(user)).toEqual({ enabled: false, backupCodesRemaining: 0 });
    expect((await login(user)).status).toBe(200);
    const [row] = await app.services.db.query(`SELECT two_factor_secret, (SELECT count(*)::int FROM backup_codes WHERE user_id = $1) AS codes FROM users WHERE id = $1`, [user.id]);
    expect(row).toEqual({ two_factor_secret: null, codes: 0 });

    const codes = await app.request('POST', '/api/users/me/2fa/backup-codes', { token: user.accessToken, body: { password: user.password } });
    expect(codes.status).toBe(409);
    expect(codes.body.code).toBe('ERR_AUTH_014');
    // And it can be set up again with a fresh secret.
    expect((await enable(user)).secret).toMatch(/^[A-Z2-7]{32}$/);
  });
});
