import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { workflowIds } from '../../../domain/temporal-names';
import { startApiProcess, type ApiProcess } from '../../support/api-process';
import type { TestApp } from '../../support/app';
import { approvalMail, approverEmail, magicToken, manualGate, runOf, submit, waitForRunStatus } from '../../support/approvals';
import { setupDocumentProject, type DocumentProject } from '../../support/documents';
import { flowWorkspace } from '../../support/flow';
import { spawnMainWorker, type MainWorkerProcess } from '../../support/main-worker';
import { spawnRenderWorker, type RenderWorkerProcess } from '../../support/render-worker';
import { startSmtpServer, type SmtpTestServer } from '../../support/smtp-server';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver';

const BATCH_SIZE = 1000;

/** Every file below `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** Posts per event id (X-Service-Event-Id), and how many of them repeat an event already received. */
function postsByEvent(requests: ReceivedRequest[]): { byId: Map<string, ReceivedRequest[]>; duplicates: number } {
  const byId = new Map<string, ReceivedRequest[]>();
  for (const r of requests) byId.set(r.headers['x-service-event-id'], [...(byId.get(r.headers['x-service-event-id']) ?? []), r]);
  return { byId, duplicates: requests.length - byId.size };
}

/**
 * Kill tests (issue 16): the API, the main worker and the render worker each run as their own
 * process (`node dist/api/main.js`, `dist/worker/main.js`, `dist/worker/render-main.js`), and the
 * workers are SIGKILLed in the middle of the work: nothing they did is lost or done twice where the
 * service promises exactly once (job rows, artefacts, `document.generated` events, quota), and the
 * figures of what the promise is only at-least-once for (webhook posts) are printed.
 */
