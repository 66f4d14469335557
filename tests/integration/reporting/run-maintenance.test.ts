import { randomBytes, randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { personalProjectId } from '../../support/templates';
import { waitFor } from '../../support/wait';
import { runMaintenance as runAppMaintenance } from '../../support/maintenance';
import { workflowIds } from '../../../domain/temporal-names';
import { recordRunDataset } from '../../../db/reporting/run-state';

/**
 * Reporting's part of the maintenance schedule (docs/reporting.md "Runs", "Retention and restart"):
 * expired output files, dataset result files past REPORTING_ARTEFACT_RETENTION_DAYS, runs past
 * REPORTING_RUN_RETENTION_DAYS, and queued runs whose workflow never started. Runs and outputs are
 * inserted directly with old timestamps, their files written to artefact storage.
 */
describe('reporting maintenance: retention and stranded runs', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let projectId: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { REPORTING_ARTEFACT_RETENTION_DAYS: '30', REPORTING_RUN_RETENTION_DAYS: '90' } });
    alice = await signUp(app, { verified: true });
    projectId = await personalProjectId(app, alice.id);
  });
  afterAll(async () => {
    await app?.close();
  });

  const runMaintenance = (strandedAfterSeconds = 60) =>
    runAppMaintenance(app, { retentionSeconds: 3600, strandedAfterSeconds, deletionGraceSeconds: 300, reportArtefactRetentionDays: 30, reportRunRetentionDays: 90 });

  /** A run row `ageDays` old (ended then, unless queued), with one dataset result file and, if ended, one CSV output file. */
  async function insertRun(opts: { status: 'completed' | 'failed' | 'queued'; ageDays: number; outputExpiresInDays?: number }) {
    const id = randomUUID();
    const shortId = `rrun_${randomBytes(8).toString('hex')}`;
    const datasetKey = `reporting/${projectId}/runs/${id}/datasets/items.ndjson.gz`;
    const outputKey = `reporting/${projectId}/runs/${id}/outputs/items.csv`;
    const ended = opts.status !== 'queued';
    const datasets = ended
      ? [{ name: 'items', queryId: randomUUID(), queryVersion: 1, executedBy: 'server', status: 'completed', rowCount: 1, bytes: 10, durationMs: 5, key: datasetKey }]
      : [];
    await app.services.db.query(
      `INSERT INTO reporting_runs (id, project_id, short_id, report_id, report_version, trigger, scheduled_for, timezone, formats, status, datasets,
                                   created_at, started_at, completed_at, updated_at)
       VALUES ($1, $2, $3, $4, 1, 'api', now() - make_interval(days => $5), 'UTC', '["csv"]', $6, $7,
               now() - make_interval(days => $5) - interval '5 minutes', $8::timestamptz, $8::timestamptz, now() - make_interval(days => $5))`,
      [id, projectId, shortId, randomUUID(), opts.ageDays, opts.status, JSON.stringify(datasets), ended ? new Date(Date.now() - opts.ageDays * 86_400_000) : null],
    );
    let outputId: string | undefined;
    if (ended) {
      await app.services.storage.put(datasetKey, Buffer.from('{"n":1}\n'), 'application/gzip');
      await app.services.storage.put(outputKey, Buffer.from('n\r\n1\r\n'), 'text/csv');
      outputId = randomUUID();
      await app.services.db.query(
        `INSERT INTO reporting_run_outputs (id, run_id, project_id, format, dataset, filename, storage_key, content_type, bytes, row_count, expires_at, created_at)
         VALUES ($1, $2, $3, 'csv', 'items', 'items.csv', $4, 'text/csv', 6, 1, now() + make_interval(days => $5), now() - make_interval(days => $6))`,
        [outputId, id, projectId, outputKey, opts.outputExpiresInDays ?? 30 - opts.ageDays, opts.ageDays],
      );
    }
    return { id, datasetKey, outputKey, outputId };
  }

  const getRun = (runId: string) => app.request('GET', `/api/reporting/runs/${runId}`, { token: alice.accessToken });
  const download = (runId: string, outputId: string) =>
    app.request('GET', `/api/reporting/runs/${runId}/outputs/${outputId}/download`, { token: alice.accessToken });
  const exists = (key: string) => app.services.storage.exists(key);
  const describeRun = (runId: string) => app.services.temporal.workflow.getHandle(workflowIds.reportRun(runId)).describe();

  it('deletes expired output files and old dataset results, removes runs past retention, and leaves fresh runs alone', async () => {
    const expired = await insertRun({ status: 'completed', ageDays: 40 });
    const old = await insertRun({ status: 'failed', ageDays: 100, outputExpiresInDays: 1 });
    const fresh = await insertRun({ status: 'completed', ageDays: 1 });
    for (const r of [expired, old, fresh]) expect([await exists(r.outputKey), await exists(r.datasetKey)]).toEqual([true, true]);

    const result = await runMaintenance();
    expect(result.expired).toBeGreaterThanOrEqual(3);

    // The expired output: file gone, row kept with deleted_at, 410 on download, null link on the run.
    expect(await exists(expired.outputKey)).toBe(false);
    const [out] = await app.services.db.query(`SELECT deleted_at FROM reporting_run_outputs WHERE id = $1`, [expired.outputId]);
    expect(out.deleted_at).toBeInstanceOf(Date);
    const gone = await download(expired.id, expired.outputId!);
    expect([gone.status, gone.body.code]).toEqual([410, 'ERR_RPT_012']);
    const run = await getRun(expired.id);
    expect(run.status).toBe(200);
    expect(run.body.outputs).toEqual([expect.objectContaining({ id: expired.outputId, downloadUrl: null })]);
    // Its dataset result file (ended 40 days ago > 30) is gone; the dataset's figures stay.
    expect(await exists(expired.datasetKey)).toBe(false);
    expect(run.body.datasets).toEqual([expect.objectContaining({ name: 'items', status: 'completed', rowCount: 1 })]);
    const [{ datasets }] = await app.services.db.query(`SELECT datasets FROM reporting_runs WHERE id = $1`, [expired.id]);
    expect(datasets[0].key).toBeUndefined();

    // The run past REPORTING_RUN_RETENTION_DAYS: its files and its record are gone.
    expect([await exists(old.outputKey), await exists(old.datasetKey)]).toEqual([false, false]);
    expect(await app.services.db.query(`SELECT 1 FROM reporting_run_outputs WHERE run_id = $1`, [old.id])).toEqual([]);
    const missing = await getRun(old.id);
    expect([missing.status, missing.body.code]).toEqual([404, 'ERR_RPT_009']);

    // The fresh run: untouched, its file downloadable.
    expect([await exists(fresh.outputKey), await exists(fresh.datasetKey)]).toEqual([true, true]);
    const kept = await getRun(fresh.id);
    expect(kept.body.outputs).toEqual([expect.objectContaining({ id: fresh.outputId, downloadUrl: expect.any(String) })]);
    const link = await fetch(`${app.url}/api/reporting/runs/${fresh.id}/outputs/${fresh.outputId}/download`, {
      headers: { authorization: `Bearer ${alice.accessToken}` },
      redirect: 'manual',
    });
    expect(link.status).toBe(302);

    // A second sweep finds nothing more of these to do.
    await runMaintenance();
    expect([await exists(fresh.outputKey), await exists(fresh.datasetKey)]).toEqual([true, true]);
    expect((await getRun(expired.id)).body.outputs).toEqual([expect.objectContaining({ downloadUrl: null })]);
  });

  it('starts the workflow of a queued run whose workflow never started; a fresh queued run is left to the API', async () => {
    const stranded = await insertRun({ status: 'queued', ageDays: 0 });
    await app.services.db.query(`UPDATE reporting_runs SET created_at = now() - interval '5 minutes' WHERE id = $1`, [stranded.id]);
    const recent = await insertRun({ status: 'queued', ageDays: 0 });
    await app.services.db.query(`UPDATE reporting_runs SET created_at = now() WHERE id = $1`, [recent.id]);
    await expect(describeRun(stranded.id)).rejects.toBeInstanceOf(WorkflowNotFoundError);

    const result = await runMaintenance(60);
    expect(result.restarted).toBeGreaterThanOrEqual(1);
    expect((await describeRun(stranded.id)).workflowId).toBe(workflowIds.reportRun(stranded.id));
    await expect(describeRun(recent.id)).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // The workflow runs it: its report (a random id here) does not exist, so the run fails at the query stage.
    const ended = await waitFor(
      async () => {
        const res = await getRun(stranded.id);
        return res.body.status !== 'queued' && res.body.status !== 'running' ? res.body : undefined;
      },
      { timeoutMs: 60_000, what: 'the restarted run to end' },
    );
    expect(ended).toMatchObject({ status: 'failed', failedStage: 'query' });

    // Its workflow exists now: a second sweep does not start it again (REJECT_DUPLICATE answers already
    // started, which the sweep takes as done), even with the record put back to queued.
    await app.services.db.query(`DELETE FROM reporting_runs WHERE id = $1`, [recent.id]);
    await app.services.db.query(`UPDATE reporting_runs SET status = 'queued' WHERE id = $1`, [stranded.id]);
    await runMaintenance(60);
    expect((await getRun(stranded.id)).body.status).toBe('queued');
    await app.services.db.query(`DELETE FROM reporting_runs WHERE id = $1`, [stranded.id]);
  });
  it('starts the workflow of a stranded job run, and leaves a queued run of a job or schedule to its parent', async () => {
    const jobId = randomUUID();
    await app.services.db.query(
      `INSERT INTO reporting_jobs (id, project_id, short_id, name, items, delivery) VALUES ($1, $2, $3, $4, $5, 'bundle')`,
      [jobId, projectId, `rjob_${randomBytes(8).toString('hex')}`, `Stranded ${randomBytes(4).toString('hex')}`, JSON.stringify([{ reportId: randomUUID(), parameters: {} }])],
    );
    const jobRunId = randomUUID();
    await app.services.db.query(
      `INSERT INTO reporting_job_runs (id, project_id, short_id, job_id, trigger, scheduled_for, timezone, status, items, total_runs, created_at)
       VALUES ($1, $2, $3, $4, 'api', now(), 'UTC', 'queued', $5, 1, now() - interval '5 minutes')`,
      [jobRunId, projectId, `rjrun_${randomBytes(8).toString('hex')}`, jobId, JSON.stringify([{ reportId: randomUUID(), runId: null, status: 'pending', parameters: {} }])],
    );
    const child = await insertRun({ status: 'queued', ageDays: 0 });
    await app.services.db.query(`UPDATE reporting_runs SET trigger = 'job', created_at = now() - interval '5 minutes' WHERE id = $1`, [child.id]);

    await runMaintenance(60);
    // The job run's workflow ran: its one report does not exist, so the item and the job run fail.
    const jobRun = await waitFor(
      async () => {
        const [row] = await app.services.db.query(`SELECT status, error, items FROM reporting_job_runs WHERE id = $1`, [jobRunId]);
        return row.status === 'failed' ? row : undefined;
      },
      { timeoutMs: 60_000, what: 'the restarted job run to end' },
    );
    expect(jobRun).toMatchObject({ error: { code: 'ERR_RJOB_004' }, items: [{ status: 'failed', error: { code: 'ERR_RPT_001' } }] });
    await expect(describeRun(child.id)).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await app.services.db.query(`DELETE FROM reporting_runs WHERE id = $1`, [child.id]);
  });

  it('keeps every dataset record when datasets record at once (their queries run in parallel)', async () => {
    const { id } = await insertRun({ status: 'queued', ageDays: 0 });
    const names = ['a', 'b', 'c', 'd'];
    await app.services.db.query(`UPDATE reporting_runs SET datasets = $2 WHERE id = $1`, [id, JSON.stringify(names.map((name) => ({ name, status: 'pending' })))]);
    for (const status of ['running', 'completed'] as const) {
      await Promise.all(names.map((name) => recordRunDataset(app.services.db, id, { name, status, rowCount: status === 'completed' ? 1 : undefined })));
      const [row] = await app.services.db.query(`SELECT datasets FROM reporting_runs WHERE id = $1`, [id]);
      expect(row.datasets.map((d: { status: string }) => d.status)).toEqual(names.map(() => status));
    }
  });
});
