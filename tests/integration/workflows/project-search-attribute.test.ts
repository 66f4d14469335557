import { randomBytes } from 'node:crypto';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { scheduleIds } from '../../../domain/temporal-names';
import { startTestApp, type TestApp } from '../../support/app';
import { manualGate, submit, waitForRunStatus } from '../../support/approvals';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { FLOW_KEY_PERMISSIONS, type FlowWorkspace } from '../../support/flow';
import { createKey } from '../../support/api-keys';
import { createTestDatasource } from '../../support/reporting';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Every workflow a project causes carries FormworkProjectId (workflows/shared/search-attributes.ts),
 * so `FormworkProjectId = '<id>'` in the Web UI or `temporal workflow list` finds all of a project's
 * work: started by the API, as children of its workflows (approval digests, webhook and report
 * deliveries, scheduled runs' report runs), by its report schedules, and after continue-as-new.
 * Account e-mails and deletions belong to a user, maintenance to nobody: they carry no project.
 */
describe('the project search attribute on every workflow a project causes', () => {
  let app: TestApp;
  let p: DocumentProject;
  let receiver: WebhookReceiver;
  const table = `sa_rows_${randomBytes(4).toString('hex')}`;
  let scheduleId: string | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      env: {
        OUTBOUND_ALLOWLIST: '127.0.0.1',
        REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES: '0',
        // An approval window of 1.5 s: the run approves itself at its timeout.
        FLOW_MINUTE_MS: '1500',
        // A batch of three runs as three chunks (two continue-as-new).
        BATCH_CHUNK_SIZE: '1',
        // A retried webhook delivery waits 200 ms.
        WEBHOOK_RETRY_DELAYS: '200,400,800',
      },
    });
    p = await setupDocumentProject(app);
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'one')`);
  });
  afterAll(async () => {
    if (scheduleId) await app.services.temporal.schedule.getHandle(scheduleIds.reportSchedule(scheduleId)).delete().catch(() => undefined);
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
    await receiver?.stop();
  });

  const list = async (query: string): Promise<WorkflowExecutionInfo[]> => {
    const found: WorkflowExecutionInfo[] = [];
    for await (const wf of app.services.temporal.workflow.list({ query })) found.push(wf);
    return found;
  };
  const attr = (wf: WorkflowExecutionInfo, name: string) => (wf.searchAttributes?.[name] as unknown[] | undefined)?.[0] as string | undefined;
  const key = (wf: WorkflowExecutionInfo) => `${wf.workflowId}/${wf.runId}`;
  /** A user's account e-mails and deletion, and maintenance runs (the retired type's too): no project. Anything else (even without a kind) must have one. */
  const projectLess = (wf: WorkflowExecutionInfo) =>
    Boolean(attr(wf, 'FormworkKind')?.startsWith('account-')) || wf.type === 'maintenanceWorkflow' || wf.type === 'documentMaintenanceWorkflow';

  it('a job, a batch with continue-as-new, a Flow run with approval digest and webhook delivery, and a scheduled report run are all found by FormworkProjectId', async () => {
    const token = p.user.accessToken;
    // Document events go to a receiver whose first answer is a 500: that delivery's retry runs as a child of the document's workflow.
    receiver.respondOn('/docs', [500], 200);
    const hook = await app.request('POST', '/api/webhooks', { token, body: { url: `${receiver.url}/docs`, events: ['document.generated'] } });
    expect(hook.status).toBe(201);
    // A document job and a batch (three chunks).
    const job = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'Ada' } } });
    expect(job.status).toBe(201);
    const batch = await app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'excel', documents: ['A', 'B', 'C'].map((customer) => ({ variables: { customer } })) },
    });
    expect(batch.status).toBe(201);

    // A Flow run: manual approval with a digest, approved at its timeout, delivered to a webhook.
    // Gate configuration and run reads need their flags, which a key gets only when asked for (issue 29).
    const flowKey = await createKey(app, p.user.accessToken, { name: 'flow', permissions: FLOW_KEY_PERMISSIONS });
    const ws: FlowWorkspace = { user: p.user, key: flowKey.plainKey, projectId: p.projectId };
    const gate = await manualGate(
      app,
      ws,
      { approvers: [{ email: `approver-${randomBytes(3).toString('hex')}@example.com` }], timeoutMinutes: 1, onTimeout: 'approve' },
      { notificationMode: 'digest', notificationDigestMinutes: 60, deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/flow`, secret: 'whsec_project_attr' }] },
    );
    const runId = await submit(app, ws, gate);

    // A report schedule, triggered: the schedule's run and its report run (a child).
    const datasource = await createTestDatasource(app, token, `Rows ${table}`);
    const q = await app.request('POST', '/api/reporting/queries', { token, body: { name: `Q ${table}`, datasourceId: datasource.id, text: `SELECT id, label FROM ${table}` } });
    expect(q.status).toBe(201);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, { token, body: {} })).status).toBe(201);
    const report = await app.request('POST', '/api/reporting/reports', {
      token,
      body: { name: `R ${table}`, templateId: null, datasets: [{ name: 'rows', queryId: q.body.id }], parameters: [], outputs: [{ format: 'csv' }] },
    });
    expect(report.status).toBe(201);
    expect((await app.request('POST', `/api/reporting/reports/${report.body.id}/publish`, { token, body: {} })).status).toBe(201);
    const schedule = await app.request('POST', '/api/reporting/schedules', { token, body: { name: 'Yearly', target: { type: 'report', id: report.body.id }, cron: '0 0 1 1 *', timezone: 'UTC' } });
    expect(schedule.status).toBe(201);
    scheduleId = schedule.body.id;
    const triggered = await app.request('POST', `/api/reporting/schedules/${scheduleId}/trigger`, { token });
    // 201 naming the run it started, or 202 when its record was not there within the trigger's wait.
    expect([201, 202]).toContain(triggered.status);

    // Everything ends.
    expect((await waitForJob(app, p.apiKey, job.body.jobId)).status).toBe('completed');
    await waitFor(async () => (await app.request('GET', `/api/documents/batches/${batch.body.batchId}`, { token: p.apiKey })).body.status === 'completed', {
      timeoutMs: 60_000,
      what: 'the batch',
    });
    expect((await waitForRunStatus(app, ws, runId, ['completed', 'failed'], 30_000)).status).toBe('completed');
    await waitFor(() => receiver.requests.some((r) => r.path === '/flow'), { what: 'the Flow delivery' });
    // Four document events, one of them answered 500 and then delivered by its retry.
    await waitFor(() => receiver.requests.filter((r) => r.path === '/docs').length >= 5, { timeoutMs: 60_000, what: 'the document events and the retry' });
    await waitFor(
      async () => ['completed', 'failed'].includes((await app.request('GET', `/api/reporting/runs/${triggered.body.runId}`, { token })).body.status),
      { timeoutMs: 60_000, what: 'the scheduled report run' },
    );

    // Everything on this app's task queue (its prefix is its own) that belongs to a project must be
    // listed by the project's id; visibility catches up within moments.
    const queue = app.services.taskQueues.main;
    const expectedKinds = ['document', 'batch', 'flow-run', 'flow-review-digest', 'webhook-delivery', 'report-schedule', 'report-run'];
    const { mine, byProject } = await waitFor(
      async () => {
        const all = await list(`TaskQueue = '${queue}'`);
        const byProject = await list(`FormworkProjectId = '${p.projectId}'`);
        const mine = all.filter((wf) => !projectLess(wf));
        const kinds = new Set(mine.map((wf) => attr(wf, 'FormworkKind')));
        const listed = new Set(byProject.map(key));
        return expectedKinds.every((k) => kinds.has(k)) && mine.every((wf) => listed.has(key(wf))) ? { mine, byProject } : undefined;
      },
      { timeoutMs: 30_000, what: 'every workflow of the project to be listed by FormworkProjectId' },
    );
    expect(mine.filter((wf) => attr(wf, 'FormworkProjectId') !== p.projectId)).toEqual([]);
    // The batch's chunks are runs of one workflow id (continue-as-new), each with the project.
    expect(mine.filter((wf) => wf.workflowId === batch.body.batchId).length).toBeGreaterThan(1);
    // The retried document delivery is one of them.
    const [retried] = await app.services.db.query(`SELECT d.id FROM webhook_deliveries d WHERE jsonb_array_length(d.attempts) > 1 AND d.project_id = $1 AND d.url LIKE '%/docs'`, [p.projectId]);
    expect(retried).toBeDefined();
    expect(mine.some((wf) => wf.workflowId.endsWith(retried.id))).toBe(true);
    // Nothing else is listed under the project: the project-less workflows are the user's e-mails.
    const listedElsewhere = byProject.filter((wf) => !mine.some((m) => key(m) === key(wf)));
    expect(listedElsewhere).toEqual([]);
  });
});
