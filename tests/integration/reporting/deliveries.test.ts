import { createHmac, randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { createTestDatasource } from '../../support/reporting';
import { createKey } from '../../support/api-keys';
import { download } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import type { SmtpTestServer } from '../../support/smtp-server';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Deliveries of report runs and job runs (docs/reporting.md "Deliveries", "Jobs"): real runs over
 * the test PostgreSQL, delivered through Temporal to a local webhook receiver and the test SMTP
 * server, with retries (REPORT_DELIVERY_RETRY_DELAYS shortened to one second), manual retries and
 * a job whose bundle carries the reports that worked.
 */
describe('reporting deliveries', () => {
  let app: TestApp;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let alice: SignedUpUser;
  let runKey: string;
  let datasource: { id: string };
  const suffix = randomBytes(4).toString('hex');
  const table = `dlv_sales_${suffix}`;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', REPORT_DELIVERY_RETRY_DELAYS: '1s,1s,1s' } });
    smtp = app.smtp!;
    alice = await signUp(app, { verified: true });
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text, amount numeric(10,2))`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'Apple', 12.50), (2, 'Pear', 3.25)`);
    datasource = await createTestDatasource(app, alice.accessToken, `Sales ${suffix}`);
    runKey = (await createKey(app, alice.accessToken, { name: 'runner', permissions: { read_reports: true, run_reports: true } })).plainKey;
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
    await receiver?.stop();
  });

  const as = (extra: Record<string, unknown> = {}) => ({ token: alice.accessToken, ...extra });
  const unique = () => randomBytes(4).toString('hex');

  /** A published CSV-only report over one query (no template, nothing charged). */
  async function csvReport(text = `SELECT label, amount FROM ${table} ORDER BY id`) {
    const q = await app.request('POST', '/api/reporting/queries', as({ body: { name: `Q ${unique()}`, datasourceId: datasource.id, text } }));
    expect([q.status, q.body.code ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, as({ body: {} }))).status).toBe(201);
    const r = await app.request('POST', '/api/reporting/reports', as({ body: { name: `R ${unique()}`, datasets: [{ name: 'items', queryId: q.body.id }], outputs: [{ format: 'csv' }] } }));
    expect([r.status, r.body.relatedInfo ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/reports/${r.body.id}/publish`, as({ body: {} }))).status).toBe(201);
    return r.body;
  }

  async function channel(body: Record<string, unknown>) {
    const res = await app.request('POST', '/api/reporting/channels', as({ body: { name: `C ${unique()}`, ...body } }));
    expect([res.status, res.body.code ?? null, res.body.relatedInfo ?? null]).toEqual([201, null, null]);
    return res.body;
  }

  const webhookChannel = (path: string) => channel({ kind: 'webhook', config: { url: `${receiver.url}${path}` } });
  const getRun = (runId: string) => app.request('GET', `/api/reporting/runs/${runId}`, { token: runKey });
  const ended = (status: string) => ['completed', 'failed', 'cancelled', 'skipped'].includes(status);
  const runEnded = (runId: string) =>
    waitFor(
      async () => {
        const res = await getRun(runId);
        return ended(res.body.status) && res.body.deliveries.every((d: any) => ended(d.status) || d.status === 'skipped') ? res.body : undefined;
      },
      { timeoutMs: 120_000, what: `run ${runId} to end` },
    );
  const deliveriesOf = async (runId: string) => (await app.request('GET', `/api/reporting/runs/${runId}/deliveries`, { token: runKey })).body.data;
  const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);

  async function startRun(reportId: string, channelIds: string[]) {
    const res = await app.request('POST', `/api/reporting/reports/${reportId}/runs`, { token: runKey, body: { channelIds } });
    expect([res.status, res.body.code ?? null]).toEqual([201, null]);
    return res.body.runId as string;
  }

  it('delivers a run to a signed webhook, retrying a 500 once, with links that download the file', async () => {
    const report = await csvReport();
    const hook = await webhookChannel('/retry-once');
    receiver.respondOn('/retry-once', [500], 200);
    const run = await runEnded(await startRun(report.id, [hook.id]));

    expect(run).toMatchObject({ status: 'completed', deliveryStatus: 'completed', channelIds: [hook.id] });
    expect(run.deliveries).toEqual([{ id: expect.any(String), channelId: hook.id, kind: 'webhook', target: expect.stringContaining('127.0.0.1'), status: 'completed' }]);
    const [delivery] = await deliveriesOf(run.id);
    expect(delivery.attempts.map((a: any) => [a.number, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);

    const received = requestsTo('/retry-once');
    expect(received).toHaveLength(2);
    const last = received[1];
    const signature = createHmac('sha256', hook.secret).update(`${last.headers['x-service-timestamp']}.${last.rawBody}`).digest('hex');
    expect(last.headers['x-service-signature']).toContain(signature);
    expect(last.headers['x-service-event-type']).toBe('report.run.completed');
    // Both attempts carry the same event id, so a receiver can drop the repeat.
    expect(received[0].headers['x-service-event-id']).toBe(last.headers['x-service-event-id']);
    expect(last.json.data.run).toMatchObject({ id: run.id, shortId: run.shortId, status: 'delivering' });
    const [file] = last.json.data.files;
    expect(file).toMatchObject({ format: 'csv', filename: expect.stringMatching(/\.csv$/), bytes: expect.any(Number) });
    const fetched = await download(file.url);
    expect([fetched.status, fetched.body.toString('utf8')]).toEqual([200, 'label,amount\r\nApple,12.50\r\nPear,3.25\r\n']);
  });

  it('fails a run at delivery on a 4xx without retrying, and a manual retry completes it without re-sending the others', async () => {
    const report = await csvReport();
    const good = await webhookChannel('/good');
    const bad = await webhookChannel('/gone');
    receiver.respondOn('/good', [], 200);
    receiver.respondOn('/gone', [], 404);
    const runId = await startRun(report.id, [good.id, bad.id]);
    const run = await runEnded(runId);

    expect(run).toMatchObject({ status: 'failed', failedStage: 'delivery', deliveryStatus: 'failed', error: { code: 'ERR_RDLV_004', message: '1 of 2 deliveries failed' } });
    const deliveries = await deliveriesOf(runId);
    const failed = deliveries.find((d: any) => d.channelId === bad.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: [{ number: 1, statusCode: 404 }] });
    expect(deliveries.find((d: any) => d.channelId === good.id)).toMatchObject({ status: 'completed' });
    expect(requestsTo('/gone')).toHaveLength(1);

    // A completed delivery cannot be retried; the failed one can, once.
    const done = deliveries.find((d: any) => d.channelId === good.id);
    const refused = await app.request('POST', `/api/reporting/deliveries/${done.id}/retry`, { token: runKey });
    expect([refused.status, refused.body.code]).toEqual([409, 'ERR_RDLV_002']);

    receiver.respondOn('/gone', [], 200);
    const retried = await app.request('POST', `/api/reporting/deliveries/${failed.shortId}/retry`, { token: runKey });
    expect([retried.status, retried.body.success, retried.body.deliveryId]).toEqual([200, true, failed.id]);
    const fixed = await waitFor(async () => {
      const res = await getRun(runId);
      return res.body.status === 'completed' ? res.body : undefined;
    });
    expect(fixed).toMatchObject({ status: 'completed', failedStage: null, error: null, deliveryStatus: 'completed' });
    expect(requestsTo('/gone')).toHaveLength(2);
    expect(requestsTo('/good')).toHaveLength(1);
    const missing = await app.request('POST', `/api/reporting/deliveries/rdlv_nope/retry`, { token: runKey });
    expect([missing.status, missing.body.code]).toEqual([404, 'ERR_RDLV_001']);
  });

  it('a report run, a job run and a delivery retry accepted while Temporal refuses starts keep their outbox marks; the sweep starts each once', async () => {
    const report = await csvReport();
    const hook = await webhookChannel('/outbox-retry');
    receiver.respondOn('/outbox-retry', [], 404);
    const failedRun = await runEnded(await startRun(report.id, [hook.id]));
    const [failed] = await deliveriesOf(failedRun.id);
    expect(failed.status).toBe('failed');
    const job = await app.request('POST', '/api/reporting/jobs', as({ body: { name: `Outbox ${unique()}`, items: [{ reportId: report.id }] } }));
    expect(job.status).toBe(201);
    receiver.respondOn('/outbox-retry', [], 200);

    const refused = jest.spyOn(app.services.temporal.workflow, 'start').mockRejectedValue(new Error('Temporal unavailable'));
    let runId: string;
    let jobRunId: string;
    try {
      runId = await startRun(report.id, [hook.id]);
      const jobRun = await app.request('POST', `/api/reporting/jobs/${job.body.id}/runs`, { token: runKey, body: {} });
      expect(jobRun.status).toBe(201);
      jobRunId = jobRun.body.jobRunId;
      const retried = await app.request('POST', `/api/reporting/deliveries/${failed.id}/retry`, { token: runKey });
      expect([retried.status, retried.body.status]).toEqual([200, 'pending']);
      // Each start and its three retries (0.25 s, 1 s, 4 s), then they are left to the sweep.
      await waitFor(() => refused.mock.calls.length >= 12, { what: 'the retried starts', timeoutMs: 20_000 });
      await app.services.outbox.idle();
      const marks = async () => [
        (await app.services.db.query(`SELECT status, workflow_pending FROM reporting_runs WHERE id = $1`, [runId]))[0],
        (await app.services.db.query(`SELECT status, workflow_pending FROM reporting_job_runs WHERE id = $1`, [jobRunId]))[0],
        (await app.services.db.query(`SELECT status, retry_pending_since IS NOT NULL AS workflow_pending FROM reporting_deliveries WHERE id = $1`, [failed.id]))[0],
      ];
      expect(await marks()).toEqual([
        { status: 'queued', workflow_pending: true },
        { status: 'queued', workflow_pending: true },
        { status: 'pending', workflow_pending: true },
      ]);
    } finally {
      refused.mockRestore();
    }
    expect(await app.services.outbox.sweep(0)).toBeGreaterThanOrEqual(3);
    expect(await app.services.outbox.sweep(0)).toBe(0);
    expect((await runEnded(runId)).status).toBe('completed');
    expect((await runEnded(failedRun.id)).status).toBe('completed');
    const jobDone = await waitFor(async () => {
      const res = await app.request('GET', `/api/reporting/job-runs/${jobRunId}`, { token: runKey });
      return ended(res.body.status) ? res.body : undefined;
    });
    expect(jobDone.status).toBe('completed');
    // The failed delivery was re-sent once, by its retry's one workflow.
    expect((await deliveriesOf(failedRun.id))[0].attempts.map((a: any) => a.statusCode)).toEqual([404, 200]);
    expect(await app.services.db.query(`SELECT workflow_pending, workflow_started_at IS NOT NULL AS started FROM reporting_runs WHERE id = $1`, [runId])).toEqual([{ workflow_pending: false, started: true }]);
  });

  it('sends one e-mail per recipient with the file attached; a refused recipient alone is retried', async () => {
    const report = await csvReport();
    const [ann, bob, cat] = ['ann', 'bob', 'cat'].map((n) => `${n}-${unique()}@example.test`);
    const mail = await channel({ kind: 'email', config: { to: [ann, bob], cc: [cat] } });
    smtp.refuseRecipient(bob, 450);
    const runId = await startRun(report.id, [mail.id]);
    // Bob's first attempt was refused; accept him for the retry a second later.
    await waitFor(async () => ((await deliveriesOf(runId)).find((d: any) => d.target === bob)?.attempts.length ?? 0) >= 1 || undefined);
    smtp.refuseRecipient(bob, null);
    const run = await runEnded(runId);

    expect(run).toMatchObject({ status: 'completed', deliveryStatus: 'completed' });
    const deliveries = await deliveriesOf(runId);
    expect(deliveries.map((d: any) => [d.target, d.status, d.attempts.length]).sort()).toEqual(
      [
        [ann, 'completed', 1],
        [bob, 'completed', 2],
        [cat, 'completed', 1],
      ].sort(),
    );
    for (const address of [ann, bob, cat]) {
      const sent = smtp.messages.filter((m) => m.envelopeTo.includes(address));
      expect(sent).toHaveLength(1);
      // The Message-ID is the delivery's: a repeat after a crash would carry the same one.
      const delivery = deliveries.find((d: any) => d.target === address);
      expect([sent[0].messageId, delivery.remoteRef]).toEqual([`<${delivery.id}@formwork.reports>`, `<${delivery.id}@formwork.reports>`]);
      expect(sent[0].envelopeTo).toEqual([address]);
      expect(sent[0].attachments.map((a) => [a.filename, a.content.toString('utf8')])).toEqual([[expect.stringMatching(/\.csv$/), 'label,amount\r\nApple,12.50\r\nPear,3.25\r\n']]);
    }
  });

  it('never follows a redirect (to the metadata address here) and retries a dropped connection to the end of its schedule', async () => {
    const report = await csvReport();
    const moved = await webhookChannel('/moved');
    const dropping = await webhookChannel('/dropping');
    receiver.respondOn('/moved', [], { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } });
    receiver.respondOn('/dropping', [], 'reset');
    const run = await runEnded(await startRun(report.id, [moved.id, dropping.id]));

    expect(run).toMatchObject({ status: 'failed', failedStage: 'delivery', error: { message: '2 of 2 deliveries failed' } });
    const deliveries = await deliveriesOf(run.id);
    const redirect = deliveries.find((d: any) => d.channelId === moved.id);
    expect(redirect.attempts).toEqual([expect.objectContaining({ number: 1, statusCode: 302 })]);
    expect(JSON.stringify(redirect)).not.toContain('169.254');
    // REPORT_DELIVERY_RETRY_DELAYS has three waits: four attempts, then failed.
    const dropped = deliveries.find((d: any) => d.channelId === dropping.id);
    expect(dropped.attempts.map((a: any) => a.number)).toEqual([1, 2, 3, 4]);
    expect(dropped.attempts.every((a: any) => a.statusCode === undefined && typeof a.error === 'string')).toBe(true);
    expect(requestsTo('/dropping')).toHaveLength(4);
  });

  it('skips an inactive channel and refuses channels of another project', async () => {
    const report = await csvReport();
    const hook = await webhookChannel('/inactive');
    const off = await app.request('PATCH', `/api/reporting/channels/${hook.id}`, as({ body: { isActive: false } }));
    expect(off.status).toBe(200);
    const run = await runEnded(await startRun(report.id, [hook.id]));
    expect(run).toMatchObject({ status: 'completed', deliveryStatus: 'completed', deliveries: [{ channelId: hook.id, status: 'skipped' }] });
    expect((await deliveriesOf(run.id))[0]).toMatchObject({ status: 'skipped', note: 'channel_inactive', attempts: [] });
    expect(requestsTo('/inactive')).toHaveLength(0);

    const mallory = await signUp(app, { verified: true });
    const theirs = await app.request('POST', '/api/reporting/channels', { token: mallory.accessToken, body: { name: 'theirs', kind: 'webhook', config: { url: `${receiver.url}/theirs` } } });
    expect(theirs.status).toBe(201);
    const refused = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { channelIds: [theirs.body.id] } });
    expect([refused.status, refused.body.code, refused.body.relatedInfo?.field]).toEqual([400, 'ERR_CHAN_002', 'channelIds']);
    const tooMany = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { channelIds: Array.from({ length: 11 }, (_, i) => `rch_${i}`) } });
    expect([tooMany.status, tooMany.body.code]).toEqual([400, 'ERR_VALID_001']);
  });

  it('runs a job of three reports with one failing query and delivers one bundle with the two that worked', async () => {
    const [a, b] = [await csvReport(), await csvReport(`SELECT label FROM ${table} WHERE amount > 10`)];
    const broken = await csvReport(`SELECT missing_column FROM ${table}`);
    const hook = await webhookChannel('/bundle');
    receiver.respondOn('/bundle', [], 200);
    const job = await app.request(
      'POST',
      '/api/reporting/jobs',
      as({ body: { name: `Monthly ${unique()}`, items: [{ reportId: a.id }, { reportId: broken.shortId }, { reportId: b.slug }], concurrency: 2, channelIds: [hook.id] } }),
    );
    expect([job.status, job.body.code ?? null, job.body.relatedInfo ?? null]).toEqual([201, null, null]);
    expect(job.body).toMatchObject({ delivery: 'bundle', concurrency: 2, stopOnFailure: false, items: [{ reportId: a.id }, { reportId: broken.id }, { reportId: b.id }] });

    const started = await app.request('POST', `/api/reporting/jobs/${job.body.id}/runs`, { token: runKey, body: {} });
    expect([started.status, started.body.status]).toEqual([201, 'queued']);
    expect(started.headers.get('location')).toBe(`${app.url}/api/reporting/job-runs/${started.body.jobRunId}`);
    expect(started.body.statusUrl).toBe(started.headers.get('location'));
    const jobRun = await waitFor(
      async () => {
        const res = await app.request('GET', `/api/reporting/job-runs/${started.body.jobRunId}`, { token: runKey });
        return ended(res.body.status) ? res.body : undefined;
      },
      { timeoutMs: 120_000, what: 'the job run to end' },
    );
    expect(jobRun).toMatchObject({ status: 'completed', totalRuns: 3, completedRuns: 2, failedRuns: 1, deliveryStatus: 'completed' });
    expect(jobRun.items.map((i: any) => i.status)).toEqual(['completed', 'failed', 'completed']);
    const brokenRun = await getRun(jobRun.items[1].runId);
    expect(brokenRun.body).toMatchObject({ trigger: 'job', jobRunId: jobRun.id, status: 'failed', failedStage: 'query', deliveries: [] });

    const [bundle] = requestsTo('/bundle');
    expect(requestsTo('/bundle')).toHaveLength(1);
    expect(bundle.headers['x-service-event-type']).toBe('report.job_run.completed');
    expect(bundle.json.data.files).toHaveLength(2);
    expect(bundle.json.data.run.items.map((i: any) => i.status)).toEqual(['completed', 'failed', 'completed']);
    const runs = await app.request('GET', `/api/reporting/runs?jobRunId=${jobRun.id}`, { token: runKey });
    expect(runs.body.meta.total).toBe(3);
  });

  it('runs a job from its schedule (trigger), delivering the bundle to the schedule\'s channels; a scheduled job or report cannot be deleted', async () => {
    const report = await csvReport();
    const hook = await webhookChannel('/scheduled-bundle');
    receiver.respondOn('/scheduled-bundle', [], 200);
    const job = await app.request('POST', '/api/reporting/jobs', as({ body: { name: `Nightly ${unique()}`, items: [{ reportId: report.id }] } }));
    expect(job.status).toBe(201);
    const schedule = await app.request('POST', '/api/reporting/schedules', as({ body: { name: `Nightly ${unique()}`, target: { type: 'job', id: job.body.id }, cron: '0 3 * * *', timezone: 'Europe/Berlin', channelIds: [hook.id] } }));
    expect([schedule.status, schedule.body.code ?? null, schedule.body.relatedInfo ?? null]).toEqual([201, null, null]);

    const triggered = await app.request('POST', `/api/reporting/schedules/${schedule.body.id}/trigger`, as());
    // 201 naming the job run it started, or 202 when its record was not there within the trigger's wait.
    expect([201, 202]).toContain(triggered.status);
    const jobRun = await waitFor(
      async () => {
        const res = await app.request('GET', `/api/reporting/job-runs?jobId=${job.body.id}`, { token: runKey });
        const [latest] = res.body.data;
        return latest && ended(latest.status) ? latest : undefined;
      },
      { timeoutMs: 120_000, what: 'the scheduled job run to end' },
    );
    expect(jobRun).toMatchObject({ status: 'completed', trigger: 'schedule', scheduleId: schedule.body.id, timezone: 'Europe/Berlin', channelIds: [hook.id], deliveryStatus: 'completed', completedRuns: 1 });
    expect(requestsTo('/scheduled-bundle')).toHaveLength(1);
    const itemRun = await getRun(jobRun.items[0].runId);
    expect(itemRun.body).toMatchObject({ trigger: 'job', jobRunId: jobRun.id, scheduleId: schedule.body.id, timezone: 'Europe/Berlin', status: 'completed' });

    const jobDelete = await app.request('DELETE', `/api/reporting/jobs/${job.body.id}`, as());
    expect([jobDelete.status, jobDelete.body.code]).toEqual([409, 'ERR_RJOB_006']);
    const reportDelete = await app.request('DELETE', `/api/reporting/reports/${report.id}`, as());
    expect([reportDelete.status, reportDelete.body.code, reportDelete.body.relatedInfo.usedBy]).toEqual([409, 'ERR_RPT_013', 'jobs']);
    expect((await app.request('DELETE', `/api/reporting/schedules/${schedule.body.id}`, as())).status).toBeLessThan(300);
    expect((await app.request('DELETE', `/api/reporting/jobs/${job.body.id}`, as())).status).toBe(200);
    expect((await app.request('DELETE', `/api/reporting/reports/${report.id}`, as())).status).toBeLessThan(300);
  });

  it('stops a job on the first failure when asked, and refuses unknown reports at once', async () => {
    const broken = await csvReport(`SELECT missing_column FROM ${table}`);
    const fine = await csvReport();
    const job = await app.request('POST', '/api/reporting/jobs', as({ body: { name: `Strict ${unique()}`, items: [{ reportId: broken.id }, { reportId: fine.id }], concurrency: 1, stopOnFailure: true } }));
    expect(job.status).toBe(201);
    const started = await app.request('POST', `/api/reporting/jobs/${job.body.shortId}/runs`, { token: runKey, body: {} });
    const jobRun = await waitFor(async () => {
      const res = await app.request('GET', `/api/reporting/job-runs/${started.body.jobRunId}`, { token: runKey });
      return ended(res.body.status) ? res.body : undefined;
    });
    expect(jobRun).toMatchObject({ status: 'failed', error: { code: 'ERR_RJOB_004' }, items: [{ status: 'failed' }, { status: 'skipped', runId: null }] });

    const unknown = await app.request('POST', '/api/reporting/jobs', as({ body: { name: `Bad ${unique()}`, items: [{ reportId: 'rpt_doesnotexist00' }, { reportId: fine.id, extra: 1 }] } }));
    expect([unknown.status, unknown.body.code]).toEqual([400, 'ERR_VALID_001']);
    const missing = await app.request('POST', '/api/reporting/jobs', as({ body: { name: `Bad ${unique()}`, items: [{ reportId: 'rpt_doesnotexist00' }, { reportId: 'nope' }] } }));
    expect([missing.status, missing.body.code, missing.body.relatedInfo.errors.map((e: any) => e.path)]).toEqual([400, 'ERR_RJOB_002', ['items[0].reportId', 'items[1].reportId']]);
    const tooMany = await app.request('POST', '/api/reporting/jobs', as({ body: { name: `Big ${unique()}`, items: Array.from({ length: 21 }, () => ({ reportId: fine.id })) } }));
    expect([tooMany.status, tooMany.body.code]).toEqual([400, 'ERR_VALID_001']);
  });
});
