import { startTestApp, type TestApp } from '../../support/app';
import { addTeamProject, createKey } from '../../support/api-keys';
import { signUp } from '../../support/factories';
import { createGate, flowWorkspace, invoiceRules, invoiceSchema, type FlowWorkspace } from '../../support/flow';

describe('Flow gates API', () => {
  let app: TestApp;
  let ws: FlowWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app, 'starter');
  });
  afterAll(() => app.close());

  it('creates a gate with every field of the spec and addresses it by UUID, shortId and slug', async () => {
    const gate = await createGate(app, ws.key, {
      name: 'Invoice Intake',
      description: 'Checks invoices',
      schema: invoiceSchema,
      businessRules: invoiceRules,
      renderMode: 'none',
      renderConfig: { format: 'pdf' },
      approvalMode: 'manual',
      approvalConfig: { approvers: [{ email: 'boss@example.com', name: 'Boss' }], timeoutMinutes: 60, onTimeout: 'reject' },
      deliveryChannels: [{ type: 'webhook', url: 'https://hooks.example.com/x', secret: 'supersecret123', headers: { 'X-Env': 'test' } }],
      maxSubmissionsPerMinute: 50,
      notificationMode: 'immediate',
      notificationDigestMinutes: 10,
      circuitBreakerEnabled: true,
      maxFailures: 3,
      cooldownSeconds: 120,
    });
    expect(gate).toMatchObject({
      shortId: expect.stringMatching(/^fgate_[0-9A-Za-z]{16}$/),
      slug: 'invoice-intake',
      status: 'active',
      validationMode: 'variables',
      schemaVersion: 1,
      schema: invoiceSchema,
      approvalConfig: { requiredApprovals: 1 },
      maxSubmissionsPerMinute: 50,
      cooldownSeconds: 120,
      circuit: { state: 'closed', consecutiveFailures: 0, openUntil: null },
    });
    expect(gate.id).toMatch(/^[0-9a-f-]{36}$/);
    // Write-only (docs/security.md, "Credentials: secrets at rest"): not even a prefix comes back.
    expect(gate.deliveryChannels[0].secret).toEqual({ set: true });
    for (const ref of [gate.id, gate.shortId, gate.slug]) {
      const res = await app.request('GET', `/api/flow/gates/${ref}`, { token: ws.key });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(gate.id);
    }
    // A second gate of the same name gets a slug of its own.
    const twin = await createGate(app, ws.key, { name: 'Invoice Intake' });
    expect(twin.slug).toMatch(/^invoice-intake-[0-9a-z]{4}$/);
  });

  it.each([
    ['name missing', {}, 400, 'ERR_VALID_005'],
    ['name too long', { name: 'x'.repeat(256) }, 400, 'ERR_VALID_001'],
    ['description too long', { name: 'g', description: 'x'.repeat(1001) }, 400, 'ERR_VALID_001'],
    ['21 rules', { name: 'g', businessRules: Array.from({ length: 21 }, (_, i) => ({ id: `r${i}`, expression: 'true', message: 'm' })) }, 400, 'ERR_VALID_001'],
    ['rate 0', { name: 'g', maxSubmissionsPerMinute: 0 }, 400, 'ERR_VALID_001'],
    ['rate 1001', { name: 'g', maxSubmissionsPerMinute: 1001 }, 400, 'ERR_VALID_001'],
    ['digest 61', { name: 'g', notificationDigestMinutes: 61 }, 400, 'ERR_VALID_001'],
    ['cooldown 59', { name: 'g', cooldownSeconds: 59 }, 400, 'ERR_VALID_001'],
    ['unknown field', { name: 'g', colour: 'red' }, 400, 'ERR_VALID_001'],
    ['freetext without config', { name: 'g', validationMode: 'freetext' }, 400, 'ERR_VALID_005'],
    ['manual approval without config', { name: 'g', approvalMode: 'manual' }, 400, 'ERR_VALID_005'],
    ['native render without template', { name: 'g', renderMode: 'native' }, 400, 'ERR_VALID_005'],
    ['native render, unknown template', { name: 'g', renderMode: 'native', renderTemplateId: 'no-such-template' }, 404, 'FLOW.TEMPLATE_NOT_FOUND'],
    ['malformed schema', { name: 'g', schema: { type: 'object', properties: { a: { type: 'text' } } } }, 422, 'FLOW.GATE_VALIDATION_FAILED'],
    ['rule that does not parse', { name: 'g', businessRules: [{ id: 'r', expression: 'a >', message: 'm' }] }, 422, 'FLOW.GATE_VALIDATION_FAILED'],
  ])('refuses a gate with %s', async (_label, body, status, code) => {
    const res = await app.request('POST', '/api/flow/gates', { token: ws.key, body });
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
  });

  it('lists the details of a definition that does not check', async () => {
    const res = await app.request('POST', '/api/flow/gates', {
      token: ws.key,
      body: { name: 'g', schema: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } }, businessRules: [{ id: 'r', expression: '$sum(', message: 'm' }] },
    });
    expect(res.status).toBe(422);
    expect(res.body.relatedInfo.details.map((d: { field: string }) => d.field)).toEqual(['schema.properties.a.pattern', 'businessRules[0].expression']);
  });

  it('lists with page, limit, search, status and sorting', async () => {
    const other = await flowWorkspace(app, 'growth');
    for (const name of ['Alpha', 'Bravo', 'Charlie']) await createGate(app, other.key, { name });
    const charlie = (await app.request('GET', '/api/flow/gates?search=charl', { token: other.key })).body.data[0];
    await app.request('PUT', `/api/flow/gates/${charlie.id}`, { token: other.key, body: { status: 'paused' } });

    const page = await app.request('GET', '/api/flow/gates?limit=2&page=2&sortBy=name&sortOrder=asc', { token: other.key });
    expect(page.status).toBe(200);
    expect(page.body.data.map((g: { name: string }) => g.name)).toEqual(['Charlie']);
    expect(page.body.meta).toEqual({ total: 3, page: 2, limit: 2, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    const paused = await app.request('GET', '/api/flow/gates?status=paused', { token: other.key });
    expect(paused.body.data.map((g: { name: string }) => g.name)).toEqual(['Charlie']);
    const newest = await app.request('GET', '/api/flow/gates', { token: other.key });
    expect(newest.body.data.map((g: { name: string }) => g.name)).toEqual(['Charlie', 'Bravo', 'Alpha']);
    expect((await app.request('GET', '/api/flow/gates?limit=101', { token: other.key })).status).toBe(400);
    expect((await app.request('GET', '/api/flow/gates?sortBy=slug', { token: other.key })).status).toBe(400);
  });

  it('updates settings and status, refuses schema changes there, soft-deletes', async () => {
    const gate = await createGate(app, ws.key, { name: 'Updatable', schema: invoiceSchema });
    const res = await app.request('PUT', `/api/flow/gates/${gate.slug}`, { token: ws.key, body: { name: 'Renamed', status: 'archived', maxFailures: 2 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', slug: 'updatable', status: 'archived', maxFailures: 2, schemaVersion: 1 });
    expect((await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { schema: invoiceSchema } })).body.code).toBe('ERR_VALID_001');
    expect((await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { status: 'gone' } })).status).toBe(400);

    // Switching to freetext changes what validates: a new schema version.
    const freetext = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { validationMode: 'freetext', freetextConfig: { minLength: 3 } } });
    expect(freetext.body.schemaVersion).toBe(2);

    expect((await app.request('DELETE', `/api/flow/gates/${gate.id}`, { token: ws.key })).status).toBe(204);
    expect((await app.request('GET', `/api/flow/gates/${gate.id}`, { token: ws.key })).body.code).toBe('FLOW.GATE_NOT_FOUND');
    expect((await app.request('DELETE', `/api/flow/gates/${gate.id}`, { token: ws.key })).status).toBe(404);
  });

  it('makes schema versions through PUT /schema and lists them in order', async () => {
    const gate = await createGate(app, ws.key, { name: 'Versioned', schema: invoiceSchema, businessRules: invoiceRules });
    const v2 = await app.request('PUT', `/api/flow/gates/${gate.id}/schema`, { token: ws.key, body: { schema: { type: 'object', properties: { a: { type: 'integer' } } } } });
    expect(v2.status).toBe(200);
    expect(v2.body).toMatchObject({ schemaVersion: 2, businessRules: invoiceRules });
    const bad = await app.request('PUT', `/api/flow/gates/${gate.id}/schema`, { token: ws.key, body: { schema: { type: 'object', properties: {} }, businessRules: [{ id: 'x', expression: '((', message: 'm' }] } });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('FLOW.GATE_VALIDATION_FAILED');
    expect((await app.request('PUT', `/api/flow/gates/${gate.id}/schema`, { token: ws.key, body: { businessRules: [] } })).status).toBe(400);
    const v3 = await app.request('PUT', `/api/flow/gates/${gate.id}/schema`, { token: ws.key, body: { schema: invoiceSchema, businessRules: [] } });
    expect(v3.body.schemaVersion).toBe(3);
    const versions = await app.request('GET', `/api/flow/gates/${gate.shortId}/versions`, { token: ws.key });
    expect(versions.body.data.map((v: { version: number; source: string }) => [v.version, v.source])).toEqual([
      [1, 'create'],
      [2, 'schema'],
      [3, 'schema'],
    ]);
    expect(versions.body.data[1].schema.properties.a.type).toBe('integer');
  });

  it('enforces the Free plan: 3 gates, 5 approvers', async () => {
    const free = await flowWorkspace(app);
    for (let i = 0; i < 3; i += 1) await createGate(app, free.key, { name: `Gate ${i}` });
    const fourth = await app.request('POST', '/api/flow/gates', { token: free.key, body: { name: 'Gate 3' } });
    expect(fourth.status).toBe(403);
    expect(fourth.body).toMatchObject({ code: 'ERR_FLOW_LIMIT_001', relatedInfo: { limit: 3 } });
    // Deleting one frees a place.
    const list = await app.request('GET', '/api/flow/gates', { token: free.key });
    await app.request('DELETE', `/api/flow/gates/${list.body.data[0].id}`, { token: free.key });
    const approvers = Array.from({ length: 6 }, (_, i) => ({ email: `a${i}@example.com` }));
    const tooMany = await app.request('POST', '/api/flow/gates', {
      token: free.key,
      body: { name: 'Approved', approvalMode: 'manual', approvalConfig: { approvers, timeoutMinutes: 5, onTimeout: 'reject' } },
    });
    expect(tooMany.body.code).toBe('ERR_FLOW_LIMIT_004');
    expect((await app.request('POST', '/api/flow/gates', { token: free.key, body: { name: 'Gate 4' } })).status).toBe(201);
  });

  it('keeps workspaces apart and decides who may call', async () => {
    const gate = await createGate(app, ws.key, { name: 'Private' });
    const stranger = await flowWorkspace(app);
    for (const [method, path] of [
      ['GET', `/api/flow/gates/${gate.id}`],
      ['GET', `/api/flow/gates/${gate.shortId}`],
      ['PUT', `/api/flow/gates/${gate.id}`],
      ['DELETE', `/api/flow/gates/${gate.id}`],
      ['GET', `/api/flow/gates/${gate.id}/versions`],
      ['POST', `/api/flow/gates/${gate.id}/validate`],
      ['POST', `/api/flow/gates/${gate.id}/test`],
      ['GET', `/api/flow/gates/${gate.id}/runs`],
    ]) {
      const res = await app.request(method, path, { token: stranger.key, body: method === 'GET' ? undefined : method === 'PUT' ? { name: 'x' } : {} });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'FLOW.GATE_NOT_FOUND']);
    }
    expect((await app.request('GET', '/api/flow/gates', { token: stranger.key })).body.meta.total).toBe(0);
    expect((await app.request('GET', '/api/flow/gates')).status).toBe(401);
    // The dashboard's JWT acts on the user's active project: the same workspace as the key.
    const viaJwt = await app.request('GET', `/api/flow/gates/${gate.id}`, { token: ws.user.accessToken });
    expect(viaJwt.status).toBe(200);
    const outsider = await signUp(app);
    expect((await app.request('GET', `/api/flow/gates/${gate.id}`, { token: outsider.accessToken })).status).toBe(404);
  });

  it('lets dashboard users of a team read as viewers and write as members', async () => {
    const owner = await signUp(app);
    const viewer = await signUp(app);
    const member = await signUp(app);
    const teamId = await addTeamProject(app.services.db, owner.id, [
      { userId: viewer.id, role: 'viewer' },
      { userId: member.id, role: 'member' },
    ]);
    const team = { 'X-Team-Id': teamId };
    const created = await app.request('POST', '/api/flow/gates', { token: member.accessToken, headers: team, body: { name: 'Team gate' } });
    expect(created.status).toBe(201);
    expect((await app.request('GET', `/api/flow/gates/${created.body.id}`, { token: viewer.accessToken, headers: team })).status).toBe(200);
    const denied = await app.request('POST', `/api/flow/gates/${created.body.id}/validate`, { token: viewer.accessToken, headers: team, body: {} });
    expect([denied.status, denied.body.code]).toEqual([403, 'ERR_AUTH_005']);
    // The same gate, seen through an API key of the team project.
    await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [owner.id]);
    const teamKey = await createKey(app, owner.accessToken, { name: 'team key' }, teamId);
    expect((await app.request('POST', `/api/flow/gates/${created.body.slug}/validate`, { token: teamKey.plainKey, body: {} })).status).toBe(200);
    // Without X-Team-Id the member acts on their personal project, where the gate is not.
    expect((await app.request('GET', `/api/flow/gates/${created.body.id}`, { token: member.accessToken })).status).toBe(404);
  });
});
