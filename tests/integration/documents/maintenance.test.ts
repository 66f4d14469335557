import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { signUp } from '../../support/factories';
import { waitFor } from '../../support/wait';
import { SA_KIND } from '../../../workflows/shared/search-attributes';
import { scheduleIds, workflowIds } from '../../../domain/temporal-names';
import { ensureMaintenanceSchedule } from '../../../worker/schedules';
import { runMaintenance as runAppMaintenance } from '../../support/maintenance';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

describe('maintenance: retention, stranded work, failure events', () => {
  let app: TestApp;
  let p: DocumentProject;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ schedules: true, env: { LOOP_MAX_ITERATIONS: '2', OUTBOUND_ALLOWLIST: '127.0.0.1', DOCUMENT_RETENTION_SECONDS: '3600' } });
    // A letter that lists its items twice: two items pass the checks at acceptance and fail at render,
    // where both tables share the loop budget of 2 (docs/documents.md "Checks at acceptance").
    const table = (id: string) => ({ id, type: 'table' as const, props: { dataSource: 'items', columns: [{ header: 'Item', field: 'label' }] } });
    p = await setupDocumentProject(app, { schema: { pageSize: 'A4', sections: [{ id: 'main', components: [table('lines'), table('again')] }] } });
  });
  afterAll(async () => {
    await app.services.temporal.schedule.getHandle(scheduleIds.maintenance(app.services.config.temporal.taskQueuePrefix)).delete();
    await app.close();
    await receiver.stop();
  });

  const runMaintenance = (strandedAfterSeconds = 60) => runAppMaintenance(app, { retentionSeconds: 3600, strandedAfterSeconds, deletionGraceSeconds: 302 });
  const scheduleHandle = () => app.services.temporal.schedule.getHandle(scheduleIds.maintenance(app.services.config.temporal.taskQueuePrefix));
  const generate = async (variables: Record<string, unknown>) =>
    (await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables } })).body.jobId as string;

  /** The schedule's action: the workflow it starts, its id and input, and its FormworkKind. */
  const scheduledAction = async () => {
    const { action } = await scheduleHandle().describe();
    if (action.type !== 'startWorkflow') throw new Error(`unexpected schedule action ${action.type}`);
    const attributes = action.typedSearchAttributes;
    return { workflowType: action.workflowType, workflowId: action.workflowId, args: action.args, kind: attributes && !Array.isArray(attributes) ? attributes.get(SA_KIND) : attributes };
  };

  it('is scheduled in Temporal by the worker', async () => {
    const { config } = app.services;
    expect(await scheduledAction()).toEqual({
      workflowType: 'maintenanceWorkflow',
      workflowId: workflowIds.maintenanceRun(config.temporal.taskQueuePrefix),
      args: [
        {
          retentionSeconds: 3600,
          strandedAfterSeconds: 60,
          deletionGraceSeconds: config.users.deletionGraceSeconds,
          reportArtefactRetentionDays: config.reporting.artefactRetentionDays,
          reportRunRetentionDays: config.reporting.runRetentionDays,
          reportAgentQueueTimeoutSeconds: config.reporting.agentQueueTimeoutSeconds,
        },
      ],
      // Project-less, so operators find its runs by kind in the Web UI.
      kind: 'maintenance',
    });
  });

  it('a schedule an older release created (starting documentMaintenanceWorkflow) starts maintenanceWorkflow once a worker starts', async () => {
    const now = await scheduledAction();
    await scheduleHandle().update((prev) => ({ ...prev, action: { ...prev.action, workflowType: 'documentMaintenanceWorkflow' } }));
    expect((await scheduledAction()).workflowType).toBe('documentMaintenanceWorkflow');
    await ensureMaintenanceSchedule(app.services);
    expect(await scheduledAction()).toEqual(now);
  });

  it('the retired documentMaintenanceWorkflow still completes a run started before the change, as it did', async () => {
    const done = await generate({ customer: 'retired sweep' });
    await waitForJob(app, p.apiKey, done);
    await app.services.db.query(`UPDATE document_jobs SET completed_at = now() - interval '2 hours' WHERE id = $1`, [done]);
    const [{ artefact_key: key }] = await app.services.db.query(`SELECT artefact_key FROM document_jobs WHERE id = $1`, [done]);
    const stranded = randomUUID();
    await app.services.db.query(
      `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, created_at)
       VALUES ($1, $2, $3, 1, 'excel', 'queued', '{"customer":"stranded for the retired sweep"}', 'free', now() - interval '5 minutes')`,
      [stranded, p.projectId, p.templateId],
    );
    // Its input as the old schedule gave it; each of its steps (all four patches) runs on today's activities.
    const result = await app.services.temporal.workflow.execute('documentMaintenanceWorkflow', {
      taskQueue: app.services.taskQueues.main,
      workflowId: `maintenance-test-${randomUUID()}`,
      args: [{ retentionSeconds: 3600, strandedAfterSeconds: 60, deletionGraceSeconds: 302, reportArtefactRetentionDays: 30, reportRunRetentionDays: 90, reportAgentQueueTimeoutSeconds: 600 }],
    });
    expect(result).toEqual({ expired: expect.any(Number), restarted: expect.any(Number) });
    expect(result.expired).toBeGreaterThanOrEqual(1);
    expect(result.restarted).toBeGreaterThanOrEqual(1);
    expect(await app.services.storage.exists(key)).toBe(false);
    expect((await waitForJob(app, p.apiKey, stranded)).status).toBe('completed');
  });

  it('removes artefacts past the retention period; their jobs say so instead of offering a dead link', async () => {
    const fresh = await generate({ customer: 'fresh' });
    const old = await generate({ customer: 'old' });
    await Promise.all([fresh, old].map((id) => waitForJob(app, p.apiKey, id)));
    await app.services.db.query(`UPDATE document_jobs SET completed_at = now() - interval '2 hours' WHERE id = $1`, [old]);
    const [{ artefact_key: key }] = await app.services.db.query(`SELECT artefact_key FROM document_jobs WHERE id = $1`, [old]);

    const result = await runMaintenance();
    expect(result.expired).toBeGreaterThanOrEqual(1);
    expect(await app.services.storage.exists(key)).toBe(false);
    const expired = await app.request('GET', `/api/documents/jobs/${old}`, { token: p.apiKey });
    expect(expired.body).toMatchObject({ status: 'completed', artefactExpired: true });
    expect(expired.body.downloadUrl).toBeUndefined();
    const kept = await app.request('GET', `/api/documents/jobs/${fresh}`, { token: p.apiKey });
    expect(kept.body.downloadUrl).toEqual(expect.any(String));
  });

  it('starts accepted work whose workflow never started (the API died in between)', async () => {
    const jobId = randomUUID();
    await app.services.db.query(
      `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, created_at)
       VALUES ($1, $2, $3, 1, 'excel', 'queued', '{"customer":"stranded"}', 'free', now() - interval '5 minutes')`,
      [jobId, p.projectId, p.templateId],
    );
    const result = await runMaintenance(60);
    expect(result.restarted).toBeGreaterThanOrEqual(1);
    expect((await waitForJob(app, p.apiKey, jobId)).status).toBe('completed');
  });

  it('starts an account deletion whose grace-period workflow never started, keeping its purge date', async () => {
    const user = await signUp(app);
    // As if the API had marked the account and died before starting the workflow, 5 minutes ago;
    // with a 302-second grace period about 2 seconds are left.
    await app.services.db.query(`UPDATE users SET deletion_status = 'pending', deletion_requested_at = now() - interval '300 seconds' WHERE id = $1`, [user.id]);
    const result = await runMaintenance(60);
    expect(result.restarted).toBeGreaterThanOrEqual(1);
    await waitFor(async () => (await app.services.db.query(`SELECT 1 FROM users WHERE id = $1`, [user.id])).length === 0, { what: 'the purge' });
  });

  it('sends the verification e-mail of a sign-up whose e-mail workflow never started', async () => {
    const id = randomUUID();
    const email = `stranded-${id.slice(0, 8)}@example.com`;
    await app.services.db.query(
      `INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ($1, $2, 'Stranded', 'x', now() - interval '5 minutes', now())`,
      [id, email],
    );
    await runMaintenance(60);
    const mail = await app.smtp!.waitForMessage((m) => m.to.includes(email));
    expect(mail.subject).toBe('Confirm your e-mail address');
    // A second sweep finds the e-mail sent (its token exists) and sends nothing more.
    await runMaintenance(60);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM email_tokens WHERE user_id = $1`, [id]);
    expect(n).toBe(1);
  });

  it('announces a failed document with document.failed and its error message', async () => {
    const sub = await app.request('POST', '/api/webhooks', { token: p.user.accessToken, body: { url: receiver.url, events: ['document.failed'] } });
    expect(sub.status).toBe(201);
    const jobId = await generate({ customer: 'too many', items: [1, 2].map((i) => ({ label: `r${i}`, amount: i })) });
    const event = await waitFor(() => receiver.requests.find((r) => r.json?.data?.jobId === jobId));
    expect(event.json).toMatchObject({ id: expect.any(String), type: 'document.failed', timestamp: expect.any(String), data: { jobId, status: 'failed', errorCode: 'ERR_LIMIT_007', errorMessage: expect.any(String), metadata: {} } });
    expect(event.headers['x-service-event-type']).toBe('document.failed');
  });
});
