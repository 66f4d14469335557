import { createHmac, randomUUID } from 'node:crypto';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { activityInterceptors } from '../../../activities/failure';
import { createWebhookActivities } from '../../../activities/webhooks';
import { listRunDeliveries } from '../../../api/webhooks/webhook-deliveries.service';
import { presentDelivery } from '../../../api/webhooks/webhooks.presenter';
import { prepareEventDeliveries } from '../../../db/webhooks/deliveries';
import { queuesOfMain, workflowIds } from '../../../domain/temporal-names';
import { startDeliveryRetries } from '../../../platform/workflow-starts';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { subscribe } from './helpers';

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

/**
 * The workflow-side helpers the document and Flow workflows build on: prepareEventDeliveries
 * (fan-out to subscriptions or channels), deliverDocumentEvent (first attempt in the parent, a child
 * that outlives it for the retries) and dispatchDeliveries (children the parent waits for). A worker
 * of this file runs test-only parent workflows.
 */
describe('dispatching deliveries from a workflow', () => {
  let app: TestApp;
  let receivers: WebhookReceiver[];
  let worker: Worker;
  let connection: NativeConnection;
  let running: Promise<void>;
  let taskQueue: string;

  beforeAll(async () => {
    let bundle: { code: string };
    [app, bundle, ...receivers] = await Promise.all([
      startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '200,400,800' } }),
      bundleWorkflowCode({ workflowsPath: require.resolve('../../support/webhook-dispatch.workflow'), logger: quietLogger }),
      startWebhookReceiver(),
      startWebhookReceiver(),
    ]);
    taskQueue = `${app.services.taskQueues.main}-dispatch`;
    connection = await NativeConnection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle: { code: bundle.code },
      activities: createWebhookActivities({ db: app.services.db, outboundAllowlist: ['127.0.0.1'], startDeliveryRetry: (d) => startDeliveryRetries({ temporal: app.services.temporal, taskQueues: queuesOfMain(taskQueue) }, d) }),
      interceptors: activityInterceptors(),
    });
    running = worker.run();
  });
  afterAll(async () => {
    worker.shutdown();
    await running;
    await connection.close();
    await Promise.all(receivers.map((r) => r.stop()));
    await app.close();
  });
  beforeEach(() => {
    for (const r of receivers) {
      r.requests.length = 0;
      r.respondWith([]);
    }
  });

  /** Each test in a project of its own, so no subscription of another test receives its events. */
  const newProject = async (): Promise<{ alice: SignedUpUser; projectId: string }> => {
    const alice = await signUp(app);
    const [{ project_id: projectId }] = await app.services.db.query(`SELECT project_id FROM memberships WHERE user_id = $1`, [alice.id]);
    return { alice, projectId };
  };
  const event = (type: string, data: Record<string, unknown> = {}) => ({ id: randomUUID(), type, timestamp: new Date().toISOString(), data });
  const deliveryRow = async (id: string) => (await app.services.db.query(`SELECT status, attempts FROM webhook_deliveries WHERE id = $1`, [id]))[0];

  it('fans a document event out to the active subscriptions that asked for its type, once per event', async () => {
    const { alice, projectId } = await newProject();
    const [r] = receivers;
    const wanted = await subscribe(app, alice.accessToken, { url: `${r.url}/wanted`, events: ['document.generated', 'document.failed'] });
    const paused = await subscribe(app, alice.accessToken, { url: `${r.url}/paused`, events: ['document.failed'] });
    await app.request('PATCH', `/api/webhooks/${paused.id}`, { token: alice.accessToken, body: { isActive: false } });
    await subscribe(app, alice.accessToken, { url: `${r.url}/other-type`, events: ['batch.completed'] });
    const deleted = await subscribe(app, alice.accessToken, { url: `${r.url}/deleted`, events: ['document.failed'] });
    await app.request('DELETE', `/api/webhooks/${deleted.id}`, { token: alice.accessToken });
    const bob = await signUp(app);
    await subscribe(app, bob.accessToken, { url: `${r.url}/someone-else`, events: ['document.failed'] });

    const e = event('document.failed', { jobId: randomUUID(), status: 'failed', errorMessage: 'boom' });
    const ids = await prepareEventDeliveries(app.services.db, { projectId, source: 'document', event: e });
    expect(ids).toHaveLength(1);
    const [row] = await app.services.db.query(`SELECT subscription_id, url, status, event_id, payload::text AS body FROM webhook_deliveries WHERE id = $1`, [ids[0]]);
    expect(row).toMatchObject({ subscription_id: wanted.id, url: `${r.url}/wanted`, status: 'pending', event_id: e.id });
    expect(row.body).toBe(JSON.stringify({ id: e.id, type: e.type, timestamp: e.timestamp, data: e.data }));

    // The same event again (a retried activity): the same delivery, not a second one.
    expect(await prepareEventDeliveries(app.services.db, { projectId, source: 'document', event: e })).toEqual(ids);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1`, [e.id]);
    expect(n).toBe(1);
  });

  it('a document event: the parent makes the first attempt and ends; the retries go on in a child of their own and complete', async () => {
    const { alice, projectId } = await newProject();
    const [r] = receivers;
    await subscribe(app, alice.accessToken, { url: `${r.url}/batch`, events: ['batch.completed'] });
    r.respondWith([500, 503], 200);
    const e = event('batch.completed', { batchId: randomUUID(), totalJobs: 3, completedJobs: 3, failedJobs: 0 });
    const parent = await app.services.temporal.workflow.start('documentEventTestWorkflow', {
      taskQueue,
      workflowId: `test-document-event-${e.id}`,
      args: [{ projectId, event: e, retryDelaysMs: [200, 400, 800] }],
    });
    const ids: string[] = await parent.result();
    expect(ids).toHaveLength(1);
    // The parent has closed after the first attempt (500); the child (ParentClosePolicy ABANDON) is still in its schedule.
    const child = app.services.temporal.workflow.getHandle(workflowIds.webhookDelivery(ids[0]));
    expect((await child.describe()).status.name).toBe('RUNNING');
    expect(await child.result()).toBe('completed');
    expect((await deliveryRow(ids[0])).attempts.map((a: any) => [a.number, a.statusCode])).toEqual([[1, 500], [2, 503], [3, 200]]);
    expect(r.requests.every((q) => q.headers['user-agent'] === 'Formwork-Webhooks/1.0')).toBe(true);
  });

  it('waiting (Flow): returns each final status; Flow deliveries carry the run id, the channel secret and headers', async () => {
    const { projectId } = await newProject();
    const [ok, refusing] = receivers;
    refusing.respondWith([400]);
    const runId = randomUUID();
    const e = { id: runId, type: 'flow.run.completed', timestamp: new Date().toISOString(), data: {} };
    const body = { event: 'flow.run.completed', run: { id: runId, shortId: 'R-1', status: 'completed' }, gate: { id: 'g', name: 'Gate', slug: 'gate' }, timestamp: e.timestamp };
    const targets = [
      { url: `${ok.url}/flow`, secret: 'chan-secret-1', headers: { 'X-Tenant': 'acme', 'X-Service-Signature': 'forged' } },
      { url: `${refusing.url}/flow`, secret: 'chan-secret-2' },
    ];
    const parent = await app.services.temporal.workflow.start('flowEventTestWorkflow', {
      taskQueue,
      workflowId: `test-flow-event-${runId}`,
      args: [{ projectId, runId, event: e, body, targets, retryDelaysMs: [200, 400, 800] }],
    });
    const { ids, statuses } = await parent.result();
    expect(statuses).toEqual(['completed', 'failed']);

    const [req] = ok.requests;
    expect(req.headers['user-agent']).toBe('Formwork-Flow/1.0');
    expect(req.headers['x-service-event-id']).toBe(runId);
    expect(req.headers['x-service-event-type']).toBe('flow.run.completed');
    expect(req.headers['x-tenant']).toBe('acme');
    expect(req.rawBody).toBe(JSON.stringify(body));
    const ts = req.headers['x-service-timestamp'];
    expect(req.headers['x-service-signature']).toBe(`v1=${createHmac('sha256', 'chan-secret-1').update(`${ts}.${req.rawBody}`).digest('hex')}`);
    expect(refusing.requests).toHaveLength(1);

    // One row per channel, in the channels' order (ids are returned in target order).
    const rows = await app.services.db.query(`SELECT id, source, status FROM webhook_deliveries WHERE run_id = $1`, [runId]);
    const byId = new Map(rows.map((x: any) => [x.id, [x.source, x.status]]));
    expect(ids.map((id: string) => byId.get(id))).toEqual([['flow', 'completed'], ['flow', 'failed']]);
    expect(rows).toHaveLength(2);
    // What GET /api/flow/runs/:id/deliveries will show: contract §5 records with runId, never a secret.
    const records = (await listRunDeliveries({ db: app.services.db }, projectId, runId)).map(presentDelivery);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ runId, status: expect.stringMatching(/completed|failed/), attempts: [expect.objectContaining({ number: 1 })], nextAttemptAt: null });
    expect(JSON.stringify(records)).not.toContain('chan-secret');
    expect(await listRunDeliveries({ db: app.services.db }, randomUUID(), runId)).toEqual([]);
  });

  it('a waiting parent that is cancelled cancels its deliveries, which end failed (retryable by hand)', async () => {
    const { projectId } = await newProject();
    const [r] = receivers;
    r.respondWith([], 500);
    const runId = randomUUID();
    const e = { id: runId, type: 'flow.run.completed', timestamp: new Date().toISOString(), data: {} };
    const parent = await app.services.temporal.workflow.start('flowEventTestWorkflow', {
      taskQueue,
      workflowId: `test-flow-cancel-${runId}`,
      // A long wait after the first failure, so the cancellation lands during the timer.
      args: [{ projectId, runId, event: e, body: { event: e.type }, targets: [{ url: `${r.url}/cancel`, secret: 's' }], retryDelaysMs: [60_000] }],
    });
    await r.waitForRequests(1);
    const [{ id }] = await app.services.db.query(`SELECT id FROM webhook_deliveries WHERE run_id = $1`, [runId]);
    await waitFor(async () => (await deliveryRow(id)).status === 'delivering', { what: 'delivery waiting for its retry' });
    await parent.cancel();
    await expect(parent.result()).rejects.toThrow();
    const row = await waitFor(async () => {
      const x = await deliveryRow(id);
      return x.status === 'failed' ? x : undefined;
    }, { what: 'delivery abandoned' });
    expect(row.attempts).toHaveLength(1);
    expect((await app.services.db.query(`SELECT next_attempt_at FROM webhook_deliveries WHERE id = $1`, [id]))[0].next_attempt_at).toBeNull();
  });
});
