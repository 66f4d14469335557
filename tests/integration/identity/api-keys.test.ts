import { createHash } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';

/** Spec, "API keys (JWT only)": create, read, update, revoke, delete, list. */
describe('API key management', () => {
  let app: TestApp;
  let user: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp();
    user = await signUp(app, { verified: true });
  });
  afterAll(() => app.close());

  const call = (method: string, path: string, body?: unknown, token = user.accessToken) => app.request(method, path, { token, body });

  it('creates a key, returns the full key once and stores only its SHA-256', async () => {
    const res = await call('POST', '/api/api-keys', { name: '  Production server  ' });
    expect(res.status).toBe(201);
    const [personal] = await app.services.db.query(`SELECT project_id FROM memberships WHERE user_id = $1`, [user.id]);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      teamId: personal.project_id,
      name: 'Production server',
      keyType: 'live',
      keyPrefix: `${res.body.plainKey.slice(0, 12)}...`,
      permissions: { generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: false, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false },
      isActive: true,
      inactiveReason: null,
      expiresAt: null,
      lastUsedAt: null,
      createdAt: expect.any(String),
      updatedAt: res.body.createdAt,
      plainKey: expect.stringMatching(/^fm_live_[0-9A-Za-z]{32,}$/),
    });
    const [row] = await app.services.db.query(`SELECT key_hash, key_prefix, created_by FROM api_keys WHERE id = $1`, [res.body.id]);
    expect(row).toEqual({ key_hash: createHash('sha256').update(res.body.plainKey).digest('hex'), key_prefix: res.body.keyPrefix, created_by: user.id });

    const read = await call('GET', `/api/api-keys/${res.body.id}`);
    expect(read.status).toBe(200);
    const { plainKey, ...withoutPlainKey } = res.body;
    expect(read.body).toEqual(withoutPlainKey);
    expect(read.text).not.toContain(plainKey);
  });

  it('treats flags left out of a given permissions object as false, and keeps an expiry', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const key = await createKey(app, user.accessToken, { name: 'hooks', permissions: { manage_webhooks: true }, expiresAt });
    expect(key.permissions).toEqual({ generate_documents: false, read_documents: false, read_templates: false, manage_webhooks: true, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false });
    expect(key.expiresAt).toBe(expiresAt);
    const none = await createKey(app, user.accessToken, { name: 'none', permissions: {} });
    expect(Object.values(none.permissions)).toEqual([false, false, false, false, false, false, false, false, false]);
  });

  it('refuses the create body {} with 400 ERR_VALID_005 (a missing field) on name', async () => {
    const res = await call('POST', '/api/api-keys', {});
    expect(res.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_005', path: '/api/api-keys', relatedInfo: { field: 'name' } });
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'k', permissions: { manage_templates: true } }, 'permissions.manage_templates'],
    [{ name: 'k', permissions: { generate_documents: 'yes' } }, 'permissions.generate_documents'],
    [{ name: 'k', permissions: 'all' }, 'permissions'],
    [{ name: 'k', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
    [{ name: 'k', expiresAt: 'tomorrow' }, 'expiresAt'],
    [{ name: 'k', keyType: 'test' }, 'keyType'],
  ])('refuses the create body %j with 400 ERR_VALID_001 on %s', async (body, field) => {
    const before = await app.services.db.query(`SELECT count(*)::int AS n FROM api_keys`);
    const res = await call('POST', '/api/api-keys', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_001', path: '/api/api-keys', relatedInfo: { field } });
    expect(await app.services.db.query(`SELECT count(*)::int AS n FROM api_keys`)).toEqual(before);
  });

  it('accepts a name of exactly 100 characters', async () => {
    expect((await createKey(app, user.accessToken, { name: 'n'.repeat(100) })).name).toHaveLength(100);
  });

  it('updates name and permissions (merged), deactivates and reactivates through PATCH', async () => {
    const key = await createKey(app, user.accessToken, { name: 'before' });
    const renamed = await call('PATCH', `/api/api-keys/${key.id}`, { name: 'after', permissions: { manage_webhooks: true, read_documents: false } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: key.id, name: 'after', isActive: true, keyPrefix: key.keyPrefix });
    expect(renamed.body.permissions).toEqual({ generate_documents: true, read_documents: false, read_templates: true, manage_webhooks: true, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false });
    expect(Date.parse(renamed.body.updatedAt)).toBeGreaterThan(Date.parse(key.updatedAt));
    expect(renamed.body.plainKey).toBeUndefined();

    const off = await call('PATCH', `/api/api-keys/${key.id}`, { isActive: false });
    expect(off.body.isActive).toBe(false);
    expect((await app.request('GET', '/api/api-keys', { token: key.plainKey })).body.code).toBe('ERR_AKEY_003');
    const on = await call('PATCH', `/api/api-keys/${key.id}`, { isActive: true });
    expect(on.body).toMatchObject({ isActive: true, name: 'after' });
    // Active again: the key is recognised (and, being a key, refused by this JWT-only endpoint).
    expect((await app.request('GET', '/api/api-keys', { token: key.plainKey })).body.code).toBe('ERR_AUTH_005');

    const unchanged = await call('PATCH', `/api/api-keys/${key.id}`, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(on.body);
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ isActive: 'no' }, 'isActive'],
    [{ permissions: { admin: true } }, 'permissions.admin'],
    [{ plainKey: 'fm_live_x' }, 'plainKey'],
  ])('refuses the PATCH body %j on %s', async (body, field) => {
    const key = await createKey(app, user.accessToken);
    const res = await call('PATCH', `/api/api-keys/${key.id}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field } });
  });

  it('revokes: answers id, name, isActive false and a new updatedAt; the key stops working at once', async () => {
    const key = await createKey(app, user.accessToken, { name: 'to revoke' });
    const res = await call('POST', `/api/api-keys/${key.id}/revoke`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: key.id, name: 'to revoke', isActive: false, updatedAt: expect.any(String) });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(key.updatedAt));
    const refused = await app.request('GET', '/api/api-keys', { token: key.plainKey });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ statusCode: 401, code: 'ERR_AKEY_003' });
    expect((await call('GET', `/api/api-keys/${key.id}`)).body.isActive).toBe(false);

    const again = await call('POST', `/api/api-keys/${key.id}/revoke`);
    expect(again.body).toEqual(res.body);
  });

  it('deletes permanently: 204, then 404 for the id and ERR_AKEY_002 for the key', async () => {
    const key = await createKey(app, user.accessToken);
    const res = await call('DELETE', `/api/api-keys/${key.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await app.services.db.query(`SELECT id FROM api_keys WHERE id = $1`, [key.id])).toEqual([]);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['POST', '/revoke'], ['GET', '/stats'], ['DELETE', '']]) {
      const gone = await call(method, `/api/api-keys/${key.id}${path}`, method === 'PATCH' ? { isActive: true } : undefined);
      expect(gone.status).toBe(404);
      expect(gone.body.code).toBe('ERR_AKEY_001');
    }
    const used = await app.request('GET', '/api/api-keys', { token: key.plainKey });
    expect(used.status).toBe(401);
    expect(used.body.code).toBe('ERR_AKEY_002');
  });

  it.each(['not-a-uuid', '00000000-0000-4000-8000-000000000000', "1' OR '1'='1"])('answers 404 ERR_AKEY_001 for id %s', async (id) => {
    const path = `/api/api-keys/${encodeURIComponent(id)}`;
    for (const [method, suffix] of [['GET', ''], ['PATCH', ''], ['POST', '/revoke'], ['GET', '/stats'], ['DELETE', '']]) {
      const res = await call(method, path + suffix, method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, code: 'ERR_AKEY_001', message: 'API key not found' });
    }
  });
});
