import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, invoiceSchema, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';

const good = { customer: 'Ada', items: [{ price: 10, qty: 2 }] };
const channel = { type: 'webhook', url: 'https://hooks.example.com/flow', secret: 'whsec_123456789' };

describe('Flow runs', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let gate: any;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await flowWorkspace(app, 'growth');
    gate = await createGate(app, ws.key, { name: 'Runs', schema: invoiceSchema });
  });
  afterAll(() => app.close());

  it('POST /gates/:gateId/runs answers 201 with the created run, metadata kept', async () => {
    const res = await app.request('POST', `/api/flow/gates/${gate.shortId}/runs`, { token: ws.key, body: { payload: good, metadata: { orderId: 'A-1', urgent: true } } });
    // A created run: 201 (the spec lists no 202) with Location at its GET URL.
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${app.url}/api/flow/runs/${res.body.id}`);
    expect((await app.request('GET', `/api/flow/runs/${res.body.id}`, { token: ws.key })).status).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.any(String),
      runId: res.body.id,
      shortId: expect.stringMatching(/^frun_/),
      gateId: gate.id,
      status: 'completed',
      source: 'rest',
      inputPayload: good,
      metadata: { orderId: 'A-1', urgent: true },
      artefactUrl: null,
      validation: { valid: true, layers: { schema: 'pass', business_rules: 'pass' } },
    });
    const failed = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: { items: 'x' } } });
    expect(failed.status).toBe(201);
    expect(failed.headers.get('location')).toBe(`${app.url}/api/flow/runs/${failed.body.id}`);
    expect(failed.body.status).toBe('validation_failed');
    expect(failed.body.validation.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'customer', code: 'REQUIRED' })]));
  });

  it('refuses a malformed submission body', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'ERR_VALID_005'],
      [{ payload: good, metadata: { nested: { a: 1 } } }, 'ERR_VALID_001'],
      [{ payload: good, metadata: { big: 'x'.repeat(11 * 1024) } }, 'ERR_VALID_001'],
      [{ payload: good, extra: 1 }, 'ERR_VALID_001'],
    ];
    for (const [body, code] of cases) {
      const res = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body });
      expect([res.status, res.body.code]).toEqual([400, code]);
    }
  });

  it('a run with delivery to do starts its workflow (id = run id), which moves it on', async () => {
    const delivering = await createGate(app, ws.key, { name: 'Delivering', deliveryChannels: [channel] });
    const res = await app.request('POST', `/api/flow/gates/${delivering.id}/validate`, { token: ws.key, body: { any: 'thing' } });
    expect(res.status).toBe(200);
    const row = await waitFor(async () => {
      const [r] = await app.services.db.query(`SELECT status, workflow_pending, workflow_started_at FROM flow_runs WHERE id = $1`, [res.body.runId]);
      // The channel's host does not resolve: the run stays `delivering` (retries), past `validated`.
      return r.status !== 'validated' ? r : undefined;
    }, { what: 'run moved by its workflow' });
    expect(row.workflow_pending).toBe(false);
    expect(row.workflow_started_at).not.toBeNull();
    const described = await app.services.temporal.workflow.getHandle(res.body.runId).describe();
    expect(described.type).toBe('flowRunWorkflow');
  });

  it('never loses an accepted run: a failed start is retried, and the sweep starts what is left', async () => {
    const delivering = await createGate(app, ws.key, { name: 'Resilient', deliveryChannels: [channel] });
    const client = app.services.temporal.workflow;
    const original = client.start.bind(client);
    const spy = jest.spyOn(client, 'start').mockRejectedValue(new Error('Temporal unavailable'));
    const res = await app.request('POST', `/api/flow/gates/${delivering.id}/validate`, { token: ws.key, body: {} });
    expect(res.status).toBe(200);
    await waitFor(() => spy.mock.calls.length >= 4, { what: 'start retried' });
    const [pending] = await app.services.db.query(`SELECT status, workflow_pending FROM flow_runs WHERE id = $1`, [res.body.runId]);
    expect(pending).toEqual({ status: 'validated', workflow_pending: true });

    // Temporal is back: the sweep (what every worker runs at start-up and periodically) starts it.
    spy.mockImplementation(original);
    const { createWorkflowOutbox } = await import('../../../platform/workflow-outbox');
    const starter = createWorkflowOutbox(app.services);
    expect(await starter.sweep(0)).toBeGreaterThanOrEqual(1);
    // A second sweep or a late start of the same run is harmless: the id is taken.
    await starter.sweep(0);
    await waitFor(async () => {
      const [r] = await app.services.db.query(`SELECT status FROM flow_runs WHERE id = $1`, [res.body.runId]);
      return r.status !== 'validated';
    }, { what: 'swept run moved by its workflow' });
    spy.mockRestore();
    await starter.stop();
  });

  it('lists runs globally and per gate with page, limit, status, source and sorting; gets the full record', async () => {
    const own = await flowWorkspace(app, 'growth');
    const a = await createGate(app, own.key, { name: 'A', schema: invoiceSchema });
    const b = await createGate(app, own.key, { name: 'B' });
    await app.request('POST', `/api/flow/gates/${a.id}/validate`, { token: own.key, body: good });
    await app.request('POST', `/api/flow/gates/${a.id}/validate`, { token: own.key, body: {} });
    await app.request('POST', `/api/flow/gates/${b.id}/validate`, { token: own.key, body: {} });

    const all = await app.request('GET', '/api/flow/runs', { token: own.key });
    expect(all.body.meta).toMatchObject({ total: 3, page: 1, limit: 25 });
    expect(all.body.data[0].inputPayload).toBeUndefined();
    expect(all.body.data.map((r: { gateId: string }) => r.gateId)).toEqual([b.id, a.id, a.id]);
    const asc = await app.request('GET', '/api/flow/runs?sortOrder=asc&limit=1&page=2', { token: own.key });
    expect(asc.body.data).toHaveLength(1);
    expect(asc.body.data[0].status).toBe('validation_failed');
    const failed = await app.request('GET', '/api/flow/runs?status=validation_failed', { token: own.key });
    expect(failed.body.meta.total).toBe(1);
    const byStatus = await app.request('GET', '/api/flow/runs?sortBy=status&sortOrder=asc', { token: own.key });
    expect(byStatus.body.data.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'validation_failed']);
    expect((await app.request('GET', '/api/flow/runs?source=mcp', { token: own.key })).body.meta.total).toBe(0);
    expect((await app.request('GET', '/api/flow/runs?source=rest', { token: own.key })).body.meta.total).toBe(3);
    const perGate = await app.request('GET', `/api/flow/gates/${a.slug}/runs`, { token: own.key });
    expect(perGate.body.meta.total).toBe(2);
    for (const bad of ['limit=0', 'limit=101', 'status=done', 'source=soap', 'sortBy=gate']) {
      expect((await app.request('GET', `/api/flow/runs?${bad}`, { token: own.key })).status).toBe(400);
    }

    const full = await app.request('GET', `/api/flow/runs/${all.body.data[1].id}`, { token: own.key });
    expect(full.body).toMatchObject({ inputPayload: expect.anything(), validation: { steps: expect.any(Array) }, approvalStatus: null, deliveryStatus: null });
    // Another workspace sees none of it.
    expect((await app.request('GET', `/api/flow/runs/${full.body.id}`, { token: ws.key })).body.code).toBe('FLOW.RUN_NOT_FOUND');
    expect((await app.request('GET', `/api/flow/runs/${full.body.shortId}`, { token: ws.key })).status).toBe(404);
    expect((await app.request('GET', `/api/flow/runs/not-a-run`, { token: own.key })).status).toBe(404);
    const theirs = await app.request('GET', '/api/flow/runs', { token: ws.key });
    expect(theirs.body.data.some((r: { gateId: string }) => r.gateId === a.id)).toBe(false);
  });
});
