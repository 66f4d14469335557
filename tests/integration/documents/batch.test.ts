import { createHmac, timingSafeEqual } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, type DocumentProject } from '../../support/documents';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';

/** Verifies a delivery the way a receiver would, with node:crypto only. */
function verifySignature(req: ReceivedRequest, secret: string): boolean {
  const expected = 'v1=' + createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.${req.rawBody}`).digest('hex');
  const given = Buffer.from(req.headers['x-service-signature'] ?? '');
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected));
}

describe('batches', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let p: DocumentProject;
  let secret: string;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      env: { FREE_DOCUMENTS_PER_MONTH: '5000', BATCH_MAX_DOCUMENTS: '1000', BATCH_CONCURRENCY: '16', RENDER_POOL_SIZE: '4', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '100,100,100' },
    });
    p = await setupDocumentProject(app);
    const sub = await app.request('POST', '/api/webhooks', { token: p.user.accessToken, body: { url: `${receiver.url}/hooks`, events: ['document.generated', 'batch.completed'] } });
    expect(sub.status).toBe(201);
    secret = sub.body.secret;
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
  });

  const submit = (documents: unknown[], extra: Record<string, unknown> = {}) =>
    app.request('POST', '/api/documents/generate/batch', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', documents, ...extra } });
  const batchDone = (batchId: string, token = p.apiKey, timeoutMs = 240_000) =>
    waitFor(
      async () => {
        const res = await app.request('GET', `/api/documents/batches/${batchId}`, { token });
        return res.body.status === 'completed' ? res.body : undefined;
      },
      { timeoutMs, what: `batch ${batchId}` },
    );
  const eventsOf = (type: string) => receiver.requests.filter((r) => r.json?.type === type);

  it('renders a batch of 1,000 documents into 1,000 distinct artefacts and announces it', async () => {
    // A project of its own that subscribes to batch.completed only: a thousand document events
    // would measure the receiver, not the batch.
    const big = await setupDocumentProject(app);
    const sub = await app.request('POST', '/api/webhooks', { token: big.user.accessToken, body: { url: `${receiver.url}/big`, events: ['batch.completed'] } });
    const documents = Array.from({ length: 1000 }, (_, i) => ({ variables: { customer: `Customer ${i}` }, metadata: { row: i } }));
    const res = await app.request('POST', '/api/documents/generate/batch', {
      token: big.apiKey,
      body: { templateId: big.templateId, format: 'excel', documents, metadata: { campaign: 'autumn' } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ batchId: expect.any(String), status: 'processing', totalJobs: 1000, completedJobs: 0, failedJobs: 0, createdAt: expect.any(String) });

    // About 80 s alone; CI runs it beside another test file on two cores, where it has taken over 240 s.
    const done = await batchDone(res.body.batchId, big.apiKey, 600_000);
    expect(done).toMatchObject({ status: 'completed', totalJobs: 1000, completedJobs: 1000, failedJobs: 0, metadata: { campaign: 'autumn' } });
    expect(done.documents).toHaveLength(1000);
    expect(new Set(done.documents.map((d: any) => d.downloadUrl)).size).toBe(1000);

    const keys = await app.services.db.query(`SELECT DISTINCT artefact_key FROM document_jobs WHERE batch_id = $1 AND artefact_key IS NOT NULL`, [res.body.batchId]);
    expect(keys).toHaveLength(1000);
    const exists = await Promise.all(keys.map((k: any) => app.services.storage.exists(k.artefact_key)));
    expect(exists.every(Boolean)).toBe(true);
    const [meta] = await app.services.db.query(`SELECT metadata FROM document_jobs WHERE batch_id = $1 AND batch_index = 7`, [res.body.batchId]);
    expect(meta.metadata).toEqual({ campaign: 'autumn', row: 7 });

    const [event] = await waitFor(() => {
      const found = eventsOf('batch.completed').filter((r) => r.json.data.batchId === res.body.batchId);
      return found.length > 0 ? found : undefined;
    });
    expect(verifySignature(event, sub.body.secret)).toBe(true);
    expect(event.json.data).toMatchObject({ batchId: res.body.batchId, status: 'completed', totalJobs: 1000, completedJobs: 1000, failedJobs: 0 });
  }, 660_000);

  it('survives a worker stopping mid-batch: a new worker finishes it, every document done exactly once', async () => {
    // More than the groups in flight at once (BATCH_CONCURRENCY 16: four render activities of ten
    // documents), which the stopping worker finishes within its grace time; the rest is the new worker's.
    const total = 100;
    const documents = Array.from({ length: total }, (_, i) => ({ variables: { customer: `Restart ${i}` } }));
    const res = await app.request('POST', '/api/documents/generate/batch', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', documents } });
    expect(res.status).toBe(201);
    const batchId = res.body.batchId;
    const completed = async () =>
      (await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE batch_id = $1 AND status = 'completed'`, [batchId]))[0].n as number;
    await waitFor(async () => (await completed()) >= 5, { timeoutMs: 120_000, what: 'some documents of the batch' });
    await app.stopWorker();
    const atStop = await completed();
    expect(atStop).toBeLessThan(total);

    await app.startWorker();
    const done = await batchDone(batchId);
    const jobs = await app.services.db.query(`SELECT id, status, attempts, error_code, error_message, artefact_key FROM document_jobs WHERE batch_id = $1`, [batchId]);
    // Any job that did not complete, with its error, so a failure here says why.
    expect(jobs.filter((j: any) => j.status !== 'completed')).toEqual([]);
    expect(done).toMatchObject({ completedJobs: total, failedJobs: 0 });
    expect(new Set(jobs.map((j: any) => j.artefact_key)).size).toBe(total);
    // One document.generated per job: no document was announced twice across the two workers.
    // An announcement the stopped worker had in hand goes out once Temporal hands its task to the
    // new worker (after the sticky queue's or the activity's timeout), so this waits up to a minute.
    const generated = await waitFor(
      () => {
        const mine = eventsOf('document.generated').filter((r) => r.json.data.batchId === batchId);
        return mine.length >= total ? mine : undefined;
      },
      { timeoutMs: 90_000, what: `a document.generated event for each of the ${total} documents` },
    );
    expect(generated).toHaveLength(total);
    expect(new Set(generated.map((r) => r.json.data.jobId)).size).toBe(total);
    expect(generated.every((r) => verifySignature(r, secret) && r.json.data.downloadUrl)).toBe(true);
  }, 300_000);

  it('refuses a batch over the maximum, or with one invalid document, and accepts nothing', async () => {
    const tooBig = await submit(Array.from({ length: 1001 }, () => ({ variables: { customer: 'x' } })));
    expect(tooBig.status).toBe(400);
    expect(tooBig.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'documents' } });
    expect(tooBig.body.message).toContain('at most 1000');

    const oneBad = await submit([{ variables: { customer: 'ok' } }, { variables: {} }]);
    expect(oneBad.status).toBe(400);
    expect(oneBad.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'documents[1].variables.customer' } });
    const nested = await submit([{ variables: { customer: 'ok' }, metadata: { deep: { x: 1 } } }]);
    expect(nested.body.relatedInfo.field).toBe('documents[0].metadata.deep');
  });

  it('answers 404 for another project\'s batch', async () => {
    const other = await setupDocumentProject(app);
    const res = await submit([{ variables: { customer: 'mine' } }]);
    const peek = await app.request('GET', `/api/documents/batches/${res.body.batchId}`, { token: other.apiKey });
    expect(peek.status).toBe(404);
    expect(peek.body.code).toBe('ERR_BATCH_001');
  });
});
