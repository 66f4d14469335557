import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { createScheduleActivities } from '../../../activities/reporting/schedule.activity';
import * as schedules from '../../../api/reporting/schedules.service';
import { scheduleIds } from '../../../domain/temporal-names';
import { reportSchedulePort } from '../../../platform/report-schedules';
import { startTestApp, type TestApp } from '../../support/app';
import { createTestDatasource } from '../../support/reporting';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';

/**
 * Report schedules on the Temporal dev server (docs/reporting.md "Scheduling", "Temporal workflows", "Cron rules"):
 * Temporal computes the next times in the zone, a due schedule fires and its run completes, overlap SKIP, duplicate
 * occurrences, pause/resume, trigger, the maintenance reconciler, the cron rules and tenant scoping. Reports here are
 * CSV-only over the test PostgreSQL (no renderer needed).
 */
describe('reporting schedules', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let aliceProject: string;
  let runKey: string;
  let readKey: string;
  let datasource: { id: string };
  const suffix = randomBytes(4).toString('hex');
  const table = `sched_rows_${suffix}`;

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES: '0' } });
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    [{ project_id: aliceProject }] = await app.services.db.query(`SELECT project_id FROM memberships WHERE user_id = $1`, [alice.id]);
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'one'), (2, 'two')`);
    datasource = await createTestDatasource(app, alice.accessToken, `Rows ${suffix}`);
    runKey = (await createKey(app, alice.accessToken, { name: 'runner', permissions: { read_reports: true, run_reports: true } })).plainKey;
    readKey = (await createKey(app, alice.accessToken, { name: 'reader', permissions: { read_reports: true } })).plainKey;
  });

  afterAll(async () => {
    // Temporal Schedules outlive the test database: delete every one this app made.
    if (app) {
      const ids: string[] = (await app.services.db.query(`SELECT id FROM reporting_schedules`)).map((r: { id: string }) => r.id);
      await Promise.all(ids.map((id) => app.services.temporal.schedule.getHandle(scheduleIds.reportSchedule(id)).delete().catch(() => undefined)));
      await app.services.db.query(`DROP TABLE IF EXISTS ${table}`);
      await app.close();
    }
  });

  const as = (extra: Record<string, unknown> = {}, user = alice) => ({ token: user.accessToken, ...extra });
  const unique = () => randomBytes(4).toString('hex');
  const handle = (id: string) => app.services.temporal.schedule.getHandle(scheduleIds.reportSchedule(id));
  const deps = (): schedules.ScheduleDeps => ({
    db: app.services.db,
    temporal: app.services.temporal,
    taskQueues: app.services.taskQueues,
    logger: app.services.logger,
    limits: { minIntervalMinutes: 0, schedulesPerProject: 100 },
  });
  const activities = () => createScheduleActivities({ db: app.services.db, schedules: reportSchedulePort(app.services), deliveryRetryDelaysMs: app.services.config.reporting.deliveryRetryDelaysMs });

  /** A published CSV report of one query (`text`), with a `label` parameter. */
  async function publishedReport(text = `SELECT id, label FROM ${table} ORDER BY id`, user = alice, publish = true) {
    const q = await app.request('POST', '/api/reporting/queries', as({ body: { name: `Q ${unique()}`, datasourceId: datasource.id, text } }, user));
    expect([q.status, q.body.code ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, as({ body: {} }, user))).status).toBe(201);
    const r = await app.request(
      'POST',
      '/api/reporting/reports',
      as({ body: { name: `R ${unique()}`, templateId: null, datasets: [{ name: 'rows', queryId: q.body.id }], parameters: [{ name: 'label', type: 'string', default: 'x' }], outputs: [{ format: 'csv' }] } }, user),
    );
    expect([r.status, r.body.code ?? null]).toEqual([201, null]);
    if (publish) expect((await app.request('POST', `/api/reporting/reports/${r.body.id}/publish`, as({ body: {} }, user))).status).toBe(201);
    return r.body as { id: string };
  }

  const create = (body: Record<string, unknown>, user = alice) => app.request('POST', '/api/reporting/schedules', as({ body }, user));
  const runsOf = (scheduleId: string) => app.services.db.query(`SELECT * FROM reporting_runs WHERE schedule_id = $1 ORDER BY created_at`, [scheduleId]);
  const runEnded = (runId: string, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const res = await app.request('GET', `/api/reporting/runs/${runId}`, { token: readKey });
        return ['completed', 'failed', 'cancelled', 'skipped'].includes(res.body.status) ? res.body : undefined;
      },
      { timeoutMs, what: `run ${runId} to end` },
    );

  it('creates a schedule whose next times Temporal computes in its zone, with its reading of the cron', async () => {
    const report = await publishedReport();
    const res = await create({ name: 'Weekday mornings', target: { type: 'report', id: report.id }, cron: '30 7 * * MON-FRI', timezone: 'Europe/Berlin', parameters: { label: 'daily' } });
    expect([res.status, res.body.code ?? null]).toEqual([201, null]);
    expect(res.body).toMatchObject({
      shortId: expect.stringMatching(/^rsch_[A-Za-z0-9]{16}$/),
      target: { type: 'report', id: report.id },
      timezone: 'Europe/Berlin',
      status: 'active',
      description: 'At 07:30 on Monday–Friday (Europe/Berlin)',
      warnings: [],
      catchupWindowMinutes: 60,
      missedRuns: 0,
      skippedOverlapRuns: 0,
      lastRun: null,
    });
    expect(res.body.nextRunTimes).toHaveLength(5);
    const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    for (const t of res.body.nextRunTimes) {
      const parts = local.formatToParts(new Date(t));
      const part = (type: string) => parts.find((p) => p.type === type)!.value;
      expect(`${part('hour')}:${part('minute')}`).toBe('07:30');
      expect(['Mon', 'Tue', 'Wed', 'Thu', 'Fri']).toContain(part('weekday'));
    }
    // Temporal's own view: the cron in the zone, SKIP, a memo naming the row.
    const described = await handle(res.body.id).describe();
    expect(described.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(described.spec.timezone).toBe('Europe/Berlin');
    expect(described.memo).toMatchObject({ projectId: aliceProject, scheduleId: res.body.id });
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledReportWorkflow', taskQueue: app.services.taskQueues.main });

    // Readable by id, short id, in the list with filters; a report with a live schedule cannot be deleted.
    expect((await app.request('GET', `/api/reporting/schedules/${res.body.shortId}`, { token: readKey })).body.id).toBe(res.body.id);
    const list = await app.request('GET', `/api/reporting/schedules?targetType=report&targetId=${report.id}&status=active`, { token: readKey });
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([res.body.id]);
    expect(list.body.meta).toMatchObject({ total: 1, page: 1, limit: 20 });
    const del = await app.request('DELETE', `/api/reporting/reports/${report.id}`, as());
    expect([del.status, del.body.code]).toEqual([409, 'ERR_RPT_013']);

    // PATCH moves the Temporal Schedule in place.
    const patched = await app.request('PATCH', `/api/reporting/schedules/${res.body.id}`, as({ body: { cron: '0 6 1 * *', timezone: 'America/New_York' } }));
    expect([patched.status, patched.body.description]).toEqual([200, 'At 06:00 on day 1 of the month (America/New_York)']);
    expect((await handle(res.body.id).describe()).spec.timezone).toBe('America/New_York');
    expect(new Date(patched.body.nextRunTimes[0]).getUTCDate()).toBe(1);

    // DELETE: the row goes, then the Temporal Schedule; the report can then be deleted.
    expect((await app.request('DELETE', `/api/reporting/schedules/${res.body.id}`, as())).status).toBe(204);
    await expect(handle(res.body.id).describe()).rejects.toThrow();
    expect((await app.request('GET', `/api/reporting/schedules/${res.body.id}`, { token: readKey })).body.code).toBe('ERR_SCHED_001');
    expect((await app.request('DELETE', `/api/reporting/reports/${report.id}`, as())).status).toBe(204);
  });

  it('fires a due schedule: its run (trigger schedule) completes, and the fire-to-record latency is measured', async () => {
    const report = await publishedReport();
    const res = await create({ name: 'Every minute', target: { type: 'report', id: report.id }, cron: '* * * * *', timezone: 'UTC', parameters: { label: 'tick' } });
    expect(res.status).toBe(201);
    const [run] = await waitFor(async () => {
      const runs = await runsOf(res.body.id);
      return runs.length > 0 ? runs : undefined;
    }, { timeoutMs: 75_000, what: 'the first scheduled run' });
    const ended = await runEnded(run.id);
    expect(ended).toMatchObject({ status: 'completed', trigger: 'schedule', scheduleId: res.body.id, timezone: 'UTC', parameters: { label: 'tick' } });
    expect(run.occurrence_key).toBe(`${new Date(run.scheduled_for).toISOString().slice(0, 16)} UTC`);
    expect(new Date(run.scheduled_for).getUTCSeconds()).toBe(0);
    const latencyMs = new Date(run.created_at).getTime() - new Date(run.scheduled_for).getTime();
    expect(latencyMs).toBeGreaterThanOrEqual(0);
    // Recorded for its own occurrence, before the next one is due (the behaviour; the figure itself is
    // bench:schedule's).
    expect(latencyMs).toBeLessThan(60_000);
    if (process.env.SCHEDULE_LATENCY_OUT) writeFileSync(process.env.SCHEDULE_LATENCY_OUT, JSON.stringify({ latencyMs, scheduledFor: run.scheduled_for, createdAt: run.created_at }));
    const got = await app.request('GET', `/api/reporting/schedules/${res.body.id}`, { token: readKey });
    expect(got.body.lastRun).toMatchObject({ runId: run.id, scheduledFor: new Date(run.scheduled_for).toISOString() });
    await app.request('DELETE', `/api/reporting/schedules/${res.body.id}`, as());
  });

  it('skips a trigger while the previous run is still going (overlap SKIP), and trigger answers with the run', async () => {
    const slow = await publishedReport(`SELECT pg_sleep(15)::text AS slept`);
    const res = await create({ name: 'Slow', target: { type: 'report', id: slow.id }, cron: '0 0 1 1 *', timezone: 'UTC' });
    expect(res.status).toBe(201);
    const first = await app.request('POST', `/api/reporting/schedules/${res.body.id}/trigger`, { token: runKey });
    // The run it started is accepted work: 201, Location and the absolute statusUrl (docs/architecture.md "Accepted work").
    expect([first.status, first.body.triggered, first.body.skipped]).toEqual([201, true, null]);
    expect(first.body).toMatchObject({ runId: expect.any(String), shortId: expect.stringMatching(/^rrun_/), statusUrl: `${app.url}/api/reporting/runs/${first.body.runId}` });
    expect(first.headers.get('location')).toBe(first.body.statusUrl);
    const [running] = await waitFor(async () => {
      const actions = (await handle(res.body.id).describe()).info.runningActions;
      return actions.length > 0 ? actions : undefined;
    }, { what: 'the running action' });
    const second = await app.request('POST', `/api/reporting/schedules/${res.body.id}/trigger`, { token: runKey });
    // Skipped: nothing started, the answer is final.
    expect([second.status, second.body.skipped, second.body.runId, second.headers.get('location')]).toEqual([200, 'overlap', null, null]);
    const got = await waitFor(async () => {
      const r = await app.request('GET', `/api/reporting/schedules/${res.body.id}`, { token: readKey });
      return r.body.skippedOverlapRuns >= 1 ? r.body : undefined;
    }, { what: 'skippedOverlapRuns' });
    expect(got.lastRun.runId).toBe(first.body.runId);
    expect(await runsOf(res.body.id)).toHaveLength(1);
    // A read-only key cannot trigger.
    expect((await app.request('POST', `/api/reporting/schedules/${res.body.id}/trigger`, { token: readKey })).status).toBe(403);
    expect((await app.request('POST', `/api/reporting/runs/${first.body.runId}/cancel`, { token: runKey })).status).toBe(200);
    // The schedule's workflow ends normally when its run is cancelled (the run record has the outcome):
    // `run-ended` when the child was cancelled, `run` when the child saw the cancelled record first.
    const fired = app.services.temporal.workflow.getHandle(running.workflow.workflowId);
    expect(await fired.result()).toEqual({ outcome: expect.stringMatching(/^run(-ended)?$/), runId: first.body.runId });
    expect((await runEnded(first.body.runId)).status).toBe('cancelled');
    await app.request('DELETE', `/api/reporting/schedules/${res.body.id}`, as());
  });

  it('records the second fire of one occurrence (a repeated daylight-saving hour) as a skipped duplicate', async () => {
    const report = await publishedReport();
    const res = await create({ name: 'Berlin 02:30', target: { type: 'report', id: report.id }, cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    expect(res.status).toBe(201);
    expect(res.body.warnings.map((w: { code: string }) => w.code)).toEqual(['DST_GAP', 'DST_OVERLAP']);
    await handle(res.body.id).pause('test: no real fires');
    const open = activities().openScheduledRun;
    // 02:30 CEST and 02:30 CET on 2026-10-25: one wall-clock minute, two instants.
    const a = await open({ scheduleId: res.body.id, scheduledFor: '2026-10-25T00:30:00.000Z', runId: randomUUID(), duplicateRunId: randomUUID() });
    const b = await open({ scheduleId: res.body.id, scheduledFor: '2026-10-25T01:30:00.000Z', runId: randomUUID(), duplicateRunId: randomUUID() });
    expect([a.outcome, b.outcome]).toEqual(['run', 'skipped']);
    const runs = await runsOf(res.body.id);
    expect(runs.map((r: any) => [r.status, r.skip_reason, r.occurrence_key])).toEqual([
      ['queued', null, '2026-10-25T02:30 Europe/Berlin'],
      ['skipped', 'duplicate_occurrence', '2026-10-25T02:30 Europe/Berlin'],
    ]);
    // A retried attempt (same ids) finds its own record instead of recording a duplicate.
    const retryIds = { runId: randomUUID(), duplicateRunId: randomUUID() };
    const c1 = await open({ scheduleId: res.body.id, scheduledFor: '2026-10-26T01:30:00.000Z', ...retryIds });
    const c2 = await open({ scheduleId: res.body.id, scheduledFor: '2026-10-26T01:30:00.000Z', ...retryIds });
    expect([c1, c2]).toEqual([expect.objectContaining({ outcome: 'run', runId: retryIds.runId, projectId: aliceProject }), expect.objectContaining({ outcome: 'run', runId: retryIds.runId, projectId: aliceProject })]);
    // A deleted schedule opens nothing.
    await app.services.db.query(`UPDATE reporting_runs SET status = 'cancelled' WHERE schedule_id = $1 AND status = 'queued'`, [res.body.id]);
    await app.request('DELETE', `/api/reporting/schedules/${res.body.id}`, as());
    expect(await open({ scheduleId: res.body.id, scheduledFor: '2026-10-27T01:30:00.000Z', runId: randomUUID(), duplicateRunId: randomUUID() })).toEqual({ outcome: 'gone' });
  });

  it('records a run that cannot open (parameters the report no longer takes) as failed, with the code', async () => {
    const report = await publishedReport();
    const res = await create({ name: 'Params', target: { type: 'report', id: report.id }, cron: '0 0 1 1 *', timezone: 'UTC', parameters: { label: 'ok' } });
    expect(res.status).toBe(201);
    await app.services.db.query(`UPDATE reporting_schedules SET parameters = '{"nope": 1}' WHERE id = $1`, [res.body.id]);
    const opened = await activities().openScheduledRun({ scheduleId: res.body.id, scheduledFor: new Date().toISOString(), runId: randomUUID(), duplicateRunId: randomUUID() });
    expect(opened).toMatchObject({ outcome: 'failed', code: 'ERR_RPT_007' });
    const [run] = await runsOf(res.body.id);
    expect([run.status, run.failed_stage, run.error.code]).toEqual(['failed', 'query', 'ERR_RPT_007']);
    await app.request('DELETE', `/api/reporting/schedules/${res.body.id}`, as());
  });

  it('pauses with a note and resumes, on the row and on the Temporal Schedule', async () => {
    const report = await publishedReport();
    const res = await create({ name: 'Pausable', target: { type: 'report', id: report.id }, cron: '0 9 * * *', timezone: 'UTC' });
    const paused = await app.request('POST', `/api/reporting/schedules/${res.body.id}/pause`, as({ body: { note: 'holidays' } }));
    expect([paused.status, paused.body.status, paused.body.pauseNote]).toEqual([200, 'paused', 'holidays']);
    let state = (await handle(res.body.id).describe()).state;
    expect([state.paused, state.note]).toEqual([true, 'holidays']);
    const listed = await app.request('GET', '/api/reporting/schedules?status=paused', { token: readKey });
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(res.body.id);
    const resumed = await app.request('POST', `/api/reporting/schedules/${res.body.id}/resume`, as({ body: {} }));
    expect([resumed.status, resumed.body.status, resumed.body.pauseNote]).toEqual([200, 'active', null]);
    state = (await handle(res.body.id).describe()).state;
    expect(state.paused).toBe(false);
    expect((await app.request('POST', `/api/reporting/schedules/${res.body.id}/resume`, as({ body: { note: 'x' } }))).body.code).toBe('ERR_VALID_001');
    await app.request('DELETE', `/api/reporting/schedules/${res.body.id}`, as());
  });

  it('reconciles: a missing Temporal Schedule is made again, a stale one updated, an orphan deleted, another deployment’s left alone', async () => {
    const report = await publishedReport();
    const res = await create({ name: 'Reconciled', target: { type: 'report', id: report.id }, cron: '15 3 * * *', timezone: 'Asia/Tokyo' });
    await handle(res.body.id).delete();
    const orphan = randomUUID();
    const foreign = randomUUID();
    const base = { spec: { cronExpressions: ['0 0 1 1 *'] }, action: { type: 'startWorkflow' as const, workflowType: 'scheduledReportWorkflow', workflowId: `x-${orphan}`, taskQueue: app.services.taskQueues.main, args: [] }, state: { paused: true } };
    await app.services.temporal.schedule.create({ ...base, scheduleId: scheduleIds.reportSchedule(orphan), memo: { projectId: aliceProject, scheduleId: orphan, taskQueue: app.services.taskQueues.main } });
    await app.services.temporal.schedule.create({ ...base, scheduleId: scheduleIds.reportSchedule(foreign), memo: { projectId: aliceProject, scheduleId: foreign, taskQueue: 'another-deployment-main' } });
    // A row paused behind Temporal's back (a pause whose Temporal call failed).
    const stale = await create({ name: 'Stale', target: { type: 'report', id: report.id }, cron: '0 4 * * *', timezone: 'UTC' });
    await app.services.db.query(`UPDATE reporting_schedules SET status = 'paused', pause_note = 'n', updated_at = now() WHERE id = $1`, [stale.body.id]);
    // The same, on a row last changed days ago (found through the list, not described).
    const old = await create({ name: 'Old', target: { type: 'report', id: report.id }, cron: '0 5 * * *', timezone: 'UTC' });
    await app.services.db.query(`UPDATE reporting_schedules SET status = 'paused', updated_at = now() - interval '3 days' WHERE id = $1`, [old.body.id]);

    // The orphan must be visible to the list (Temporal's visibility is eventually consistent).
    const result = await waitFor(async () => {
      const r = await activities().reconcileReportSchedules();
      return r.deleted >= 1 || (await handle(orphan).describe().then(() => false, () => true)) ? r : undefined;
    }, { timeoutMs: 30_000, what: 'the orphan to be deleted' });
    expect(result.created).toBeGreaterThanOrEqual(1);
    const again = await handle(res.body.id).describe();
    expect([again.spec.timezone, again.state.paused]).toEqual(['Asia/Tokyo', false]);
    expect((await handle(stale.body.id).describe()).state.paused).toBe(true);
    await waitFor(async () => (await activities().reconcileReportSchedules()) && (await handle(old.body.id).describe()).state.paused, { timeoutMs: 30_000, what: 'the old row paused in Temporal' });
    await expect(handle(orphan).describe()).rejects.toThrow();
    expect((await handle(foreign).describe()).memo).toMatchObject({ taskQueue: 'another-deployment-main' });
    await handle(foreign).delete();
    // Nothing left to repair.
    expect(await activities().reconcileReportSchedules()).toMatchObject({ created: 0, updated: 0 });
    for (const id of [res.body.id, stale.body.id, old.body.id]) await app.request('DELETE', `/api/reporting/schedules/${id}`, as());
  });

  it('refuses bad crons and zones (ERR_SCHED_002), too frequent ones (ERR_SCHED_003), and validates without creating', async () => {
    const report = await publishedReport();
    const target = { type: 'report', id: report.id };
    const refused = async (cron: string, timezone = 'UTC') => {
      const r = await create({ name: 'Bad', target, cron, timezone });
      return [r.status, r.body.code, (r.body.relatedInfo?.errors ?? []).map((e: { code: string }) => e.code).join(',')];
    };
    expect(await refused('0 7 * * * *')).toEqual([400, 'ERR_SCHED_002', 'FIELD_COUNT']);
    expect(await refused('0 7 1 * MON')).toEqual([400, 'ERR_SCHED_002', 'DOM_AND_DOW']);
    expect(await refused('0 7 L * *')).toEqual([400, 'ERR_SCHED_002', 'UNSUPPORTED']);
    expect(await refused('CRON_TZ=UTC 0 7 * * *')).toEqual([400, 'ERR_SCHED_002', 'TZ_PREFIX']);
    expect(await refused('*/0 * * * *')).toEqual([400, 'ERR_SCHED_002', 'BAD_STEP']);
    expect(await refused('0 7 * * *', 'Mars/Base')).toEqual([400, 'ERR_SCHED_002', 'UNKNOWN_TIME_ZONE']);
    expect(await refused('1 '.repeat(300))).toEqual([400, 'ERR_SCHED_002', 'TOO_LONG']);

    const strict = { ...deps(), limits: { minIntervalMinutes: 5, schedulesPerProject: 100 } };
    const tooOften = await schedules.createSchedule(strict, { projectId: aliceProject, userId: alice.id }, { name: 'Often', target: { type: 'report', id: report.id }, cron: '*/2 * * * *', timezone: 'UTC' }).catch((e) => e);
    expect([tooOften.code, tooOften.status, tooOften.relatedInfo]).toEqual(['ERR_SCHED_003', 400, { shortestMinutes: 2, minIntervalMinutes: 5 }]);

    const v = await app.request('POST', '/api/reporting/schedules/validate', as({ body: { cron: '30 2 * * *', timezone: 'Europe/Berlin' } }));
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ valid: true, errors: [], description: 'At 02:30 (Europe/Berlin)' });
    expect(v.body.warnings.map((w: { code: string }) => w.code)).toEqual(['DST_GAP', 'DST_OVERLAP']);
    const bad = await app.request('POST', '/api/reporting/schedules/validate', as({ body: { cron: '0 7 1 * MON', timezone: 'Nowhere/Zone', count: 5 } }));
    expect(bad.body).toMatchObject({ valid: false, description: null });
    expect(bad.body.errors.map((e: { code: string }) => e.code)).toEqual(['UNKNOWN_TIME_ZONE', 'DOM_AND_DOW']);
    expect((await app.request('POST', '/api/reporting/schedules/validate', as({ body: { cron: '* * * * *', count: 21 } }))).body.code).toBe('ERR_VALID_001');
    expect((await app.request('GET', `/api/reporting/schedules?targetId=${report.id}`, { token: readKey })).body.meta.total).toBe(0);
  });

  it('checks the target, channels, parameters and limits; the zone defaults to UTC without a profile zone', async () => {
    const draft = await publishedReport(undefined, alice, false);
    const unpublished = await create({ name: 'Draft', target: { type: 'report', id: draft.id }, cron: '0 7 * * *' });
    expect([unpublished.status, unpublished.body.code]).toEqual([409, 'ERR_SCHED_005']);
    const report = await publishedReport();
    const target = { type: 'report', id: report.id };
    const missingJob = await create({ name: 'Job', target: { type: 'job', id: randomUUID() }, cron: '0 7 * * *' });
    expect([missingJob.status, missingJob.body.code]).toEqual([404, 'ERR_RJOB_001']);
    const badParam = await create({ name: 'P', target, cron: '0 7 * * *', parameters: { nope: 1 } });
    expect([badParam.status, badParam.body.code]).toEqual([400, 'ERR_RPT_007']);
    const badOutput = await create({ name: 'O', target, cron: '0 7 * * *', outputs: ['pdf'] });
    expect([badOutput.status, badOutput.body.code]).toEqual([400, 'ERR_VALID_001']);
    const unknownChannel = await create({ name: 'C', target, cron: '0 7 * * *', channelIds: [randomUUID()] });
    expect([unknownChannel.status, unknownChannel.body.code]).toEqual([400, 'ERR_CHAN_002']);
    const tooMany = await create({ name: 'C', target, cron: '0 7 * * *', channelIds: Array.from({ length: 11 }, () => randomUUID()) });
    expect([tooMany.status, tooMany.body.code]).toEqual([400, 'ERR_CHAN_002']);
    const window = await create({ name: 'W', target, cron: '0 7 * * *', startAt: '2027-01-02T00:00:00Z', endAt: '2027-01-01T00:00:00Z' });
    expect([window.status, window.body.code]).toEqual([400, 'ERR_VALID_001']);

    // A channel of the project is taken by id; the zone defaults to UTC (no profile zone).
    const channelId = randomUUID();
    await app.services.db.query(`INSERT INTO reporting_channels (id, project_id, short_id, name, kind, config) VALUES ($1, $2, $3, $4, 'webhook', '{}')`, [channelId, aliceProject, `rch_${unique()}${unique()}`, `Hook ${unique()}`]);
    const ok = await create({ name: 'With channel', target, cron: '0 7 * * *', channelIds: [channelId], outputs: ['csv'], skipIfEmpty: true, catchupWindowMinutes: 0 });
    expect([ok.status, ok.body.timezone, ok.body.channelIds, ok.body.outputs, ok.body.skipIfEmpty, ok.body.catchupWindowMinutes]).toEqual([201, 'UTC', [channelId], ['csv'], true, 0]);
    // Temporal's smallest catch-up window stands for 0.
    expect((await handle(ok.body.id).describe()).policies.catchupWindow).toBe(10_000);
    const opened = await activities().openScheduledRun({ scheduleId: ok.body.id, scheduledFor: '2030-01-01T07:00:00.000Z', runId: randomUUID(), duplicateRunId: randomUUID() });
    expect(opened.outcome).toBe('run');
    const [run] = await runsOf(ok.body.id);
    expect([run.channel_ids, run.skip_if_empty, run.formats, run.trigger, run.timezone]).toEqual([[channelId], true, ['csv'], 'schedule', 'UTC']);
    await app.services.db.query(`UPDATE reporting_runs SET status = 'cancelled' WHERE id = $1`, [run.id]);

    // The per-project limit, counted under a lock.
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM reporting_schedules WHERE project_id = $1 AND deleted_at IS NULL`, [aliceProject]);
    const full = await schedules.createSchedule({ ...deps(), limits: { minIntervalMinutes: 0, schedulesPerProject: n } }, { projectId: aliceProject, userId: alice.id }, { name: 'One more', target: { type: 'report', id: report.id }, cron: '0 7 * * *' }).catch((e) => e);
    expect([full.code, full.status, full.relatedInfo]).toEqual(['ERR_SCHED_004', 403, { limit: n }]);
    // A channel a live schedule names cannot be deleted; once the schedule is gone it can.
    const inUse = await app.request('DELETE', `/api/reporting/channels/${channelId}`, as());
    expect([inUse.status, inUse.body.code, inUse.body.relatedInfo]).toEqual([409, 'ERR_CHAN_004', { jobs: 0, schedules: 1 }]);
    await app.request('DELETE', `/api/reporting/schedules/${ok.body.id}`, as());
    expect((await app.request('DELETE', `/api/reporting/channels/${channelId}`, as())).status).toBe(204);
  });

  it('keeps schedules to their project and refuses hostile input', async () => {
    const report = await publishedReport();
    const mine = await create({ name: 'Mine', target: { type: 'report', id: report.id }, cron: '0 7 * * *' });
    expect(mine.status).toBe(201);
    // Bob's project sees none of it.
    for (const [method, path] of [
      ['GET', `/api/reporting/schedules/${mine.body.id}`],
      ['PATCH', `/api/reporting/schedules/${mine.body.id}`],
      ['DELETE', `/api/reporting/schedules/${mine.body.id}`],
      ['POST', `/api/reporting/schedules/${mine.body.id}/pause`],
      ['POST', `/api/reporting/schedules/${mine.body.id}/trigger`],
    ] as const) {
      const r = await app.request(method, path, as(method === 'GET' || method === 'DELETE' ? {} : { body: method === 'PATCH' ? { name: 'x' } : {} }, bob));
      expect([method, path, r.status, r.body.code]).toEqual([method, path, 404, 'ERR_SCHED_001']);
    }
    expect((await app.request('GET', '/api/reporting/schedules', as({}, bob))).body.meta.total).toBe(0);
    const foreignTarget = await create({ name: 'Theirs', target: { type: 'report', id: report.id }, cron: '0 7 * * *' }, bob);
    expect([foreignTarget.status, foreignTarget.body.code]).toEqual([404, 'ERR_RPT_001']);

    // API keys read but never manage schedules.
    expect((await app.request('POST', '/api/reporting/schedules', { token: runKey, body: { name: 'K', target: { type: 'report', id: report.id }, cron: '0 7 * * *' } })).status).toBe(403);
    expect((await app.request('GET', `/api/reporting/schedules/${mine.body.id}`, { token: readKey })).status).toBe(200);

    const hostile: Array<[Record<string, unknown>, string]> = [
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: 'x'.repeat(10_000) }, 'ERR_VALID_001'],
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: '0 7 * * *', extra: true }, 'ERR_VALID_001'],
      [{ name: 'X', target: { type: 'query', id: report.id }, cron: '0 7 * * *' }, 'ERR_VALID_001'],
      [{ name: 'X'.repeat(101), target: { type: 'report', id: report.id }, cron: '0 7 * * *' }, 'ERR_VALID_001'],
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: '0 7 * * *', catchupWindowMinutes: 1441 }, 'ERR_VALID_001'],
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: '0 7 * * *', timezone: 'Europe/Berlin\u0000' }, 'ERR_SCHED_002'],
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: '0 7 * * *', parameters: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, i])) }, 'ERR_VALID_001'],
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: '0 7 * * *', parameters: { label: 'y'.repeat(70_000) } }, 'ERR_VALID_001'],
      [{ name: 'X', target: { type: 'report', id: `'; DROP TABLE reporting_schedules; --` }, cron: '0 7 * * *' }, 'ERR_RPT_001'],
      [{ name: 'X', target: { type: 'report', id: report.id }, cron: '0 7 * * *', channelIds: ['rch_../../etc'] }, 'ERR_CHAN_002'],
    ];
    for (const [body, code] of hostile) {
      const r = await create(body);
      expect([JSON.stringify(body).slice(0, 80), r.body.code]).toEqual([JSON.stringify(body).slice(0, 80), code]);
    }
    for (const ref of ['../x', 'rsch_' + 'a'.repeat(500), '%00']) {
      expect((await app.request('GET', `/api/reporting/schedules/${encodeURIComponent(ref)}`, { token: readKey })).body.code).toBe('ERR_SCHED_001');
    }
    expect((await app.request('GET', '/api/reporting/schedules?limit=101', { token: readKey })).body.code).toBe('ERR_VALID_001');
    expect((await app.request('POST', `/api/reporting/schedules/${mine.body.id}/pause`, as({ body: { note: 'n'.repeat(501) } }))).body.code).toBe('ERR_VALID_001');
    await app.request('DELETE', `/api/reporting/schedules/${mine.body.id}`, as());
  });
});
