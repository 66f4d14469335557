import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowIds } from '../../../domain/temporal-names';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type ReplyRule, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Issue 16: a document event's first webhook attempt is an activity of the document's (or batch's)
 * own workflow; a delivery workflow (`webhook-delivery-<id>`) starts only for a delivery whose first
 * attempt asked for a retry. Before, every delivery was a workflow: a batch of N documents with two
 * subscriptions started 2N + 2 of them.
 */
describe('document event deliveries', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  // The first wait is the long one: a retry workflow that skipped it (or waited a later delay) shows in the gaps.
  const DELAYS = [900, 300, 300];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      env: { FREE_DOCUMENTS_PER_MONTH: '1000', BATCH_CONCURRENCY: '8', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: DELAYS.join(',') },
    });
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
  });

  /** A project with one subscription per path, each to document.generated and batch.completed. */
  const projectWithSubscriptions = async (...paths: string[]): Promise<DocumentProject> => {
    const p = await setupDocumentProject(app);
    for (const path of paths) {
      const res = await app.request('POST', '/api/webhooks', {
        token: p.user.accessToken,
        body: { url: `${receiver.url}${path}`, events: ['document.generated', 'batch.completed'] },
      });
      expect(res.status).toBe(201);
    }
    return p;
  };
  const submitBatch = async (p: DocumentProject, size: number): Promise<string> => {
    const documents = Array.from({ length: size }, (_, i) => ({ variables: { customer: `Customer ${i}` } }));
    const res = await app.request('POST', '/api/documents/generate/batch', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', documents } });
    expect(res.status).toBe(201);
    await waitFor(async () => (await app.request('GET', `/api/documents/batches/${res.body.batchId}`, { token: p.apiKey })).body.status === 'completed', {
      timeoutMs: 180_000,
      what: `batch ${res.body.batchId}`,
    });
    return res.body.batchId;
  };
  interface Row {
    id: string;
    path: string;
    event_type: string;
    event_id: string;
    status: string;
    attempts: Array<{ number: number; at: string; statusCode: number | null }>;
  }
  /** The project's delivery records once `n` of them exist and all have ended. */
  const endedDeliveries = (projectId: string, n: number): Promise<Row[]> =>
    waitFor(
      async () => {
        const rows: Row[] = await app.services.db.query(
          `SELECT id, substring(url from '//[^/]+(/.*)$') AS path, event_type, event_id, status, attempts FROM webhook_deliveries WHERE project_id = $1`,
          [projectId],
        );
        return rows.length === n && rows.every((r) => r.status === 'completed' || r.status === 'failed') ? rows : undefined;
      },
      { timeoutMs: 60_000, what: `${n} ended deliveries` },
    );
  /** The delivery workflows (`webhook-delivery-<id>`) that exist for these deliveries: started at some point, running or closed. */
  const deliveryWorkflows = async (rows: Row[]) => {
    const found = await Promise.all(
      rows.map(async (r) => {
        const handle = app.services.temporal.workflow.getHandle(workflowIds.webhookDelivery(r.id));
        try {
          await handle.describe();
          return handle;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return undefined;
          throw err;
        }
      }),
    );
    return found.filter((h) => h !== undefined);
  };
  const requestsTo = (path: string, type?: string): ReceivedRequest[] => receiver.requests.filter((q) => q.path === path && (!type || q.json?.type === type));
  /** 500 the first time an event arrives at a path, 200 afterwards: every delivery needs exactly one retry. */
  const failFirstSight: ReplyRule = (req, all) =>
    all.filter((q) => q.path === req.path && q.headers['x-service-event-id'] === req.headers['x-service-event-id']).length === 1 ? 500 : 200;

  it('a batch of 50 documents with two subscriptions: each event arrives once per subscription, and no delivery workflow starts', async () => {
    const tag = randomUUID();
    const [a, b] = [`/a-${tag}`, `/b-${tag}`];
    const p = await projectWithSubscriptions(a, b);
    const batchId = await submitBatch(p, 50);

    const rows = await endedDeliveries(p.projectId, 2 * 50 + 2);
    expect(rows.every((r) => r.status === 'completed' && r.attempts.length === 1 && r.attempts[0].statusCode === 200)).toBe(true);
    const jobIds: string[] = (await app.services.db.query(`SELECT id FROM document_jobs WHERE batch_id = $1`, [batchId])).map((j: { id: string }) => j.id).sort();
    for (const path of [a, b]) {
      const generated = requestsTo(path, 'document.generated');
      expect(generated).toHaveLength(50);
      expect(generated.map((q) => q.json.data.jobId).sort()).toEqual(jobIds);
      expect(requestsTo(path, 'batch.completed').map((q) => q.json.data.batchId)).toEqual([batchId]);
    }
    // Before issue 16: one workflow per delivery, 102 for this batch (2 per document and 2 for batch.completed).
    expect(await deliveryWorkflows(rows)).toHaveLength(0);
  }, 240_000);

  it('a receiver that answers 500 first: one delivery workflow per failing delivery, which delivers the retry after the first delay', async () => {
    const tag = randomUUID();
    const [ok, flaky] = [`/ok-${tag}`, `/flaky-${tag}`];
    receiver.respondOn(flaky, [], failFirstSight);
    const p = await projectWithSubscriptions(ok, flaky);
    await submitBatch(p, 10);

    const rows = await endedDeliveries(p.projectId, 2 * 10 + 2);
    const okRows = rows.filter((r) => r.path === ok);
    const flakyRows = rows.filter((r) => r.path === flaky);
    expect(okRows.map((r) => [r.status, r.attempts.map((x) => x.statusCode)])).toEqual(okRows.map(() => ['completed', [200]]));
    expect(flakyRows.map((r) => [r.status, r.attempts.map((x) => [x.number, x.statusCode])])).toEqual(flakyRows.map(() => ['completed', [[1, 500], [2, 200]]]));
    for (const r of flakyRows) expect(Date.parse(r.attempts[1].at) - Date.parse(r.attempts[0].at)).toBeGreaterThanOrEqual(DELAYS[0]);

    const children = await deliveryWorkflows(rows);
    expect(children).toHaveLength(flakyRows.length);
    expect(new Set(children.map((h) => h.workflowId))).toEqual(new Set(flakyRows.map((r) => workflowIds.webhookDelivery(r.id))));
    expect(await Promise.all(children.map((h) => h.result()))).toEqual(children.map(() => 'completed'));
    // Each event reached the flaky receiver twice (the 500, then the retry) and the other one once.
    expect(requestsTo(flaky)).toHaveLength(2 * 11);
    expect(requestsTo(ok)).toHaveLength(11);
  }, 240_000);

  it('a single document: delivered inline without a workflow; a receiver that keeps failing gets the rest of the schedule, then failed', async () => {
    const tag = randomUUID();
    const [ok, down] = [`/ok-${tag}`, `/down-${tag}`];
    receiver.respondOn(down, [], 503);
    const p = await projectWithSubscriptions(ok, down);
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables: { customer: 'Solo' } } });
    expect(res.status).toBe(201);
    await waitForJob(app, p.apiKey, res.body.jobId);

    // While the retries wait, the record says so, and a manual retry is refused: the schedule is still running.
    const downId = await waitFor(async () => {
      const [r] = await app.services.db.query(`SELECT id, status, next_attempt_at FROM webhook_deliveries WHERE project_id = $1 AND url LIKE $2`, [p.projectId, `%${down}`]);
      return r?.status === 'delivering' && r.next_attempt_at ? (r.id as string) : undefined;
    }, { what: 'first attempt recorded with its next attempt' });
    const early = await app.request('POST', `/api/webhooks/deliveries/${downId}/retry`, { token: p.user.accessToken });
    expect([early.status, early.body.code]).toEqual([409, 'ERR_WEBHOOK_005']);

    const rows = await endedDeliveries(p.projectId, 2);
    const okRow = rows.find((r) => r.path === ok)!;
    const downRow = rows.find((r) => r.path === down)!;
    expect([okRow.status, okRow.attempts.map((x) => x.statusCode)]).toEqual(['completed', [200]]);
    // Attempt 1 in the job's workflow, 2 to 4 in the delivery workflow: the spec's 3 retries, each after its own delay.
    expect([downRow.status, downRow.attempts.map((x) => [x.number, x.statusCode])]).toEqual(['failed', [[1, 503], [2, 503], [3, 503], [4, 503]]]);
    const at = downRow.attempts.map((x) => Date.parse(x.at));
    DELAYS.forEach((delay, i) => expect(at[i + 1] - at[i]).toBeGreaterThanOrEqual(delay));
    const children = await deliveryWorkflows(rows);
    expect(children.map((h) => h.workflowId)).toEqual([workflowIds.webhookDelivery(downRow.id)]);
    expect(await children[0].result()).toBe('failed');
    expect(requestsTo(ok)).toHaveLength(1);
    expect(requestsTo(down)).toHaveLength(4);
  });

  it('a document delivery refused on its first attempt has no workflow, and a manual retry delivers it', async () => {
    const tag = randomUUID();
    const path = `/refusing-${tag}`;
    receiver.respondOn(path, [400], 200);
    const p = await projectWithSubscriptions(path);
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables: { customer: 'Refused' } } });
    await waitForJob(app, p.apiKey, res.body.jobId);
    const [row] = await endedDeliveries(p.projectId, 1);
    expect([row.status, row.attempts.map((x) => x.statusCode)]).toEqual(['failed', [400]]);
    expect(await deliveryWorkflows([row])).toHaveLength(0);

    const retry = await app.request('POST', `/api/webhooks/deliveries/${row.id}/retry`, { token: p.user.accessToken });
    expect(retry.status).toBe(200);
    const delivered = await waitFor(async () => {
      const d = await app.request('GET', `/api/webhooks/deliveries/${row.id}`, { token: p.user.accessToken });
      return d.body.status === 'completed' ? d.body : undefined;
    }, { what: 'manual retry delivered' });
    expect(delivered.attempts.map((a: { number: number; statusCode: number }) => [a.number, a.statusCode])).toEqual([[1, 400], [2, 200]]);
    expect(await app.services.temporal.workflow.getHandle(workflowIds.webhookDeliveryRetry(row.id, 1)).result()).toBe('completed');
    const sent = requestsTo(path);
    expect(sent).toHaveLength(2);
    expect(sent[1].headers['x-service-event-id']).toBe(sent[0].headers['x-service-event-id']);
  });
});
