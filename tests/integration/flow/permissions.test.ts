import { ApiKeyManageGates1732200009400 } from '../../../db/migrations/1732200009400-api-key-manage-gates';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';

/** API-key permission flags apply to Flow: `manage_gates` changes gates, any key reads and submits. */
describe('Flow permissions (manage_gates)', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let gate: any;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app, 'starter');
    gate = await createGate(app, ws.key, { name: 'Guarded' });
  });
  afterAll(() => app.close());

  const keyWith = async (permissions?: Record<string, boolean>) =>
    (await createKey(app, ws.user.accessToken, permissions ? { name: 'flags', permissions } : { name: 'defaults' })).plainKey as string;

  /** Every call that changes a gate's configuration, with a body that would otherwise succeed. */
  const managing = (id: string): Array<[string, string, unknown]> => [
    ['POST', '/api/flow/gates', { name: 'Sneaky' }],
    ['PUT', `/api/flow/gates/${id}`, { deliveryChannels: [{ type: 'webhook', url: 'https://attacker.example.com/collect' }] }],
    ['PUT', `/api/flow/gates/${id}`, { renderMode: 'custom_api', renderConfig: { url: 'https://attacker.example.com/render' } }],
    ['PUT', `/api/flow/gates/${id}/schema`, { schema: { type: 'object', properties: {} } }],
    ['POST', `/api/flow/gates/${id}/import-schema`, { templateId: '00000000-0000-4000-8000-000000000000' }],
    ['DELETE', `/api/flow/gates/${id}`, undefined],
  ];

  it('a key without manage_gates cannot change a gate: 403 ERR_AUTH_005 required manage_gates, nothing changes', async () => {
    const key = await keyWith({ read_templates: true });
    for (const [method, path, body] of managing(gate.id)) {
      const res = await app.request(method, path, { token: key, body });
      expect([method, path, res.status, res.body.code, res.body.relatedInfo]).toEqual([method, path, 403, 'ERR_AUTH_005', { required: 'manage_gates', granted: 'read_templates' }]);
    }
    const now = await app.request('GET', `/api/flow/gates/${gate.id}`, { token: ws.key });
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ deliveryChannels: [], renderMode: 'none', renderConfig: null, schemaVersion: gate.schemaVersion });
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_gates WHERE project_id = $1`, [ws.projectId]);
    expect(n).toBe(1);
  });

  it('any active key of the workspace reads gates and runs and submits', async () => {
    const key = await keyWith({ read_templates: true });
    const validate = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: key, body: { any: 'thing' } });
    expect(validate.status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/api/flow/gates', undefined],
      ['GET', `/api/flow/gates/${gate.id}`, undefined],
      ['GET', `/api/flow/gates/${gate.id}/versions`, undefined],
      ['GET', '/api/flow/runs', undefined],
      ['GET', `/api/flow/runs/${validate.body.runId}`, undefined],
      ['GET', `/api/flow/gates/${gate.id}/runs`, undefined],
      ['POST', `/api/flow/gates/${gate.id}/test`, { any: 'thing' }],
      ['POST', `/api/flow/gates/${gate.id}/runs`, { payload: { any: 'thing' } }],
    ] as const) {
      const res = await app.request(method, path, { token: key, body });
      expect([method, path, res.status]).toEqual([method, path, method === 'POST' && path.endsWith('/runs') ? 201 : 200]);
    }
  });

  it('a key created without permissions gets manage_gates with the default flags; an explicit object only when it asks', async () => {
    const created = await createKey(app, ws.user.accessToken, { name: 'defaults' });
    expect(created.permissions).toEqual({ generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: false, manage_gates: true, read_reports: false, run_reports: false });
    const made = await createGate(app, created.plainKey, { name: 'By a default key' });
    expect(made.name).toBe('By a default key');

    const asking = await createKey(app, ws.user.accessToken, { name: 'gates only', permissions: { manage_gates: true } });
    expect(asking.permissions).toEqual({ generate_documents: false, read_documents: false, read_templates: false, manage_webhooks: false, manage_gates: true, read_reports: false, run_reports: false });
    const upd = await app.request('PUT', `/api/flow/gates/${made.id}`, { token: asking.plainKey, body: { description: 'edited' } });
    expect([upd.status, upd.body.description]).toEqual([200, 'edited']);

    // The flag is a real boolean, like the others; PATCH can take it away.
    const bad = await app.request('POST', '/api/api-keys', { token: ws.user.accessToken, body: { name: 'x', permissions: { manage_gates: 'true' } } });
    expect([bad.status, bad.body.code]).toEqual([400, 'ERR_VALID_001']);
    const patched = await app.request('PATCH', `/api/api-keys/${asking.id}`, { token: ws.user.accessToken, body: { permissions: { manage_gates: false } } });
    expect(patched.body.permissions.manage_gates).toBe(false);
    const denied = await app.request('DELETE', `/api/flow/gates/${made.id}`, { token: asking.plainKey });
    expect([denied.status, denied.body.relatedInfo?.required]).toEqual([403, 'manage_gates']);
  });

  it('keys made before the flag existed keep their Flow access (the migration grants it)', async () => {
    const old = await createKey(app, ws.user.accessToken, { name: 'old', permissions: { read_documents: true } });
    const untouched = await createKey(app, ws.user.accessToken, { name: 'said no', permissions: { read_documents: true } });
    // As stored before the flag existed: no manage_gates key in the JSON at all.
    await app.services.db.query(`UPDATE api_keys SET permissions = permissions - 'manage_gates' WHERE id = $1`, [old.id]);
    await app.syncCredentials();
    const before = await app.request('POST', '/api/flow/gates', { token: old.plainKey, body: { name: 'Before migration' } });
    expect(before.status).toBe(403);
    const runner = app.services.db.createQueryRunner();
    try {
      await new ApiKeyManageGates1732200009400().up(runner);
    } finally {
      await runner.release();
    }
    await app.syncCredentials();
    const after = await app.request('POST', '/api/flow/gates', { token: old.plainKey, body: { name: 'After migration' } });
    expect(after.status).toBe(201);
    const [row] = await app.services.db.query(`SELECT permissions FROM api_keys WHERE id = $1`, [old.id]);
    expect(row.permissions).toEqual({ generate_documents: false, read_documents: true, read_templates: false, manage_webhooks: false, manage_gates: true, read_reports: false, run_reports: false });
    // A key that already says false keeps saying it.
    const still = await app.request('POST', '/api/flow/gates', { token: untouched.plainKey, body: { name: 'Still no' } });
    expect(still.status).toBe(403);
  });

  it('a dashboard JWT keeps its role rules: a member changes gates without any key flag', async () => {
    const res = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.user.accessToken, body: { description: 'by the owner' } });
    expect([res.status, res.body.description]).toEqual([200, 'by the owner']);
  });
});
