import { createHmac } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { download } from '../../support/documents';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { pdfText } from '../../support/rendering-pdf';
import { createTemplate, publish } from '../../support/templates';
import { runMaintenance } from '../../support/maintenance';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';

const FINAL = ['completed', 'failed', 'rejected', 'expired'];
const PDF_BODY = '%PDF-1.4\n% a document from a custom render API\n%%EOF\n';

function signedWith(req: ReceivedRequest, secret: string): boolean {
  const expected = 'v1=' + createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.${req.rawBody}`).digest('hex');
  return req.headers['x-service-signature'] === expected;
}

describe('Flow run lifecycle: rendering', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let receiver: WebhookReceiver;
  let templateId: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } });
    ws = await flowWorkspace(app, 'growth');
    const template = await createTemplate(app, ws.user.accessToken);
    await publish(app, ws.user.accessToken, template.id);
    templateId = template.id;
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
  });

  const submit = async (gateId: string, payload: unknown) => {
    const res = await app.request('POST', `/api/flow/gates/${gateId}/runs`, { token: ws.key, body: { payload } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const getRun = async (runId: string) => (await app.request('GET', `/api/flow/runs/${runId}`, { token: ws.key })).body;
  const finalRun = (runId: string, timeoutMs = 30_000) =>
    waitFor(async () => {
      const run = await getRun(runId);
      return FINAL.includes(run.status) ? run : undefined;
    }, { timeoutMs, what: `run ${runId} to finish` });

  it('native: renders the gate template with the payload; artefactUrl downloads the PDF', async () => {
    const gate = await createGate(app, ws.key, { name: 'Native render', renderMode: 'native', renderTemplateId: templateId, renderConfig: { format: 'pdf' } });
    const runId = await submit(gate.id, { customer: 'Ada Lovelace', items: [{ label: 'Analytical engine', amount: 1843 }] });
    const run = await finalRun(runId);
    expect(run).toMatchObject({ status: 'completed', error: null, approvalStatus: null, deliveryStatus: null, completedAt: expect.any(String) });
    expect(run.artefactUrl).toEqual(expect.any(String));
    const file = await download(run.artefactUrl);
    expect(file.status).toBe(200);
    expect(file.body.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(file.body);
    expect(text).toContain('Dear Ada Lovelace');
    expect(text).toContain('Analytical engine');
    const [row] = await app.services.db.query(`SELECT artefact_key FROM flow_runs WHERE id = $1`, [runId]);
    expect(row.artefact_key).toBe(`flow-runs/${ws.projectId}/${runId}.pdf`);
  });

  it('custom_api: POSTs the signed payload and stores the document it answers with', async () => {
    const gate = await createGate(app, ws.key, {
      name: 'Custom render body',
      renderMode: 'custom_api',
      renderConfig: { url: `${receiver.url}/render`, secret: 'render-secret-1' },
    });
    receiver.respondWith([{ status: 200, body: PDF_BODY, headers: { 'content-type': 'application/pdf' } }]);
    const payload = { customer: 'Grace', total: 42 };
    const before = receiver.requests.length;
    const runId = await submit(gate.id, payload);
    const run = await finalRun(runId);
    expect(run.status).toBe('completed');
    const req = receiver.requests[before];
    expect(req).toMatchObject({ method: 'POST', path: '/render' });
    expect(JSON.parse(req.rawBody)).toEqual(payload);
    expect(req.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'Formwork-Flow/1.0', 'x-service-event-id': runId });
    expect(signedWith(req, 'render-secret-1')).toBe(true);
    const file = await download(run.artefactUrl);
    expect(file.body.toString()).toBe(PDF_BODY);
  });

  it('custom_api: follows a JSON {url} answer to the document (through the outbound guard)', async () => {
    const gate = await createGate(app, ws.key, { name: 'Custom render url', renderMode: 'custom_api', renderConfig: { url: `${receiver.url}/render-url` } });
    receiver.respondWith([
      { status: 200, body: JSON.stringify({ url: `${receiver.url}/files/doc.pdf` }), headers: { 'content-type': 'application/json' } },
      { status: 200, body: PDF_BODY, headers: { 'content-type': 'application/pdf' } },
    ]);
    const before = receiver.requests.length;
    const run = await finalRun(await submit(gate.id, { n: 1 }));
    expect(run.status).toBe('completed');
    expect(receiver.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /render-url', 'GET /files/doc.pdf']);
    expect((await download(run.artefactUrl)).body.toString()).toBe(PDF_BODY);
  });

  it('custom_api: a failing API is retried, then the run fails with the error and the circuit breaker counts it', async () => {
    const gate = await createGate(app, ws.key, { name: 'Custom render failing', renderMode: 'custom_api', renderConfig: { url: `${receiver.url}/broken` } });
    receiver.respondWith([], { status: 503, body: 'renderer down' });
    const before = receiver.requests.length;
    const run = await finalRun(await submit(gate.id, { n: 2 }));
    receiver.respondWith([]);
    expect(run).toMatchObject({ status: 'failed', artefactUrl: null, completedAt: expect.any(String) });
    expect(run.error).toContain('HTTP 503');
    expect(receiver.requests.slice(before).filter((r) => r.path === '/broken')).toHaveLength(3);
    const [g] = await app.services.db.query(`SELECT consecutive_failures FROM flow_gates WHERE id = $1`, [gate.id]);
    expect(g.consecutive_failures).toBe(1);
  });

  it('a worker stopped while a run is rendering: a new worker finishes the run', async () => {
    const gate = await createGate(app, ws.key, { name: 'Native restart', renderMode: 'native', renderTemplateId: templateId });
    const runId = await submit(gate.id, { customer: 'Restart Robin' });
    await waitFor(async () => (await getRun(runId)).status === 'rendering', { what: 'run rendering' });
    await app.stopWorker();
    await app.startWorker();
    const run = await finalRun(runId, 60_000);
    expect(run.status).toBe('completed');
    expect(await pdfText((await download(run.artefactUrl)).body)).toContain('Dear Restart Robin');
  });

  it('a run with nothing but an auto approval completes at validation, without a workflow', async () => {
    const gate = await createGate(app, ws.key, { name: 'Nothing to do' });
    const run = await getRun(await submit(gate.id, { a: 1 }));
    expect(run).toMatchObject({ status: 'completed', artefactUrl: null });
  });

  it('retention: artefacts past the plan retention are removed and artefactUrl becomes null', async () => {
    const gate = await createGate(app, ws.key, { name: 'Retention', renderMode: 'custom_api', renderConfig: { url: `${receiver.url}/render` } });
    receiver.respondWith([{ status: 200, body: PDF_BODY, headers: { 'content-type': 'application/pdf' } }]);
    const runId = await submit(gate.id, { n: 3 });
    expect((await finalRun(runId)).artefactUrl).toEqual(expect.any(String));
    const [{ artefact_key: key }] = await app.services.db.query(`SELECT artefact_key FROM flow_runs WHERE id = $1`, [runId]);
    // Growth keeps 5 days: 4 days old stays, 6 days old goes.
    await app.services.db.query(`UPDATE flow_runs SET artefact_stored_at = now() - interval '4 days' WHERE id = $1`, [runId]);
    const maintenance = () => runMaintenance(app, { retentionSeconds: 3600 * 24 * 365, strandedAfterSeconds: 3600 });
    await maintenance();
    expect(await app.services.storage.exists(key)).toBe(true);
    await app.services.db.query(`UPDATE flow_runs SET artefact_stored_at = now() - interval '6 days' WHERE id = $1`, [runId]);
    await maintenance();
    expect(await app.services.storage.exists(key)).toBe(false);
    expect((await getRun(runId)).artefactUrl).toBeNull();
  });
});
