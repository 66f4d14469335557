import { startTestApp, type TestApp } from '../../support/app';
import { createTestDatasource } from '../../support/reporting';
import { addTeamProject, createKey, findInDatabase } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { callOk, connectMcp } from '../../support/mcp';
import { accessToken, basic, createOAuthClient, tokenByForm, tokenByJson } from '../../support/oauth';

const NO_FLAGS = { generate_documents: false, read_documents: false, read_templates: false, manage_webhooks: false, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false };

/** OAuth client credentials (docs/oauth.md): clients, the token endpoint, and tokens used like API keys. */
describe('OAuth client credentials', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
  });
  afterAll(() => app.close());

  it('creates a client whose secret is shown once and stored only as a hash', async () => {
    const res = await app.request('POST', '/api/oauth/clients', { token: alice.accessToken, body: { name: 'billing sync', permissions: { read_documents: true } } });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.body).toMatchObject({ name: 'billing sync', isActive: true, inactiveReason: null, permissions: { ...NO_FLAGS, read_documents: true } });
    expect(res.body.clientId).toMatch(/^fmoc_[0-9A-Za-z]+$/);
    expect(res.body.clientSecret).toMatch(/^fmocs_[0-9A-Za-z]{43}$/);
    expect(res.body.secretPrefix).toBe(`${res.body.clientSecret.slice(0, 12)}...`);
    const got = await app.request('GET', `/api/oauth/clients/${res.body.id}`, { token: alice.accessToken });
    expect(got.body).not.toHaveProperty('clientSecret');
    expect(JSON.stringify(got.body)).not.toContain(res.body.clientSecret);
    expect(await findInDatabase(app.services.db, res.body.clientSecret)).toEqual([]);
    // Addressed by its clientId too.
    expect((await app.request('GET', `/api/oauth/clients/${res.body.clientId}`, { token: alice.accessToken })).body.id).toBe(res.body.id);
  });

  it('exchanges the credentials for a bearer token: form + HTTP Basic, and JSON + body credentials', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'both ways', permissions: { read_documents: true, read_templates: true } });
    const form = await tokenByForm(app, client);
    expect(form.status).toBe(200);
    expect(form.headers.get('cache-control')).toBe('no-store');
    expect(form.body).toEqual({ access_token: expect.stringMatching(/^fmo_[0-9A-Za-z]{43}$/), token_type: 'Bearer', expires_in: 3600, scope: 'read_documents read_templates' });
    const json = await tokenByJson(app, client);
    expect(json.status).toBe(200);
    expect(json.body.access_token).not.toBe(form.body.access_token);
    // A form with the credentials in the body works too (RFC 6749 §2.3.1 allows it).
    const body = await app.request('POST', '/api/oauth/token', {
      rawBody: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(body.status).toBe(200);
    for (const token of [form.body.access_token, json.body.access_token, body.body.access_token]) {
      expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
      expect(await findInDatabase(app.services.db, token)).toEqual([]);
    }
  });

  it('answers a wrong secret, an unknown client and no credentials with 401 invalid_client', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'guarded' });
    const attempts = [
      () => tokenByForm(app, { clientId: client.clientId, clientSecret: client.clientSecret.slice(0, -1) + (client.clientSecret.endsWith('a') ? 'b' : 'a') }),
      () => tokenByJson(app, { clientId: client.clientId, clientSecret: 'fmocs_nope' }),
      () => tokenByForm(app, { clientId: 'fmoc_unknown', clientSecret: client.clientSecret }),
      () => app.request('POST', '/api/oauth/token', { body: { grant_type: 'client_credentials' } }),
      () => app.request('POST', '/api/oauth/token', { body: { grant_type: 'client_credentials', client_id: client.clientId } }),
    ];
    for (const attempt of attempts) {
      const res = await attempt();
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(res.body).toMatchObject({ error: 'invalid_client', error_description: expect.any(String), statusCode: 401, code: 'ERR_OAUTH_002', path: '/api/oauth/token' });
      expect(res.body).not.toHaveProperty('access_token');
    }
  });

  it('refuses other grants and malformed requests in the RFC 6749 §5.2 shape', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'strict' });
    const password = await tokenByForm(app, client, { grant_type: 'password', username: 'a', password: 'b' });
    expect(password.status).toBe(400);
    expect(password.body).toMatchObject({ error: 'unsupported_grant_type', code: 'ERR_OAUTH_004' });
    const missing = await tokenByForm(app, client, { scope: 'read_documents' });
    expect(missing.body).toMatchObject({ error: 'invalid_request', code: 'ERR_OAUTH_006' });
    const twoMethods = await app.request('POST', '/api/oauth/token', {
      rawBody: `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
    });
    expect(twoMethods.status).toBe(400);
    expect(twoMethods.body).toMatchObject({ error: 'invalid_request', code: 'ERR_OAUTH_006' });
    const repeated = await app.request('POST', '/api/oauth/token', {
      rawBody: 'grant_type=client_credentials&scope=read_documents&scope=generate_documents',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
    });
    expect(repeated.body).toMatchObject({ error: 'invalid_request', relatedInfo: { field: 'scope' } });
    const text = await app.request('POST', '/api/oauth/token', { rawBody: 'grant_type=client_credentials', headers: { 'content-type': 'text/plain' } });
    expect(text.body).toMatchObject({ error: 'invalid_request', code: 'ERR_OAUTH_006' });
    const badJson = await app.request('POST', '/api/oauth/token', { rawBody: '{"grant_type":', headers: { 'content-type': 'application/json' } });
    expect(badJson.body).toMatchObject({ error: 'invalid_request', code: 'ERR_REQ_001' });
  });

  it('grants a requested subset of the flags; the token may do what an API key with those flags may, and no more', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'subset', permissions: { read_documents: true, generate_documents: true } });
    const res = await tokenByForm(app, client, { grant_type: 'client_credentials', scope: 'read_documents' });
    expect(res.body.scope).toBe('read_documents');
    const key = await createKey(app, alice.accessToken, { name: 'same flags', permissions: { read_documents: true } });
    for (const token of [res.body.access_token, key.plainKey]) {
      expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
      const generate = await app.request('POST', '/api/documents/generate', { token, body: { templateId: 'none', format: 'pdf', variables: {} } });
      expect(generate.status).toBe(403);
      expect(generate.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'generate_documents', granted: 'read_documents' } });
    }
    // Flags the client lacks, or names that are no flag: invalid_scope, and no token.
    for (const scope of ['manage_webhooks', 'read_documents bogus']) {
      const refused = await tokenByForm(app, client, { grant_type: 'client_credentials', scope });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_scope', code: 'ERR_OAUTH_005' });
    }
  });

  it('is counted against the OAuth budget: X-RateLimit-Limit 120 per client', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'budget', permissions: { read_documents: true } });
    const [a, b] = [await accessToken(app, client), await accessToken(app, client)];
    const first = await app.request('GET', '/api/documents/jobs', { token: a });
    expect(first.headers.get('x-ratelimit-limit')).toBe('120');
    const second = await app.request('GET', '/api/documents/jobs', { token: b });
    // Both tokens of the client spend one budget.
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
  });

  it('works on the MCP endpoint, which shows only the tools its flags allow', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'assistant', permissions: { read_documents: true } });
    const mcp = await connectMcp(app, await accessToken(app, client));
    try {
      const who = await callOk(mcp.client, 'whoami');
      expect(who).toMatchObject({ projectId: client.teamId, credential: { kind: 'oauth' }, permissions: { read_documents: true, generate_documents: false } });
      const tools = (await mcp.client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('get_job');
      expect(tools).not.toContain('generate_document');
    } finally {
      await mcp.close();
    }
  });

  it("acts for its creator where a key does: the creator's approvals, and report runs recorded as started by a program", async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'ops bot', permissions: { read_reports: true, run_reports: true } });
    const token = await accessToken(app, client);
    const approvals = await app.request('GET', '/api/flow/approvals', { token });
    expect([approvals.status, approvals.body.data]).toEqual([200, []]);

    const ds = await createTestDatasource(app, alice.accessToken, 'oauth runs');
    const q = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: { name: 'one', datasourceId: ds.id, text: 'SELECT 1 AS n' } });
    await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, { token: alice.accessToken, body: {} });
    const r = await app.request('POST', '/api/reporting/reports', { token: alice.accessToken, body: { name: 'oauth report', datasets: [{ name: 'one', queryId: q.body.id }], outputs: [{ format: 'csv' }] } });
    expect((await app.request('POST', `/api/reporting/reports/${r.body.id}/publish`, { token: alice.accessToken, body: {} })).status).toBe(201);
    const started = await app.request('POST', `/api/reporting/reports/${r.body.id}/runs`, { token, body: {} });
    expect(started.status).toBe(201);
    expect((await app.request('GET', `/api/reporting/runs/${started.body.runId}`, { token })).body.trigger).toBe('api');
  });

  it('is refused where API keys are: user-session routes answer 403 ERR_AUTH_005 {required: jwt, granted: oauth}', async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'no minting', permissions: { ...NO_FLAGS, read_documents: true, manage_webhooks: true } });
    const token = await accessToken(app, client);
    for (const [method, path, body] of [
      ['GET', '/api/oauth/clients'],
      ['POST', '/api/oauth/clients', { name: 'x' }],
      ['POST', `/api/oauth/clients/${client.id}/rotate-secret`],
      ['GET', '/api/api-keys'],
    ] as Array<[string, string, unknown?]>) {
      const res = await app.request(method, path, { token, body });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'jwt', granted: 'oauth' } });
    }
  });

  it('stops its tokens at once when the client is deleted, deactivated or its secret rotated', async () => {
    const flags = { read_documents: true };
    const deleted = await createOAuthClient(app, alice.accessToken, { name: 'to delete', permissions: flags });
    const token = await accessToken(app, deleted);
    expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
    expect((await app.request('DELETE', `/api/oauth/clients/${deleted.id}`, { token: alice.accessToken })).status).toBe(204);
    const after = await app.request('GET', '/api/documents/jobs', { token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('ERR_OAUTH_007');
    expect((await tokenByForm(app, deleted)).body.error).toBe('invalid_client');

    const paused = await createOAuthClient(app, alice.accessToken, { name: 'to pause', permissions: flags });
    const pausedToken = await accessToken(app, paused);
    const patched = await app.request('PATCH', `/api/oauth/clients/${paused.id}`, { token: alice.accessToken, body: { isActive: false } });
    expect(patched.body).toMatchObject({ isActive: false, inactiveReason: 'revoked' });
    expect((await app.request('GET', '/api/documents/jobs', { token: pausedToken })).body.code).toBe('ERR_OAUTH_007');
    expect((await tokenByForm(app, paused)).body).toMatchObject({ error: 'invalid_client', code: 'ERR_OAUTH_003' });
    // Switched back on, the client gets new tokens; the old one stays dead.
    await app.request('PATCH', `/api/oauth/clients/${paused.id}`, { token: alice.accessToken, body: { isActive: true } });
    expect((await app.request('GET', '/api/documents/jobs', { token: await accessToken(app, paused) })).status).toBe(200);
    expect((await app.request('GET', '/api/documents/jobs', { token: pausedToken })).status).toBe(401);

    const rotated = await createOAuthClient(app, alice.accessToken, { name: 'to rotate', permissions: flags });
    const oldToken = await accessToken(app, rotated);
    const rotation = await app.request('POST', `/api/oauth/clients/${rotated.id}/rotate-secret`, { token: alice.accessToken });
    expect(rotation.status).toBe(200);
    expect(rotation.body.clientSecret).not.toBe(rotated.clientSecret);
    expect(rotation.body.secretRotatedAt).toEqual(expect.any(String));
    expect((await app.request('GET', '/api/documents/jobs', { token: oldToken })).status).toBe(401);
    expect((await tokenByForm(app, rotated)).status).toBe(401);
    expect((await tokenByForm(app, { clientId: rotated.clientId, clientSecret: rotation.body.clientSecret })).status).toBe(200);
  });

  it("narrows live tokens when the client's flags are narrowed", async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: 'narrowed', permissions: { read_documents: true } });
    const token = await accessToken(app, client);
    expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
    const patched = await app.request('PATCH', `/api/oauth/clients/${client.id}`, { token: alice.accessToken, body: { permissions: { read_documents: false } } });
    expect(patched.body.permissions.read_documents).toBe(false);
    const res = await app.request('GET', '/api/documents/jobs', { token });
    expect(res.status).toBe(403);
    expect(res.body.relatedInfo).toMatchObject({ required: 'read_documents', granted: 'none' });
  });

  it("keeps clients to their project: another project's client is invisible (404 ERR_OAUTH_001)", async () => {
    const client = await createOAuthClient(app, alice.accessToken, { name: "alice's" });
    for (const [method, path, body] of [
      ['GET', `/api/oauth/clients/${client.id}`],
      ['GET', `/api/oauth/clients/${client.clientId}`],
      ['PATCH', `/api/oauth/clients/${client.id}`, { name: 'taken' }],
      ['POST', `/api/oauth/clients/${client.id}/rotate-secret`],
      ['DELETE', `/api/oauth/clients/${client.id}`],
    ] as Array<[string, string, unknown?]>) {
      const res = await app.request(method, path, { token: bob.accessToken, body });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('ERR_OAUTH_001');
      expect(res.text).not.toContain("alice's");
    }
    const list = await app.request('GET', '/api/oauth/clients', { token: bob.accessToken });
    expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(client.id);
    // Still alice's, unchanged and working.
    expect((await app.request('GET', `/api/oauth/clients/${client.id}`, { token: alice.accessToken })).body.name).toBe("alice's");
    expect((await tokenByForm(app, client)).status).toBe(200);
  });

  it('is managed per project (X-Team-Id) by its admins; members and viewers are refused', async () => {
    const carol = await signUp(app, { verified: true });
    const team = await addTeamProject(app.services.db, alice.id, [{ userId: bob.id, role: 'admin' }, { userId: carol.id, role: 'member' }]);
    const client = await createOAuthClient(app, bob.accessToken, { name: 'team client', permissions: { read_documents: true } }, team);
    expect(client.teamId).toBe(team);
    const asOwner = await app.request('GET', '/api/oauth/clients', { token: alice.accessToken, headers: { 'X-Team-Id': team } });
    expect(asOwner.body.data.map((c: { id: string }) => c.id)).toEqual([client.id]);
    expect(asOwner.body.meta).toMatchObject({ total: 1, page: 1, limit: 20 });
    const personal = await app.request('GET', '/api/oauth/clients', { token: bob.accessToken });
    expect(personal.body.data.map((c: { id: string }) => c.id)).not.toContain(client.id);
    const asMember = await app.request('GET', '/api/oauth/clients', { token: carol.accessToken, headers: { 'X-Team-Id': team } });
    expect(asMember.status).toBe(403);
    expect(asMember.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'admin', granted: 'member' } });
    // The token acts in the team project.
    const token = await accessToken(app, client);
    expect((await app.request('GET', '/api/documents/jobs', { token })).status).toBe(200);
    // Its creator leaving the project stops the client and its tokens, as for API keys.
    await app.services.db.query(`DELETE FROM memberships WHERE project_id = $1 AND user_id = $2`, [team, bob.id]);
    await app.syncCredentials();
    expect((await app.request('GET', '/api/documents/jobs', { token })).body.code).toBe('ERR_OAUTH_007');
    expect((await tokenByForm(app, client)).body).toMatchObject({ error: 'invalid_client', code: 'ERR_OAUTH_003' });
  });

  it('needs a verified e-mail to create a client, and refuses unknown permission flags', async () => {
    const dave = await signUp(app);
    const res = await app.request('POST', '/api/oauth/clients', { token: dave.accessToken, body: { name: 'early' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ERR_AUTH_006');
    const unknown = await app.request('POST', '/api/oauth/clients', { token: alice.accessToken, body: { name: 'x', permissions: { admin: true } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('ERR_VALID_001');
  });
});
