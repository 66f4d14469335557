import { startTestApp, type TestApp } from '../../support/app';
import { addTeamProject, createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';

/** Who may manage API keys, and what a key itself may do with these endpoints. */
describe('API key management: access', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp();
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
  });
  afterAll(() => app.close());

  /** Every endpoint of the table, with a body where one is taken. */
  const endpoints = (id: string): Array<[string, string, unknown?]> => [
    ['POST', '/api/api-keys', { name: 'x' }],
    ['GET', '/api/api-keys'],
    ['GET', `/api/api-keys/${id}`],
    ['PATCH', `/api/api-keys/${id}`, { name: 'taken over' }],
    ['POST', `/api/api-keys/${id}/revoke`],
    ['GET', `/api/api-keys/${id}/stats`],
    ['DELETE', `/api/api-keys/${id}`],
  ];

  it('needs a credential: 401 ERR_AUTH_003 without one', async () => {
    for (const [method, path, body] of endpoints('00000000-0000-4000-8000-000000000000')) {
      const res = await app.request(method, path, { body });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('ERR_AUTH_003');
    }
  });

  it('refuses API keys on every endpoint with 403 ERR_AUTH_005 {required: jwt, granted: apiKey}', async () => {
    const key = await createKey(app, alice.accessToken, { name: 'all flags', permissions: { generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: true } });
    for (const [method, path, body] of endpoints(key.id)) {
      const res = await app.request(method, path, { token: key.plainKey, body });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ statusCode: 403, code: 'ERR_AUTH_005', relatedInfo: { required: 'jwt', granted: 'apiKey' } });
    }
    // The key could neither mint a key nor change, revoke or delete itself.
    expect(await app.services.db.query(`SELECT name, is_active FROM api_keys WHERE project_id = $1`, [key.teamId])).toEqual([{ name: 'all flags', is_active: true }]);
  });

  it('answers unknown and malformed keys with 401 ERR_AKEY_002', async () => {
    const key = await createKey(app, alice.accessToken);
    const forged = key.plainKey.slice(0, -1) + (key.plainKey.endsWith('a') ? 'b' : 'a');
    for (const token of [forged, 'fm_live_short', 'fm_', 'fm_test_' + 'A'.repeat(40)]) {
      const res = await app.request('GET', '/api/api-keys', { token });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401, code: 'ERR_AKEY_002' });
    }
  });

  it('answers a key past its expiresAt with 401 ERR_AKEY_003', async () => {
    const key = await createKey(app, alice.accessToken, { name: 'short-lived', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await app.request('GET', '/api/api-keys', { token: key.plainKey })).body.code).toBe('ERR_AUTH_005');
    // Time passing, without waiting for it: the expiry moves into the past.
    await app.services.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
    await app.syncCredentials();
    const res = await app.request('GET', '/api/api-keys', { token: key.plainKey });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('ERR_AKEY_003');
  });

  it('needs a verified e-mail to create (403 ERR_AUTH_006) but not to list', async () => {
    const carol = await signUp(app);
    const res = await app.request('POST', '/api/api-keys', { token: carol.accessToken, body: { name: 'early' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ statusCode: 403, code: 'ERR_AUTH_006' });
    expect(await app.services.db.query(`SELECT id FROM api_keys WHERE created_by = $1`, [carol.id])).toEqual([]);
    const list = await app.request('GET', '/api/api-keys', { token: carol.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
  });

  it("never shows or touches another user's keys: 404 ERR_AKEY_001, the key unchanged", async () => {
    const key = await createKey(app, alice.accessToken, { name: "alice's" });
    for (const [method, path, body] of endpoints(key.id).slice(2)) {
      const res = await app.request(method, path, { token: bob.accessToken, body });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('ERR_AKEY_001');
      expect(res.text).not.toContain("alice's");
    }
    const bobs = await app.request('GET', '/api/api-keys', { token: bob.accessToken });
    expect(bobs.body.data.map((k: { id: string }) => k.id)).not.toContain(key.id);
    const still = await app.request('GET', `/api/api-keys/${key.id}`, { token: alice.accessToken });
    expect(still.body).toMatchObject({ name: "alice's", isActive: true });
  });

  it('refuses X-Team-Id of a project the caller is not a member of with 403 ERR_AUTH_005', async () => {
    const team = await addTeamProject(app.services.db, alice.id);
    for (const teamId of [team, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      for (const [method, path, body] of endpoints('00000000-0000-4000-8000-000000000000').slice(0, 2)) {
        const res = await app.request(method, path, { token: bob.accessToken, body, headers: { 'X-Team-Id': teamId } });
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('ERR_AUTH_005');
      }
    }
    expect(await app.services.db.query(`SELECT id FROM api_keys WHERE project_id = $1`, [team])).toEqual([]);
  });

  it('keeps keys to the project they were made in (X-Team-Id), separate from the personal one', async () => {
    const team = await addTeamProject(app.services.db, alice.id, [{ userId: bob.id, role: 'admin' }]);
    const teamKey = await createKey(app, bob.accessToken, { name: 'team key' }, team);
    expect(teamKey.teamId).toBe(team);
    const personal = await app.request('GET', '/api/api-keys', { token: bob.accessToken });
    expect(personal.body.data.map((k: { id: string }) => k.id)).not.toContain(teamKey.id);
    expect((await app.request('GET', `/api/api-keys/${teamKey.id}`, { token: bob.accessToken })).status).toBe(404);
    // The owner sees and manages the admin's key in the team project.
    const asOwner = { token: alice.accessToken, headers: { 'X-Team-Id': team } };
    const list = await app.request('GET', '/api/api-keys', asOwner);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([teamKey.id]);
    const revoked = await app.request('POST', `/api/api-keys/${teamKey.id}/revoke`, asOwner);
    expect(revoked.body.isActive).toBe(false);
  });

  it.each(['member', 'viewer'] as const)('refuses a %s of a team project with 403 ERR_AUTH_005 {required: admin}', async (role) => {
    const dave = await signUp(app, { verified: true });
    const team = await addTeamProject(app.services.db, alice.id, [{ userId: dave.id, role }]);
    const key = await createKey(app, alice.accessToken, { name: 'owner key' }, team);
    for (const [method, path, body] of endpoints(key.id)) {
      const res = await app.request(method, path, { token: dave.accessToken, body, headers: { 'X-Team-Id': team } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'admin', granted: role } });
    }
    const [row] = await app.services.db.query(`SELECT name, is_active FROM api_keys WHERE id = $1`, [key.id]);
    expect(row).toEqual({ name: 'owner key', is_active: true });
  });
});
