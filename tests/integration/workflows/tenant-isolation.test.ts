import { startTestApp, type TestApp } from '../../support/app';
import { approverEmail, manualGate } from '../../support/approvals';
import { setupDocumentProject, type DocumentProject } from '../../support/documents';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Issue 30: one slow tenant never slows another. Project A has 20 webhook subscriptions to a receiver
 * that never answers (each attempt waits out the 10 s request budget) and generates a batch of 200;
 * project B's Flow runs (delivered to a receiver that answers at once) and approval e-mails are
 * measured idle and then while A's deliveries hang, in the same test: the loaded median stays within
 * 2 s of the idle one. Before the egress queue all of B's runs and e-mails waited behind A's attempts
 * on the main queue's ten slots (none within 45 s).
 */
describe('tenant isolation on the task queues', () => {
  let app: TestApp;
  let hanging: WebhookReceiver;
  let quick: WebhookReceiver;
  let a: DocumentProject;
  let b: FlowWorkspace;
  const SAMPLES = 5;
  const ALLOWED_MS = 2_000;

  beforeAll(async () => {
    hanging = await startWebhookReceiver();
    hanging.respondWith([], 'hang');
    quick = await startWebhookReceiver();
    // Retries an hour away: the hanging receiver's first attempts are the load, not their retries.
    app = await startTestApp({ env: { FREE_DOCUMENTS_PER_MONTH: '1000', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '3600000' } });
    a = await setupDocumentProject(app);
    for (let i = 0; i < 20; i += 1) {
      const res = await app.request('POST', '/api/webhooks', { token: a.user.accessToken, body: { url: `${hanging.url}/a${i}`, events: ['document.generated', 'batch.completed'] } });
      expect(res.status).toBe(201);
    }
    b = await flowWorkspace(app);
  });
  afterAll(async () => {
    // The hanging requests end first (a reset), so the workers' shutdown does not wait out their budgets.
    await Promise.all([hanging.stop(), quick.stop()]);
    await app.close();
  });

  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

  /** Submission to `completed` of a run of an automatic gate that delivers to the quick receiver, from the run's own timestamps. */
  async function runDurations(gateId: string): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      const res = await app.request('POST', `/api/flow/gates/${gateId}/runs`, { token: b.key, body: { payload: { customer: 'Ada', n: i } } });
      expect(res.status).toBe(201);
      const run = await waitFor(
        async () => {
          const r = (await app.request('GET', `/api/flow/runs/${res.body.id}`, { token: b.key })).body;
          return ['completed', 'failed'].includes(r.status) ? r : undefined;
        },
        { timeoutMs: 120_000, what: `B's run ${res.body.id}` },
      );
      expect(run).toMatchObject({ status: 'completed', deliveryStatus: 'completed' });
      out.push(Date.parse(run.completedAt) - Date.parse(run.createdAt));
    }
    return out;
  }

  /** Submission to the approval e-mail's arrival at the SMTP server, on a manual gate whose one approver gets a mail per run. */
  async function mailDurations(gate: { id: string }, email: string): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      const earlier = new Set(app.smtp!.messages);
      const started = Date.now();
      const res = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: b.key, body: { customer: 'Ada', amount: i + 1 } });
      expect(res.status).toBe(200);
      await app.smtp!.waitForMessage((m) => m.to.includes(email) && !earlier.has(m), 120_000);
      out.push(Date.now() - started);
    }
    return out;
  }

  it("keeps B's runs and approval e-mails as quick while A's 200 documents' deliveries hang", async () => {
    const gate = await createGate(app, b.key, { name: 'Quick delivery', deliveryChannels: [{ type: 'webhook', url: `${quick.url}/b`, secret: 'whsec_isolation_test_secret' }] });

    const approver = approverEmail('isolation');
    const approvalGate = await manualGate(app, b, { approvers: [{ email: approver }], timeoutMinutes: 60, onTimeout: 'reject' });

    const idleRuns = await runDurations(gate.id);
    const idleMails = await mailDurations(approvalGate, approver);

    const documents = Array.from({ length: 200 }, (_, i) => ({ variables: { customer: `Customer ${i}` } }));
    const batch = await app.request('POST', '/api/documents/generate/batch', { token: a.apiKey, body: { templateId: a.templateId, format: 'excel', documents } });
    expect(batch.status).toBe(201);
    // The load is on: A's first events hold requests open at the receiver.
    await waitFor(() => hanging.requests.length >= 40, { timeoutMs: 120_000, what: "A's deliveries hanging at the receiver" });

    const before = hanging.requests.length;
    const loadedRuns = await runDurations(gate.id);
    const loadedMails = await mailDurations(approvalGate, approver);
    // A's deliveries went on hanging the whole time B was measured.
    expect(hanging.requests.length).toBeGreaterThan(before);
    const batchNow = (await app.request('GET', `/api/documents/batches/${batch.body.batchId}`, { token: a.apiKey })).body;
    console.log(
      `isolation: B's runs idle ${idleRuns.join('/')} ms, loaded ${loadedRuns.join('/')} ms; approval e-mails idle ${idleMails.join('/')} ms, loaded ${loadedMails.join('/')} ms; ` +
        `A's requests hanging: ${hanging.requests.length}, batch ${batchNow.status} ${batchNow.completedDocuments ?? ''}`,
    );
    expect(median(loadedRuns)).toBeLessThanOrEqual(median(idleRuns) + ALLOWED_MS);
    expect(median(loadedMails)).toBeLessThanOrEqual(median(idleMails) + ALLOWED_MS);
  }, 600_000);
});
