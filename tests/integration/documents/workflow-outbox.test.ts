import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { prepareEventDeliveries } from '../../../db/webhooks/deliveries';
import { workflowIds } from '../../../domain/temporal-names';
import { startTestApp, type TestApp } from '../../support/app';
import { manualGate, submit, teamFlowWorkspace, waitForRunStatus } from '../../support/approvals';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { buildSignup, signUp } from '../../support/factories';
import { createTeam, invite } from '../../support/teams';
import { runMaintenance as runAppMaintenance } from '../../support/maintenance';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * The transactional outbox (platform/workflow-outbox.ts, docs/architecture.md "Starting workflows"):
 * jobs, batches, account deletions and e-mails and invitations are recorded with their
 * `workflow_pending` mark in the transaction that accepts them, the API starts their workflow after
 * answering, and what it could not start a sweep starts. Plus the maintenance sweep's handling of
 * open jobs whose workflow is gone, and activities that find their record purged.
 */
describe('workflow outbox: accepted work starts off the request path and is never lost', () => {
  let app: TestApp;
  let p: DocumentProject;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ env: { FLOW_MINUTE_MS: '1000', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_RETRY_DELAYS: '100' } });
    p = await setupDocumentProject(app);
  });
  afterAll(async () => {
    await app.close();
    await receiver.stop();
  });

  const workflows = () => app.services.temporal.workflow;
  const row = async (sql: string, id: string) => (await app.services.db.query(sql, [id]))[0];
  const generate = (variables: Record<string, unknown>, body: Record<string, unknown> = {}) =>
    app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables, ...body } });

  /** Every workflow start waits until `release()` (a Temporal frontend that does not answer). */
  const holdStarts = () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const client = workflows();
    const original = client.start.bind(client);
    const spy = jest.spyOn(client, 'start').mockImplementation(async (...args: Parameters<typeof original>) => {
      await released;
      return original(...args);
    });
    return { spy, release: () => (release(), spy.mockRestore()) };
  };

  /** Every workflow start, signal-with-start included, fails (Temporal unreachable) until `restore()`. */
  const refuseStarts = () => {
    const spy = jest.spyOn(workflows(), 'start').mockRejectedValue(new Error('Temporal unavailable'));
    const withSignal = jest.spyOn(workflows(), 'signalWithStart').mockRejectedValue(new Error('Temporal unavailable'));
    return {
      spy,
      calls: () => spy.mock.calls.length + withSignal.mock.calls.length,
      restore: () => (spy.mockRestore(), withSignal.mockRestore()),
    };
  };

  it('POST /generate answers without waiting for Temporal; the job is workflow_pending until its start, then renders', async () => {
    const held = holdStarts();
    let jobId: string;
    try {
      const asked = Date.now();
      const res = await generate({ customer: 'held' });
      const answeredMs = Date.now() - asked;
      expect(res.status).toBe(201);
      jobId = res.body.jobId;
      // The start was asked for, and is still waiting for Temporal, while the client has its answer.
      await waitFor(() => held.spy.mock.calls.length >= 1, { what: 'the background start' });
      expect(await row(`SELECT status, workflow_pending, workflow_started_at FROM document_jobs WHERE id = $1`, jobId)).toEqual({
        status: 'queued',
        workflow_pending: true,
        workflow_started_at: null,
      });
      console.log(`POST /generate answered in ${answeredMs} ms with Temporal not answering`);
    } finally {
      held.release();
    }
    expect((await waitForJob(app, p.apiKey, jobId)).status).toBe('completed');
    const after = await row(`SELECT workflow_pending, workflow_started_at, attempts FROM document_jobs WHERE id = $1`, jobId);
    expect(after).toMatchObject({ workflow_pending: false, workflow_started_at: expect.any(Date), attempts: 1 });
  });

  it('a batch whose start keeps failing stays workflow_pending; the sweep starts it and each document renders once', async () => {
    const refused = refuseStarts();
    let batchId: string;
    try {
      const res = await app.request('POST', '/api/documents/generate/batch', {
        token: p.apiKey,
        body: { templateId: p.templateId, format: 'excel', documents: [{ variables: { customer: 'b1' } }, { variables: { customer: 'b2' } }] },
      });
      expect(res.status).toBe(201);
      batchId = res.body.batchId;
      // The first start and its three retries (0.25 s, 1 s, 4 s), then it is left to the sweep.
      await waitFor(() => refused.spy.mock.calls.length >= 4, { what: 'the retried start', timeoutMs: 15_000 });
      await app.services.outbox.idle();
      expect(await row(`SELECT status, workflow_pending FROM document_batches WHERE id = $1`, batchId)).toEqual({ status: 'processing', workflow_pending: true });
      // Only marks older than the grace are the sweep's: this one is not yet.
      expect(await app.services.outbox.sweep(60_000)).toBe(0);
    } finally {
      refused.restore();
    }
    expect(await app.services.outbox.sweep(0)).toBeGreaterThanOrEqual(1);
    expect(await row(`SELECT workflow_pending FROM document_batches WHERE id = $1`, batchId)).toEqual({ workflow_pending: false });
    await waitFor(async () => (await row(`SELECT status FROM document_batches WHERE id = $1`, batchId)).status === 'completed', { what: 'the batch', timeoutMs: 60_000 });
    const jobs = await app.services.db.query(`SELECT status, attempts FROM document_jobs WHERE batch_id = $1`, [batchId]);
    expect(jobs).toEqual([
      { status: 'completed', attempts: 1 },
      { status: 'completed', attempts: 1 },
    ]);
  });

  it('account e-mails, an invitation and an account deletion are recorded with the request and sent by the sweep after an outage', async () => {
    const owner = await signUp(app);
    await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [owner.id]);
    const team = await createTeam(app, owner);
    const leaving = buildSignup();

    const refused = refuseStarts();
    let invitationId: string;
    let leaverId: string;
    const invitee = `invitee-${randomUUID().slice(0, 8)}@example.com`;
    try {
      const signedUp = await app.request('POST', '/api/auth/signup', { body: leaving });
      expect(signedUp.status).toBe(201);
      leaverId = signedUp.body.user.id;
      expect((await app.request('POST', '/api/auth/forgot-password', { body: { email: owner.email } })).status).toBe(200);
      invitationId = (await invite(app, owner, team.id, invitee)).id;
      const deleted = await app.request('DELETE', '/api/users/me', { token: signedUp.body.accessToken, body: { password: leaving.password } });
      expect(deleted.status).toBe(200);
      // Three background starts retried three times each; the deletion's start is awaited by its request.
      await waitFor(() => refused.calls() >= 13, { what: 'the starts retried', timeoutMs: 20_000 });
      await app.services.outbox.idle();

      const emails = await app.services.db.query(`SELECT input->>'purpose' AS purpose, workflow_id FROM account_email_starts ORDER BY created_at`);
      expect(emails).toEqual(
        expect.arrayContaining([
          { purpose: 'verify_email', workflow_id: workflowIds.signupEmail(leaverId) },
          { purpose: 'reset_password', workflow_id: expect.stringMatching(/^account-email-/) },
        ]),
      );
      expect(await row(`SELECT workflow_pending FROM invitations WHERE id = $1`, invitationId)).toEqual({ workflow_pending: true });
      expect(await row(`SELECT deletion_status, deletion_workflow_pending FROM users WHERE id = $1`, leaverId)).toEqual({ deletion_status: 'pending', deletion_workflow_pending: true });
    } finally {
      refused.restore();
    }

    expect(await app.services.outbox.sweep(0)).toBeGreaterThanOrEqual(4);
    await app.smtp!.waitForMessage((m) => m.to.includes(leaving.email) && /confirm/i.test(m.subject));
    await app.smtp!.waitForMessage((m) => m.to.includes(owner.email) && /password/i.test(m.subject));
    await app.smtp!.waitForMessage((m) => m.text.includes(`/invitations/${invitationId}?token=`));
    const deletion = await workflows().getHandle(workflowIds.accountDeletion(leaverId)).describe();
    expect(deletion.status.name).toBe('RUNNING');
    expect(await app.services.db.query(`SELECT 1 FROM account_email_starts`)).toEqual([]);
    expect(await row(`SELECT workflow_pending, workflow_started_at IS NOT NULL AS started FROM invitations WHERE id = $1`, invitationId)).toEqual({ workflow_pending: false, started: true });
    expect(await row(`SELECT deletion_workflow_pending FROM users WHERE id = $1`, leaverId)).toEqual({ deletion_workflow_pending: false });
  });

  describe('maintenance: open jobs whose workflow is not running', () => {
    const runMaintenance = () => runAppMaintenance(app, { retentionSeconds: 3600, strandedAfterSeconds: 60, deletionGraceSeconds: 3600 });
    /** A credit-paid job accepted 5 minutes ago whose render began (`processing`), as the API and a render left it. */
    const stuckJob = async (batch?: { id: string; index: number }) => {
      const jobId = randomUUID();
      await app.services.db.query(
        `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, attempts, created_at, started_at, batch_id, batch_index)
         VALUES ($1, $2, $3, 1, 'excel', 'processing', '{"customer":"stuck"}', 'credit', 1, now() - interval '5 minutes', now() - interval '5 minutes', $4, $5)`,
        [jobId, p.projectId, p.templateId, batch?.id ?? null, batch?.index ?? null],
      );
      return jobId;
    };
    /** Its workflow, on a queue nobody polls, then terminated (an operator, a failed workflow). */
    const terminatedWorkflow = async (workflowId: string, workflowType: 'generateDocumentWorkflow' | 'generateBatchWorkflow', args: unknown[]) => {
      await workflows().start(workflowType, { taskQueue: `nobody-${randomUUID()}`, workflowId, args });
      await workflows().getHandle(workflowId).terminate('test: the workflow is gone');
    };
    /** Subscribes `path` on the receiver to the events the sweep sends. */
    const subscribe = async (path: string) => {
      const res = await app.request('POST', '/api/webhooks', {
        token: p.user.accessToken,
        body: { url: `${receiver.url}${path}`, events: ['document.failed', 'batch.completed'] },
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const unsubscribe = async (id: string) => expect((await app.request('DELETE', `/api/webhooks/${id}`, { token: p.user.accessToken })).status).toBe(204);
    const received = (path: string) => receiver.requests.filter((r) => r.path === path);
    const balance = async () => (await row(`SELECT coalesce((SELECT balance FROM credit_balances WHERE project_id = $1), 0)::int AS b`, p.projectId)).b as number;

    it('a processing job whose workflow was terminated fails and gives its credit back; a running one is left alone', async () => {
      const terminated = await stuckJob();
      const running = await stuckJob();
      // Workflows of those ids on a queue nobody polls: one terminated (an operator, a failed workflow), one still running.
      for (const id of [terminated, running]) {
        await workflows().start('generateDocumentWorkflow', {
          taskQueue: `nobody-${randomUUID()}`,
          workflowId: workflowIds.documentJob(id),
          args: [{ jobId: id, renderTaskQueue: 'nobody', webhookRetryDelaysMs: [1] }],
        });
      }
      await workflows().getHandle(workflowIds.documentJob(terminated)).terminate('test: the workflow is gone');
      const before = await balance();

      await runMaintenance();
      const failed = await row(`SELECT status, error_message FROM document_jobs WHERE id = $1`, terminated);
      expect(failed).toEqual({ status: 'failed', error_message: expect.stringContaining('workflow ended without finishing it') });
      expect(await balance()).toBe(before + 1);
      expect((await row(`SELECT status FROM document_jobs WHERE id = $1`, running)).status).toBe('processing');
      // A second pass changes nothing: the failed job is not refunded twice.
      await runMaintenance();
      expect(await balance()).toBe(before + 1);
      await workflows().getHandle(workflowIds.documentJob(running)).terminate('test cleanup');
    });

    it('a job the sweep fails sends document.failed once; a batch it completes sends each job\'s document.failed and batch.completed', async () => {
      // What earlier tests left open (their workflows terminated at cleanup) ends before the subscription exists.
      await runMaintenance();
      const subscription = await subscribe('/swept');
      try {
        const job = await stuckJob();
        await terminatedWorkflow(workflowIds.documentJob(job), 'generateDocumentWorkflow', [{ jobId: job, renderTaskQueue: 'nobody', webhookRetryDelaysMs: [1] }]);
        const batchId = randomUUID();
        await app.services.db.query(
          `INSERT INTO document_batches (id, project_id, template_id, format, status, total_jobs, created_at) VALUES ($1, $2, $3, 'excel', 'processing', 2, now() - interval '5 minutes')`,
          [batchId, p.projectId, p.templateId],
        );
        const batchJobs = [await stuckJob({ id: batchId, index: 0 }), await stuckJob({ id: batchId, index: 1 })];
        await terminatedWorkflow(workflowIds.documentBatch(batchId), 'generateBatchWorkflow', [{ batchId, renderTaskQueue: 'nobody', webhookRetryDelaysMs: [1] }]);

        await runMaintenance();
        await waitFor(() => received('/swept').length >= 4, { what: 'the four events at /swept' });
        const events = received('/swept').map((r) => r.json);
        expect(events.filter((e) => e.type === 'document.failed').map((e) => e.data.jobId).sort()).toEqual([job, ...batchJobs].sort());
        const failed = events.find((e) => e.data.jobId === job);
        expect(failed).toMatchObject({ id: `evt_${job}_document_failed`, data: { status: 'failed', errorMessage: expect.stringContaining('workflow ended without finishing it') } });
        expect(events.filter((e) => e.type === 'batch.completed')).toEqual([
          expect.objectContaining({ id: `evt_${batchId}_batch_completed`, data: expect.objectContaining({ batchId, status: 'completed', totalJobs: 2, failedJobs: 2 }) }),
        ]);
        // The deliveries are recorded like any other (listed, signed, each delivered once).
        const deliveries = () => app.services.db.query(`SELECT event_type, status FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY event_type`, [subscription]);
        // The receiver has the events before each attempt is recorded (the answer comes first): wait for the records to settle.
        await waitFor(async () => (await deliveries()).every((d: { status: string }) => d.status !== 'pending' && d.status !== 'delivering'), { what: 'the deliveries to be recorded' });
        expect(await deliveries()).toEqual([
          { event_type: 'batch.completed', status: 'completed' },
          { event_type: 'document.failed', status: 'completed' },
          { event_type: 'document.failed', status: 'completed' },
          { event_type: 'document.failed', status: 'completed' },
        ]);

        // A second pass finds nothing open: no new delivery, nothing sent again.
        await runMaintenance();
        expect(await app.services.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`, [subscription])).toEqual([{ n: 4 }]);
        expect(received('/swept')).toHaveLength(4);
      } finally {
        await unsubscribe(subscription);
      }
    });

    it('what a pass that crashed after failing a job and completing a batch owed is announced by the next pass, once', async () => {
      await runMaintenance();
      const subscription = await subscribe('/owed');
      try {
        // As a crashed pass leaves them: ended, refunded, marked as owing their event (event_pending), nothing announced.
        const sweptAway = "The job's workflow ended without finishing it (terminated, failed or timed out)";
        const failedJob = async (batch?: { id: string; index: number }) => {
          const jobId = await stuckJob(batch);
          await app.services.db.query(
            `UPDATE document_jobs SET status = 'failed', error_code = 'ERR_INTERNAL_001', error_message = $2, completed_at = now(), event_pending = true WHERE id = $1`,
            [jobId, sweptAway],
          );
          return jobId;
        };
        const job = await failedJob();
        const batchId = randomUUID();
        await app.services.db.query(
          `INSERT INTO document_batches (id, project_id, template_id, format, status, total_jobs, created_at, completed_at, event_pending)
           VALUES ($1, $2, $3, 'excel', 'completed', 2, now() - interval '5 minutes', now(), true)`,
          [batchId, p.projectId, p.templateId],
        );
        const batchJobs = [await failedJob({ id: batchId, index: 0 }), await failedJob({ id: batchId, index: 1 })];
        // One of them crashed later still: its delivery recorded, its workflow never started.
        const [recorded] = await prepareEventDeliveries(app.services.db, {
          projectId: p.projectId,
          source: 'document',
          event: { id: `evt_${batchJobs[1]}_document_failed`, type: 'document.failed', timestamp: new Date().toISOString(), data: { jobId: batchJobs[1], status: 'failed' } },
        });

        await runMaintenance();
        await waitFor(() => received('/owed').length >= 4, { what: 'the four owed events at /owed' });
        const events = received('/owed').map((r) => r.json);
        expect(events.filter((e) => e.type === 'document.failed').map((e) => e.data.jobId).sort()).toEqual([job, ...batchJobs].sort());
        expect(events.find((e) => e.data.jobId === job)).toMatchObject({ id: `evt_${job}_document_failed`, data: { status: 'failed', errorMessage: sweptAway } });
        expect(events.filter((e) => e.type === 'batch.completed')).toEqual([expect.objectContaining({ id: `evt_${batchId}_batch_completed`, data: expect.objectContaining({ batchId, failedJobs: 2 }) })]);
        expect((await row(`SELECT status FROM webhook_deliveries WHERE id = $1`, recorded)).status).not.toBe('failed');
        const marks = await app.services.db.query(
          `SELECT count(*)::int AS n FROM (SELECT id FROM document_jobs WHERE event_pending UNION ALL SELECT id FROM document_batches WHERE event_pending) AS owed`,
        );
        expect(marks).toEqual([{ n: 0 }]);

        // Nothing is owed any more: a second pass sends nothing again.
        await runMaintenance();
        expect(await app.services.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`, [subscription])).toEqual([{ n: 4 }]);
        expect(received('/owed')).toHaveLength(4);
      } finally {
        await unsubscribe(subscription);
      }
    });

    it('a stranded job behind more than 500 older jobs whose workflows run is reached in one pass (one visibility query a page)', async () => {
      // 501 older jobs, each with a running workflow (a queue nobody polls; it times out on its own).
      const running: string[] = await app.services.db
        .query(
          `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, attempts, created_at, started_at)
           SELECT gen_random_uuid(), $1, $2, 1, 'excel', 'processing', '{}', 'credit', 1, now() - interval '10 minutes' + n * interval '1 ms', now() - interval '10 minutes'
             FROM generate_series(1, 501) n RETURNING id`,
          [p.projectId, p.templateId],
        )
        .then((rows: Array<{ id: string }>) => rows.map((r) => r.id));
      const describe = jest.spyOn(app.services.temporal.workflow, 'getHandle');
      try {
        let next = 0;
        const lane = async () => {
          while (next < running.length) {
            const id = running[next++];
            await workflows().start('generateDocumentWorkflow', {
              taskQueue: 'nobody-polls-this',
              workflowId: workflowIds.documentJob(id),
              args: [{ jobId: id, renderTaskQueue: 'nobody', webhookRetryDelaysMs: [1] }],
              workflowExecutionTimeout: '10 minutes',
            });
          }
        };
        await Promise.all(Array.from({ length: 16 }, lane));
        const stranded = await stuckJob();
        describe.mockClear();
        const result = await runMaintenance();
        expect(result.restarted).toBeGreaterThanOrEqual(1);
        expect((await waitForJob(app, p.apiKey, stranded)).status).toBe('completed');
        // The running ones are left as they are.
        expect(await app.services.db.query(`SELECT DISTINCT status FROM document_jobs WHERE id = ANY($1::uuid[])`, [running])).toEqual([{ status: 'processing' }]);
        // Visibility answered for the pages: far fewer workflows were described one by one than were checked.
        console.log(`maintenance described ${describe.mock.calls.length} workflows one by one for ${running.length + 1} open jobs`);
      } finally {
        describe.mockRestore();
        // Out of later passes' way: these jobs were never real.
        await app.services.db.query(`UPDATE document_jobs SET status = 'failed', completed_at = now() WHERE id = ANY($1::uuid[])`, [running]);
      }
    });

    it('a processing job whose workflow Temporal never saw is started again and renders', async () => {
      const jobId = await stuckJob();
      const result = await runMaintenance();
      expect(result.restarted).toBeGreaterThanOrEqual(1);
      expect((await waitForJob(app, p.apiKey, jobId)).status).toBe('completed');
    });
  });

  it("a purged project's in-flight Flow run ends (failed, not retried forever) when its activity finds the run gone", async () => {
    const ws = await teamFlowWorkspace(app, 'starter');
    const gate = await manualGate(
      app,
      ws,
      { approvers: [{ email: `approver-${randomUUID().slice(0, 8)}@example.com`, name: 'Approver' }], timeoutMinutes: 2, onTimeout: 'approve' },
      { deliveryChannels: [{ type: 'webhook', url: 'https://hooks.example.com/flow', secret: 'whsec_123456789' }] },
    );
    const runId = await submit(app, ws, gate);
    await waitForRunStatus(app, ws, runId, ['review_required']);
    // The project goes with everything under it (ON DELETE CASCADE), as an account purge removes it.
    await app.services.db.query(`DELETE FROM projects WHERE id = $1`, [ws.projectId]);

    // The approval times out (2 "minutes" = 2 s) and approves; the delivery step then loads the run.
    const ended = Date.now();
    const failure = await workflows()
      .getHandle(workflowIds.flowRun(runId))
      .result()
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    // The run is gone either way: its step loaded it (EntityNotFoundError), or, when the timeout fired while
    // the purge was still deleting, its step wrote a row referring to it (a foreign-key violation); both are
    // final (activities/failure.ts).
    const cause = (failure as WorkflowFailedError).cause?.cause as { type?: string; nonRetryable?: boolean; message?: string } | undefined;
    expect(cause?.nonRetryable).toBe(true);
    if (cause?.type === 'QueryFailedError') expect(cause.message).toMatch(/foreign key/);
    else expect(cause?.type).toBe('EntityNotFoundError');
    const described = await workflows().getHandle(workflowIds.flowRun(runId)).describe();
    expect(described.status.name).toBe('FAILED');
    console.log(`purged run's workflow failed ${Date.now() - ended} ms after the purge`);
  });
});
