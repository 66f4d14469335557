import { createHmac, timingSafeEqual } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';

const SECRET = 'whsec_flow_delivery_secret';
const FINAL = ['completed', 'failed'];

/** What a receiver does (docs/webhooks.md): HMAC-SHA256 over `<timestamp>.<raw body>`, compared in constant time. */
function verify(req: ReceivedRequest, secret: string): boolean {
  const expected = Buffer.from('v1=' + createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.`).update(req.rawBody).digest('hex'));
  const given = Buffer.from(req.headers['x-service-signature'] ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('Flow deliveries', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let other: FlowWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } });
    ws = await flowWorkspace(app, 'growth');
    other = await flowWorkspace(app, 'growth');
  });
  afterAll(() => app.close());

  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const r = await startWebhookReceiver();
    receivers.push(r);
    return r;
  };
  afterAll(() => Promise.all(receivers.map((r) => r.stop())));

  const deliveringGate = (name: string, r: WebhookReceiver) =>
    createGate(app, ws.key, { name, deliveryChannels: [{ type: 'webhook', url: `${r.url}/flow`, secret: SECRET, headers: { 'X-Tenant': 'acme' } }] });
  const submit = async (gateId: string, payload: unknown) => {
    const res = await app.request('POST', `/api/flow/gates/${gateId}/runs`, { token: ws.key, body: { payload } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const getRun = async (runId: string) => (await app.request('GET', `/api/flow/runs/${runId}`, { token: ws.key })).body;
  const finalRun = (runId: string) =>
    waitFor(async () => {
      const run = await getRun(runId);
      return FINAL.includes(run.status) ? run : undefined;
    }, { timeoutMs: 30_000, what: `run ${runId} to finish` });
  const deliveries = async (runId: string, key = ws.key) => app.request('GET', `/api/flow/runs/${runId}/deliveries`, { token: key });

  it('delivers flow.run.completed with the spec body, headers and a v1= signature', async () => {
    const r = await receiver();
    const gate = await deliveringGate('Deliver', r);
    const payload = { customer: 'Ada', total: 12.5 };
    const runId = await submit(gate.id, payload);
    const run = await finalRun(runId);
    expect(run).toMatchObject({ status: 'completed', deliveryStatus: 'completed', error: null });

    const [req] = await r.waitForRequests(1);
    expect(req.method).toBe('POST');
    expect(verify(req, SECRET)).toBe(true);
    expect(verify(req, 'whsec_wrong')).toBe(false);
    expect(Math.abs(Number(req.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(req.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Formwork-Flow/1.0',
      'x-service-event-id': runId,
      'x-service-event-type': 'flow.run.completed',
      'x-tenant': 'acme',
    });
    expect(req.json).toEqual({
      event: 'flow.run.completed',
      run: { id: runId, shortId: run.shortId, status: 'completed', inputPayload: payload, artefactUrl: null },
      gate: { id: gate.id, name: 'Deliver', slug: gate.slug },
      timestamp: expect.any(String),
    });
    expect(Object.keys(req.json)).toEqual(['event', 'run', 'gate', 'timestamp']);
    expect(new Date(req.json.timestamp).toISOString()).toBe(req.json.timestamp);

    const list = await deliveries(runId);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      expect.objectContaining({
        runId,
        url: `${r.url}/flow`,
        status: 'completed',
        eventId: runId,
        eventType: 'flow.run.completed',
        nextAttemptAt: null,
        attempts: [expect.objectContaining({ number: 1, statusCode: 200, error: null, durationMs: expect.any(Number) })],
      }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);
  });

  it('retries a 5xx: 500 then 200 is delivered with 2 attempts', async () => {
    const r = await receiver();
    r.respondWith([500], 200);
    const gate = await deliveringGate('Retry 5xx', r);
    const runId = await submit(gate.id, { n: 1 });
    expect((await finalRun(runId)).status).toBe('completed');
    const [d] = (await deliveries(runId)).body.data;
    expect(d.status).toBe('completed');
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual([500, 200]);
    const [first, second] = r.requests;
    expect(second.rawBody).toBe(first.rawBody);
    expect(verify(second, SECRET)).toBe(true);
  });

  it('4xx is not retried and fails the run; a manual retry delivers it and completes the run; retrying again is 409', async () => {
    const r = await receiver();
    r.respondWith([{ status: 410, body: 'gone' }], 200);
    const gate = await deliveringGate('Refused', r);
    const runId = await submit(gate.id, { n: 2 });
    const failed = await finalRun(runId);
    expect(failed).toMatchObject({ status: 'failed', deliveryStatus: 'failed', error: expect.stringContaining('1 of 1') });
    const [d] = (await deliveries(runId)).body.data;
    expect(d).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ number: 1, statusCode: 410, error: 'HTTP 410: gone' })] });
    expect(r.requests).toHaveLength(1);
    const [g] = await app.services.db.query(`SELECT consecutive_failures FROM flow_gates WHERE id = $1`, [gate.id]);
    expect(g.consecutive_failures).toBe(1);

    // Another workspace sees neither the run's deliveries nor the delivery.
    expect((await deliveries(runId, other.key)).body.code).toBe('FLOW.RUN_NOT_FOUND');
    const foreign = await app.request('POST', `/api/flow/deliveries/${d.id}/retry`, { token: other.key });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'FLOW.DELIVERY_NOT_FOUND']);

    const retry = await app.request('POST', `/api/flow/deliveries/${d.id}/retry`, { token: ws.key });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ success: true, deliveryId: d.id, message: expect.any(String) });
    const run = await waitFor(async () => {
      const current = await getRun(runId);
      return current.status === 'completed' ? current : undefined;
    }, { what: 'run completed after the manual retry' });
    expect(run).toMatchObject({ deliveryStatus: 'completed', error: null });
    const [after] = (await deliveries(runId)).body.data;
    expect(after.status).toBe('completed');
    expect(after.attempts.map((a: any) => [a.number, a.statusCode])).toEqual([[1, 410], [2, 200]]);
    expect(verify(r.requests[1], SECRET)).toBe(true);

    const again = await app.request('POST', `/api/flow/deliveries/${d.id}/retry`, { token: ws.key });
    expect([again.status, again.body.code]).toEqual([409, 'FLOW.DELIVERY_ALREADY_COMPLETED']);
  });

  it('a channel to an address the outbound guard refuses is refused when saved, naming OUTBOUND_ALLOWLIST', async () => {
    const blocked = { type: 'webhook', url: 'http://10.1.2.3/hook', secret: SECRET };
    const created = await app.request('POST', '/api/flow/gates', { token: ws.key, body: { name: 'Blocked channel', deliveryChannels: [blocked] } });
    expect([created.status, created.body.code]).toEqual([400, 'ERR_OUTBOUND_001']);
    expect(created.body.message).toContain('deliveryChannels[0].url');
    expect(created.body.message).toContain('OUTBOUND_ALLOWLIST');
    expect(created.body.relatedInfo).toMatchObject({ field: 'deliveryChannels[0].url', host: '10.1.2.3', reason: 'internal_address' });

    const r = await receiver();
    const gate = await deliveringGate('Blocked on update', r);
    const updated = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { deliveryChannels: [{ type: 'webhook', url: `${r.url}/flow`, secret: { set: true } }, blocked] } });
    expect([updated.status, updated.body.code, updated.body.relatedInfo?.field]).toEqual([400, 'ERR_OUTBOUND_001', 'deliveryChannels[1].url']);
    const renderApi = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { renderMode: 'custom_api', renderConfig: { url: 'http://169.254.169.254/latest' } } });
    expect([renderApi.status, renderApi.body.code, renderApi.body.relatedInfo?.field]).toEqual([400, 'ERR_OUTBOUND_001', 'renderConfig.url']);
    const now = (await app.request('GET', `/api/flow/gates/${gate.id}`, { token: ws.key })).body;
    expect(now).toMatchObject({ renderMode: 'none', deliveryChannels: [expect.objectContaining({ url: `${r.url}/flow` })] });
  });

  it('a manual retry after the channel was fixed goes to the channel as it is now', async () => {
    const old = await receiver();
    old.respondWith([{ status: 404, body: 'no such hook' }], 404);
    const gate = await deliveringGate('Fixed channel', old);
    const runId = await submit(gate.id, { n: 4 });
    expect(await finalRun(runId)).toMatchObject({ status: 'failed', deliveryStatus: 'failed' });
    const [d] = (await deliveries(runId)).body.data;

    const fixed = await receiver();
    const NEW_SECRET = 'whsec_flow_delivery_secret_rotated';
    const put = await app.request('PUT', `/api/flow/gates/${gate.id}`, {
      token: ws.key,
      body: { deliveryChannels: [{ type: 'webhook', url: `${fixed.url}/fixed`, secret: NEW_SECRET, headers: { 'X-Tenant': 'acme-fixed' } }] },
    });
    expect(put.status).toBe(200);
    const retry = await app.request('POST', `/api/flow/deliveries/${d.id}/retry`, { token: ws.key });
    expect(retry.status).toBe(200);
    await waitFor(async () => ((await getRun(runId)).status === 'completed' ? true : undefined), { what: 'run completed after the retry to the fixed channel' });

    const [req] = await fixed.waitForRequests(1);
    expect(req.path).toBe('/fixed');
    expect(req.headers).toMatchObject({ 'x-service-event-id': runId, 'x-tenant': 'acme-fixed' });
    expect(verify(req, NEW_SECRET)).toBe(true);
    expect(old.requests).toHaveLength(1);
    const [after] = (await deliveries(runId)).body.data;
    expect(after).toMatchObject({ status: 'completed', url: `${fixed.url}/fixed` });
    expect(after.attempts.map((a: any) => [a.number, a.statusCode])).toEqual([[1, 404], [2, 200]]);
  });

  it('unknown runs and deliveries answer 404', async () => {
    const unknownRun = await deliveries('00000000-0000-4000-8000-000000000000');
    expect([unknownRun.status, unknownRun.body.code]).toEqual([404, 'FLOW.RUN_NOT_FOUND']);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await app.request('POST', `/api/flow/deliveries/${id}/retry`, { token: ws.key });
      expect([res.status, res.body.code]).toEqual([404, 'FLOW.DELIVERY_NOT_FOUND']);
    }
  });

  it('a worker stopped while a run is delivering: a new worker finishes the delivery and the run', async () => {
    const r = await receiver();
    r.respondWith([503, 503], 200);
    const gate = await deliveringGate('Restart delivering', r);
    const runId = await submit(gate.id, { n: 3 });
    await r.waitForRequests(1);
    expect((await getRun(runId)).status).toBe('delivering');
    await app.stopWorker();
    await app.startWorker();
    const run = await waitFor(async () => {
      const current = await getRun(runId);
      return FINAL.includes(current.status) ? current : undefined;
    }, { timeoutMs: 45_000, what: 'run finished after the restart' });
    expect(run.status).toBe('completed');
    const [d] = (await deliveries(runId)).body.data;
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual([503, 503, 200]);
  });
});
