import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp } from '../../support/factories';

describe('users: profile, password, e-mail preferences, export (spec "Users (JWT only)")', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('answers the user object', async () => {
    const user = await signUp(app);
    const res = await app.request('GET', '/api/users/me', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: user.id,
      email: user.email,
      name: expect.any(String),
      profilePictureUrl: null,
      emailVerified: false,
      twoFactorEnabled: false,
      timezone: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('needs a credential (401 ERR_AUTH_003) and refuses API keys on every user endpoint (403 ERR_AUTH_005)', async () => {
    expect((await app.request('GET', '/api/users/me')).body.code).toBe('ERR_AUTH_003');
    const user = await signUp(app, { verified: true });
    const created = await app.request('POST', '/api/api-keys', { token: user.accessToken, body: { name: 'server' } });
    expect(created.status).toBe(201);
    const key = created.body.plainKey as string;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/users/me'],
      ['PATCH', '/api/users/me', { name: 'x' }],
      ['POST', '/api/users/me/change-password', { currentPassword: user.password, newPassword: 'another password' }],
      ['PATCH', '/api/users/me/email-preferences', { weeklyDigest: true }],
      ['GET', '/api/users/me/avatar'],
      ['GET', '/api/users/me/avatar/requirements'],
      ['POST', '/api/users/me/avatar', { imageData: 'AAAA' }],
      ['DELETE', '/api/users/me/avatar'],
      ['GET', '/api/users/me/export'],
      ['DELETE', '/api/users/me', { password: user.password }],
      ['GET', '/api/users/me/2fa/status'],
      ['POST', '/api/users/me/2fa/enable'],
      ['POST', '/api/users/me/2fa/verify', { code: '123456' }],
      ['POST', '/api/users/me/2fa/disable', { password: user.password }],
      ['POST', '/api/users/me/2fa/backup-codes', { password: user.password }],
    ];
    for (const [method, path, body] of calls) {
      const res = await app.request(method, path, { token: key, body });
      expect({ path, method, status: res.status, code: res.body.code }).toEqual({ path, method, status: 403, code: 'ERR_AUTH_005' });
    }
    // Nothing happened to the account through the key.
    expect((await app.request('GET', '/api/users/me', { token: user.accessToken })).status).toBe(200);
  });

  it('updates name and timezone, normalising the zone name and clearing it with null', async () => {
    const user = await signUp(app);
    const res = await app.request('PATCH', '/api/users/me', { token: user.accessToken, body: { name: '  Ada Lovelace ', timezone: 'europe/london' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: user.id, name: 'Ada Lovelace', timezone: 'Europe/London' });
    expect(res.body.updatedAt > res.body.createdAt).toBe(true);
    expect((await app.request('GET', '/api/users/me', { token: user.accessToken })).body).toMatchObject({ name: 'Ada Lovelace', timezone: 'Europe/London' });

    const cleared = await app.request('PATCH', '/api/users/me', { token: user.accessToken, body: { timezone: null } });
    expect(cleared.body).toMatchObject({ name: 'Ada Lovelace', timezone: null });
    const untouched = await app.request('PATCH', '/api/users/me', { token: user.accessToken, body: {} });
    expect(untouched.status).toBe(200);
    expect(untouched.body.name).toBe('Ada Lovelace');
  });

  it('refuses an unknown time zone, an empty name and any attempt to change the e-mail', async () => {
    const user = await signUp(app);
    const zone = await app.request('PATCH', '/api/users/me', { token: user.accessToken, body: { timezone: 'Mars/Olympus_Mons' } });
    expect(zone.status).toBe(400);
    expect(zone.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'timezone' } });
    const name = await app.request('PATCH', '/api/users/me', { token: user.accessToken, body: { name: '   ' } });
    expect(name.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'name' } });
    const email = await app.request('PATCH', '/api/users/me', { token: user.accessToken, body: { email: 'new@example.com', name: 'New' } });
    expect(email.status).toBe(400);
    expect(email.body).toMatchObject({ code: 'ERR_VALID_001', message: 'email cannot be changed here', relatedInfo: { field: 'email' } });
    const me = await app.request('GET', '/api/users/me', { token: user.accessToken });
    expect(me.body.email).toBe(user.email);
    expect(me.body.name).not.toBe('New');
  });

  it('changes the password and signs out every other session', async () => {
    const user = await signUp(app);
    const wrong = await app.request('POST', '/api/users/me/change-password', { token: user.accessToken, body: { currentPassword: 'not my password', newPassword: 'a new password' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ERR_AUTH_002');
    const short = await app.request('POST', '/api/users/me/change-password', { token: user.accessToken, body: { currentPassword: user.password, newPassword: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'newPassword' } });
    const missing = await app.request('POST', '/api/users/me/change-password', { token: user.accessToken, body: { newPassword: 'a new password' } });
    expect(missing.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'currentPassword', errors: [{ path: 'currentPassword', code: 'ERR_VALID_005' }] } });

    const ok = await app.request('POST', '/api/users/me/change-password', { token: user.accessToken, body: { currentPassword: user.password, newPassword: 'a new password' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ message: expect.any(String), accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: expect.any(Number) });
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status).toBe(401);
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: 'a new password' } })).status).toBe(200);
  });

  it('updates e-mail preferences flag by flag', async () => {
    const user = await signUp(app);
    const first = await app.request('PATCH', '/api/users/me/email-preferences', { token: user.accessToken, body: { weeklyDigest: true } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ message: expect.any(String), preferences: { marketingEmails: false, productUpdates: true, weeklyDigest: true } });
    const second = await app.request('PATCH', '/api/users/me/email-preferences', { token: user.accessToken, body: { productUpdates: false, marketingEmails: true } });
    expect(second.body.preferences).toEqual({ marketingEmails: true, productUpdates: false, weeklyDigest: true });
    const bad = await app.request('PATCH', '/api/users/me/email-preferences', { token: user.accessToken, body: { weeklyDigest: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'weeklyDigest' } });
    const unknown = await app.request('PATCH', '/api/users/me/email-preferences', { token: user.accessToken, body: { spam: true } });
    expect(unknown.body.relatedInfo).toEqual({ field: 'spam', errors: [{ path: 'spam', code: 'ERR_VALID_001', message: "'spam' is not allowed" }] });
  });

  it('exports the account, its projects and its API keys without secrets or hashes', async () => {
    const user = await signUp(app, { verified: true });
    const other = await signUp(app);
    const teamId = randomUUID();
    const { db } = app.services;
    await db.query(`INSERT INTO projects (id, name, slug, is_personal, owner_id) VALUES ($1, 'Acme', $2, false, $3)`, [teamId, `acme-${teamId}`, other.id]);
    await db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'owner'), ($1, $3, 'viewer')`, [teamId, other.id, user.id]);
    const key = await app.request('POST', '/api/api-keys', { token: user.accessToken, body: { name: 'Billing export' } });
    expect(key.status).toBe(201);

    const res = await app.request('GET', '/api/users/me/export', { token: user.accessToken });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="formwork-account-\d{4}-\d\d-\d\d\.json"$/);
    expect(res.body).toMatchObject({
      personal: { id: user.id, email: user.email, name: expect.any(String), createdAt: expect.any(String) },
      exportedAt: expect.any(String),
      format: 'json',
      settings: { emailVerified: true, twoFactorEnabled: false, timezone: null },
    });
    expect(Object.keys(res.body.personal).sort()).toEqual(['createdAt', 'email', 'id', 'name']);
    expect(res.body.projects).toEqual([
      expect.objectContaining({ name: expect.any(String), isPersonal: true, role: 'owner', slug: expect.any(String) }),
      expect.objectContaining({ id: teamId, name: 'Acme', slug: `acme-${teamId}`, isPersonal: false, role: 'viewer' }),
    ]);
    expect(res.body.apiKeys).toEqual([
      {
        id: key.body.id,
        teamId: expect.any(String),
        name: 'Billing export',
        keyPrefix: key.body.keyPrefix,
        permissions: key.body.permissions,
        isActive: true,
        createdAt: expect.any(String),
      },
    ]);
    const [row] = await db.query(`SELECT key_hash FROM api_keys WHERE id = $1`, [key.body.id]);
    expect(res.text).not.toContain(key.body.plainKey);
    expect(res.text).not.toContain(row.key_hash);
    expect(res.text).not.toContain('passwordHash');
    expect(res.text).not.toContain('scrypt$');
  });
});
