import { ApiKeyManageGates1732200009400 } from '../../../db/migrations/1732200009400-api-key-manage-gates';
import { ApiKeyReadRuns1732200011629 } from '../../../db/migrations/1732200011629-api-key-read-runs';
import { createDeliveries } from '../../../db/webhooks/deliveries';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';

/**
 * API-key permission flags apply to Flow: `manage_gates` changes gates, `read_runs` reads a run's
 * payload, any key reads gates and run lists and submits. Neither flag is on for a key made
 * without a permissions object (issue 29); keys made before keep what they had.
 */
describe('Flow permissions (manage_gates, read_runs)', () => {
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

  it('any active key of the workspace reads gates and run lists and submits', async () => {
    const key = await keyWith({ read_templates: true });
    const validate = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: key, body: { any: 'thing' } });
    expect(validate.status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/api/flow/gates', undefined],
      ['GET', `/api/flow/gates/${gate.id}`, undefined],
      ['GET', `/api/flow/gates/${gate.id}/versions`, undefined],
      ['GET', '/api/flow/runs', undefined],
      ['GET', `/api/flow/gates/${gate.id}/runs`, undefined],
      ['GET', `/api/flow/runs/${validate.body.runId}/deliveries`, undefined],
      ['POST', `/api/flow/gates/${gate.id}/test`, { any: 'thing' }],
      ['POST', `/api/flow/gates/${gate.id}/runs`, { payload: { any: 'thing' } }],
    ] as const) {
      const res = await app.request(method, path, { token: key, body });
      expect([method, path, res.status]).toEqual([method, path, method === 'POST' && path.endsWith('/runs') ? 201 : 200]);
    }
  });

  it('a run\'s payload needs read_runs: without it GET /runs/:id is 403 ERR_AUTH_005 and deliveries come without their bodies', async () => {
    const hooked = await createGate(app, ws.key, { name: 'Delivered', deliveryChannels: [{ type: 'webhook', url: 'https://hooks.example.com/in', secret: 'supersecret123' }] });
    const secret = { card: '4111 1111 1111 1111' };
    const submitted = await app.request('POST', `/api/flow/gates/${hooked.id}/runs`, { token: ws.key, body: { payload: secret } });
    expect(submitted.status).toBe(201);
    const runId = submitted.body.id;
    const without = await keyWith({ read_templates: true });
    const denied = await app.request('GET', `/api/flow/runs/${runId}`, { token: without });
    expect([denied.status, denied.body.code, denied.body.relatedInfo]).toEqual([403, 'ERR_AUTH_005', { required: 'read_runs', granted: 'read_templates' }]);
    expect(JSON.stringify(denied.body)).not.toContain('4111');
    // The list never carried payloads; a key without the flag still follows its runs there.
    const list = await app.request('GET', '/api/flow/runs', { token: without });
    expect(list.body.data.map((r: any) => r.id)).toContain(runId);
    expect(JSON.stringify(list.body)).not.toContain('4111');

    // The delivery the run's workflow records (this app runs no worker): the body sent holds the payload.
    await createDeliveries(app.services.db, [
      {
        projectId: ws.projectId,
        source: 'flow',
        key: 'channel-0',
        runId,
        url: 'https://hooks.example.com/in',
        secret: 'supersecret123',
        eventId: `evt_${runId}`,
        eventType: 'flow.run.completed',
        payload: { event: 'flow.run.completed', run: { id: runId, inputPayload: secret } },
      },
    ]);
    const hidden = await app.request('GET', `/api/flow/runs/${runId}/deliveries`, { token: without });
    expect(hidden.status).toBe(200);
    expect(hidden.body.data).toEqual([expect.objectContaining({ runId, url: 'https://hooks.example.com/in' })]);
    expect(hidden.body.data[0]).not.toHaveProperty('payload');
    expect(JSON.stringify(hidden.body)).not.toContain('4111');

    // With the flag (ws.key asked for it), and for the dashboard's JWT by its role, the payload is there.
    const withFlag = await keyWith({ read_runs: true });
    for (const token of [withFlag, ws.user.accessToken]) {
      const run = await app.request('GET', `/api/flow/runs/${runId}`, { token });
      expect([run.status, run.body.inputPayload]).toEqual([200, secret]);
      const shown = await app.request('GET', `/api/flow/runs/${runId}/deliveries`, { token });
      expect(JSON.stringify(shown.body.data[0].payload)).toContain('4111');
    }
  });

  it('a key created without permissions gets neither manage_gates nor read_runs; an explicit object only when it asks', async () => {
    const created = await createKey(app, ws.user.accessToken, { name: 'defaults' });
    expect(created.permissions).toEqual({ generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: false, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false });
    const refused = await app.request('POST', '/api/flow/gates', { token: created.plainKey, body: { name: 'By a default key' } });
    expect([refused.status, refused.body.code, refused.body.relatedInfo?.required]).toEqual([403, 'ERR_AUTH_005', 'manage_gates']);
    const made = await createGate(app, ws.key, { name: 'By a key that asked' });
    expect(made.name).toBe('By a key that asked');

    const asking = await createKey(app, ws.user.accessToken, { name: 'gates only', permissions: { manage_gates: true } });
    expect(asking.permissions).toEqual({ generate_documents: false, read_documents: false, read_templates: false, manage_webhooks: false, manage_gates: true, read_runs: false, read_reports: false, run_reports: false, embed_designer: false });
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
    expect(row.permissions).toEqual({ generate_documents: false, read_documents: true, read_templates: false, manage_webhooks: false, manage_gates: true, read_runs: false, read_reports: false, run_reports: false, embed_designer: false });
    // A key that already says false keeps saying it.
    const still = await app.request('POST', '/api/flow/gates', { token: untouched.plainKey, body: { name: 'Still no' } });
    expect(still.status).toBe(403);
  });

  it('keys made before read_runs existed keep reading payloads (the migration grants it); one that says false keeps it', async () => {
    const { runId } = (await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { any: 'thing' } })).body;
    const old = await createKey(app, ws.user.accessToken, { name: 'old', permissions: { read_documents: true, manage_gates: true } });
    const untouched = await createKey(app, ws.user.accessToken, { name: 'said no', permissions: { read_documents: true } });
    // As stored before the flag existed: no read_runs key in the JSON at all.
    await app.services.db.query(`UPDATE api_keys SET permissions = permissions - 'read_runs' WHERE id = $1`, [old.id]);
    await app.syncCredentials();
    expect((await app.request('GET', `/api/flow/runs/${runId}`, { token: old.plainKey })).status).toBe(403);
    const runner = app.services.db.createQueryRunner();
    try {
      await new ApiKeyReadRuns1732200011629().up(runner);
    } finally {
      await runner.release();
    }
    await app.syncCredentials();
    const after = await app.request('GET', `/api/flow/runs/${runId}`, { token: old.plainKey });
    expect([after.status, after.body.inputPayload]).toEqual([200, { any: 'thing' }]);
    const [row] = await app.services.db.query(`SELECT permissions FROM api_keys WHERE id = $1`, [old.id]);
    // What the key had is kept as it was (manage_gates included); read_runs is added.
    expect(row.permissions).toEqual({ generate_documents: false, read_documents: true, read_templates: false, manage_webhooks: false, manage_gates: true, read_runs: true, read_reports: false, run_reports: false, embed_designer: false });
    expect((await app.request('GET', `/api/flow/runs/${runId}`, { token: untouched.plainKey })).status).toBe(403);
  });

  it('a dashboard JWT keeps its role rules: a member changes gates without any key flag', async () => {
    const res = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.user.accessToken, body: { description: 'by the owner' } });
    expect([res.status, res.body.description]).toEqual([200, 'by the owner']);
  });
});