describe('kill tests: worker processes SIGKILLed mid-work', () => {
  let api: ApiProcess;
  let app: TestApp;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let renderWorker: RenderWorkerProcess;
  let mainWorker: MainWorkerProcess;
  let temporal: Connection;
  const workers: Array<RenderWorkerProcess | MainWorkerProcess> = [];

  const startRender = () => {
    renderWorker = spawnRenderWorker(app);
    workers.push(renderWorker);
    return renderWorker;
  };
  const startMain = () => {
    mainWorker = spawnMainWorker(app);
    workers.push(mainWorker);
    return mainWorker;
  };
  const kill = async (w: RenderWorkerProcess | MainWorkerProcess) => {
    w.child.kill('SIGKILL');
    expect((await w.exited).signal).toBe('SIGKILL');
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    receiver = await startWebhookReceiver();
    api = await startApiProcess({
      SMTP_URL: smtp.url,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      // The whole batch fits the month's free documents, so the quota counter is what is charged.
      FREE_DOCUMENTS_PER_MONTH: String(BATCH_SIZE * 2),
      WEBHOOK_RETRY_DELAYS: '1s,2s,4s',
    });
    app = { ...api.app, smtp };
    temporal = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    await Promise.all([startMain().ready, startRender().ready]);
  });

  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await temporal?.close();
    await api?.close();
    await receiver?.stop();
    await smtp?.stop();
  });

  it(`a ${BATCH_SIZE}-document batch survives SIGKILL of the render worker at 1/3 and of the main worker at 2/3: every document once, charged once, announced once`, async () => {
    const docs: DocumentProject = await setupDocumentProject(app);
    const hook = await app.request('POST', '/api/webhooks', {
      token: docs.user.accessToken,
      body: { url: `${receiver.url}/documents`, events: ['document.generated', 'document.failed', 'batch.completed'] },
    });
    expect(hook.status).toBe(201);

    const documents = Array.from({ length: BATCH_SIZE }, (_, i) => ({ variables: { customer: `Customer ${i}`, items: [{ label: 'Line', amount: i }] } }));
    const accepted = await app.request('POST', '/api/documents/generate/batch', { token: docs.apiKey, body: { templateId: docs.templateId, format: 'pdf', documents } });
    expect(accepted.status).toBe(201);
    const batchId: string = accepted.body.batchId;
    const began = Date.now();

    const completedCount = async () => Number((await app.services.db.query(`SELECT count(*) AS n FROM document_jobs WHERE batch_id = $1 AND status = 'completed'`, [batchId]))[0].n);
    /**
     * Seconds from `restartedAt` to the restarted role's first finished piece of the batch: for the
     * render worker a document it claimed and completed, for the main worker a document.generated
     * event it recorded (renders already queued may complete without a main worker).
     */
    const recoverySeconds = async (role: 'render' | 'main', restartedAt: Date) => {
      const sql =
        role === 'render'
          ? `SELECT min(completed_at) AS at FROM document_jobs WHERE batch_id = $1 AND status = 'completed' AND started_at > $2`
          : `SELECT min(d.created_at) AS at FROM webhook_deliveries d JOIN document_jobs j ON d.event_id = 'evt_' || j.id || '_document_generated'
              WHERE j.batch_id = $1 AND d.created_at > $2`;
      const at = await waitFor(async () => (await app.services.db.query(sql, [batchId, restartedAt]))[0].at as Date | null, {
        timeoutMs: 180_000,
        intervalMs: 200,
        what: `the restarted ${role} worker's first finished document`,
      });
      return (at.getTime() - restartedAt.getTime()) / 1000;
    };
    const killAt = async (share: number, role: 'render' | 'main') => {
      await waitFor(async () => (await completedCount()) >= BATCH_SIZE * share, { timeoutMs: 600_000, intervalMs: 200, what: `${Math.round(share * 100)} % of the batch` });
      const atKill = await completedCount();
      await kill(role === 'render' ? renderWorker : mainWorker);
      const restartedAt = new Date();
      await (role === 'render' ? startRender() : startMain()).ready;
      const readyAfter = (Date.now() - restartedAt.getTime()) / 1000;
      return { role, atKill, readyAfter, recovery: await recoverySeconds(role, restartedAt) };
    };

    const renderKill = await killAt(1 / 3, 'render');
    const mainKill = await killAt(2 / 3, 'main');

    const batch = await waitFor(
      async () => {
        const res = await app.request('GET', `/api/documents/batches/${batchId}`, { token: docs.apiKey });
        return res.body.status === 'completed' ? res.body : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 500, what: 'the batch to complete' },
    );
    const batchSeconds = (Date.now() - began) / 1000;
    expect(batch).toMatchObject({ totalJobs: BATCH_SIZE, completedJobs: BATCH_SIZE, failedJobs: 0 });

    // Rows: every job completed once, each with its own artefact key.
    const jobs: Array<{ id: string; status: string; artefact_key: string; attempts: number }> = await app.services.db.query(
      `SELECT id, status, artefact_key, attempts FROM document_jobs WHERE batch_id = $1`,
      [batchId],
    );
    expect(jobs).toHaveLength(BATCH_SIZE);
    expect(jobs.filter((j) => j.status !== 'completed')).toEqual([]);
    expect(new Set(jobs.map((j) => j.artefact_key)).size).toBe(BATCH_SIZE);
    const reclaimed = jobs.filter((j) => j.attempts > 1).length;

    // Files: one per job in storage, nothing else under the project's documents.
    const stored = (await filesUnder(api.app.dataDir)).filter((f) => f.includes(`documents/${docs.projectId}/`) && f.endsWith('.pdf'));
    const storedJobIds = stored.map((f) => f.slice(f.lastIndexOf('/') + 1, -'.pdf'.length));
    expect(storedJobIds).toHaveLength(BATCH_SIZE);
    expect(new Set(storedJobIds)).toEqual(new Set(jobs.map((j) => j.id)));

    // Quota: the batch was charged once, at acceptance, and nothing was refunded or charged again.
    const [quota] = await app.services.db.query(`SELECT sum(free_used)::int AS used FROM document_quota_usage WHERE project_id = $1`, [docs.projectId]);
    expect(quota.used).toBe(BATCH_SIZE);
    const [ledger] = await app.services.db.query(`SELECT count(*)::int AS n FROM credit_ledger WHERE project_id = $1`, [docs.projectId]);
    expect(ledger.n).toBe(0);

    // Events: one document.generated event (and delivery record) per job, one batch.completed.
    const deliveries: Array<{ event_id: string; event_type: string; attempts: unknown[] }> = await app.services.db.query(
      `SELECT event_id, event_type, attempts FROM webhook_deliveries WHERE project_id = $1`,
      [docs.projectId],
    );
    const generated = deliveries.filter((d) => d.event_type === 'document.generated');
    expect(generated).toHaveLength(BATCH_SIZE);
    expect(new Set(generated.map((d) => d.event_id))).toEqual(new Set(jobs.map((j) => `evt_${j.id}_document_generated`)));
    expect(deliveries.filter((d) => d.event_type === 'batch.completed')).toHaveLength(1);
    expect(deliveries.filter((d) => d.event_type === 'document.failed')).toEqual([]);

    // Posts: every event reached the receiver. Delivery is at least once (docs/webhooks.md: a post in
    // flight when its worker died is sent again), so repeats are counted, not refused; what the docs
    // promise is that a repeat carries the same event id and the same body, for the receiver to skip.
    const posts = await waitFor(
      () => {
        const mine = receiver.requests.filter((r) => r.path === '/documents');
        const { byId } = postsByEvent(mine);
        return byId.size === BATCH_SIZE + 1 ? mine : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'a post of every event' },
    );
    const { byId, duplicates } = postsByEvent(posts);
    for (const [id, same] of byId) {
      expect(same.map((p) => p.rawBody)).toEqual(same.map(() => same[0].rawBody));
      expect(same[0].json.id).toBe(id);
    }
    const batchPosts = posts.filter((p) => p.json.type === 'batch.completed');
    const recordedAttempts = generated.reduce((n, d) => n + d.attempts.length, 0);

    console.log(
      [
        `kill test, batch of ${BATCH_SIZE}: completed in ${batchSeconds.toFixed(1)} s`,
        `  documents: ${jobs.length} rows completed, ${new Set(stored).size} files, ${generated.length} document.generated events (distinct ids ${new Set(generated.map((d) => d.event_id)).size}), quota charged ${quota.used}`,
        ...[renderKill, mainKill].map(
          (k) =>
            `  SIGKILL ${k.role} worker at ${k.atKill} completed: restarted role ready after ${k.readyAfter.toFixed(1)} s, its first finished document ${k.recovery.toFixed(1)} s after the restart`,
        ),
        `  renders claimed again after a kill: ${reclaimed} (still one file each)`,
        `  duplicates per side effect: job rows 0, files ${stored.length - new Set(stored).size}, document.generated events 0, quota ${quota.used - BATCH_SIZE}, batch.completed events ${deliveries.filter((d) => d.event_type === 'batch.completed').length - 1}`,
        `  webhook posts: ${posts.length} for ${byId.size} event ids, duplicates (same event id posted again) ${duplicates}; batch.completed posted ${batchPosts.length}×; attempts recorded ${recordedAttempts}`,
      ].join('\n'),
    );
  }, 900_000);

  it('SIGKILL of the main worker during an approval wait: after the restart the decision completes the run, delivered once', async () => {
    const ws = await flowWorkspace(app);
    const email = approverEmail();
    const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 120, onTimeout: 'reject' }, {
      deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/approved`, secret: 'whsec_kill_test' }],
    });
    const runId = await submit(app, ws, gate);
    await waitForRunStatus(app, ws, runId, ['review_required'], 60_000);
    const token = magicToken(await approvalMail(app, email));
    // The e-mail goes out inside openApproval: kill only once that activity has completed and the
    // run waits for the decision (its timer started), so the kill lands in the wait itself. (A kill
    // inside openApproval also completes, once its 1-minute start-to-close timeout retries it.)
    const history = new Client({ connection: temporal }).workflow.getHandle(workflowIds.flowRun(runId));
    await waitFor(
      async () => {
        const events = (await history.fetchHistory()).events ?? [];
        const opened = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'openApproval');
        const done = events.findIndex((e) => opened && String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(opened.eventId));
        return done >= 0 && events.slice(done).some((e) => e.timerStartedEventAttributes);
      },
      { timeoutMs: 30_000, what: 'the run to wait for the decision' },
    );

    await kill(mainWorker);
    const restartedAt = Date.now();
    const next = startMain();

    // The approver decides through the magic link on the API process while the new worker starts.
    const auth = await app.request('POST', '/api/flow/review/authenticate', { body: { token, email } });
    expect(auth.status).toBe(200);
    const reviewToken = auth.body.reviewToken;
    const [approval] = (await app.request('GET', '/api/flow/review/inbox', { token: reviewToken })).body.data;
    expect(approval).toMatchObject({ runId, status: 'pending' });
    const decided = await app.request('POST', `/api/flow/review/approvals/${approval.id}/approve`, { token: reviewToken, body: { comment: 'after the crash' } });
    expect([decided.status, decided.body]).toEqual([200, { success: true, decision: 'approved' }]);
    const decidedAt = Date.now();

    await next.ready;
    const readyAfter = (Date.now() - restartedAt) / 1000;
    const run = await waitForRunStatus(app, ws, runId, ['completed', 'rejected', 'expired', 'failed'], 180_000);
    const completedAfter = (Date.now() - decidedAt) / 1000;
    expect(run).toMatchObject({ status: 'completed', deliveryStatus: 'completed' });

    const posts = receiver.requests.filter((r) => r.path === '/approved');
    const rows: Array<{ attempts: unknown[]; status: string }> = await app.services.db.query(`SELECT attempts, status FROM webhook_deliveries WHERE run_id = $1`, [runId]);
    const mails = smtp.messages.filter((m) => m.to.includes(email) && /approval needed/i.test(m.subject));
    console.log(
      [
        'kill test, approval wait:',
        `  SIGKILL main worker with the run in review; restarted role ready after ${readyAfter.toFixed(1)} s; run completed ${completedAfter.toFixed(1)} s after the decision`,
        `  duplicates per side effect: approval e-mails ${mails.length - 1}, delivery records ${rows.length - 1}, webhook posts ${posts.length - 1} (attempts recorded ${rows.reduce((n, r) => n + r.attempts.length, 0)})`,
      ].join('\n'),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('completed');
    expect(posts).toHaveLength(1);
    expect(posts[0].headers['x-service-event-id']).toBe(runId);
    expect(mails).toHaveLength(1);
    expect((await runOf(app, ws, runId)).approvalStatus).toBe('approved');
  }, 300_000);
});
