import { randomBytes } from 'node:crypto';
import ExcelJS from 'exceljs';
import { startTestApp, type TestApp } from '../../support/app';
import { createTestDatasource } from '../../support/reporting';
import { createKey } from '../../support/api-keys';
import { download } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { pdfText } from '../../support/rendering-pdf';
import { buildTemplate, createTemplate, publish as publishTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * Report runs end to end (docs/reporting.md "Runs"): a published report with two datasets over the
 * test PostgreSQL, run through Temporal (queries on the query queue, outputs rendered by Chromium
 * and ExcelJS on the render queue), its files downloaded through the signed links.
 */
describe('reporting runs', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let runKey: string;
  let readKey: string;
  let datasource: { id: string };
  const suffix = randomBytes(4).toString('hex');
  const table = `run_sales_${suffix}`;

  const variables = [...(buildTemplate().variables as unknown[]), { name: 'summary', type: 'object', required: false }];

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', FREE_DOCUMENTS_PER_MONTH: '100' } });
    alice = await signUp(app, { verified: true });
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text, amount numeric(10,2))`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'Apple', 12.50), (2, 'Pear, "green"', 3.25), (3, '=HYPERLINK("x")', 7.00)`);
    datasource = await createTestDatasource(app, alice.accessToken, `Sales ${suffix}`);
    runKey = (await createKey(app, alice.accessToken, { name: 'runner', permissions: { read_reports: true, run_reports: true } })).plainKey;
    readKey = (await createKey(app, alice.accessToken, { name: 'reader', permissions: { read_reports: true } })).plainKey;
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
  });

  const as = (extra: Record<string, unknown> = {}) => ({ token: alice.accessToken, ...extra });

  async function publishedQuery(text: string, parameters: unknown[] = [], extra: Record<string, unknown> = {}) {
    const q = await app.request('POST', '/api/reporting/queries', as({ body: { name: `Q ${randomBytes(4).toString('hex')}`, datasourceId: datasource.id, text, parameters, ...extra } }));
    expect([q.status, q.body.code ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, as({ body: {} }))).status).toBe(201);
    return q.body;
  }

  /** A published report: `items` (rows over min) and `stats` (first row) bound into the letter template. */
  async function publishedReport(itemsText = `SELECT label, amount FROM ${table} WHERE amount >= {{ min }} ORDER BY id`) {
    const t = await createTemplate(app, alice.accessToken, { variables });
    await publishTemplate(app, alice.accessToken, t.id);
    const items = await publishedQuery(itemsText, [{ name: 'min', type: 'number', default: 0 }]);
    const stats = await publishedQuery(`SELECT count(*) AS n, sum(amount) AS total FROM ${table}`);
    const r = await app.request(
      'POST',
      '/api/reporting/reports',
      as({
        body: {
          name: `Sales ${randomBytes(4).toString('hex')}`,
          templateId: t.id,
          datasets: [
            { name: 'items', queryId: items.id, parameters: { min: '{{ min }}' } },
            { name: 'stats', queryId: stats.id, shape: 'first_row', bindTo: 'summary' },
          ],
          parameters: [
            { name: 'min', type: 'number', default: 0 },
            { name: 'customer', type: 'string', default: 'ACME' },
          ],
          outputs: [{ format: 'pdf' }, { format: 'excel' }, { format: 'csv' }],
          filenamePattern: 'sales-{param.customer}',
        },
      }),
    );
    expect([r.status, r.body.code ?? null, r.body.relatedInfo ?? null]).toEqual([201, null, null]);
    const v = await app.request('POST', `/api/reporting/reports/${r.body.id}/publish`, as({ body: {} }));
    expect([v.status, v.body.relatedInfo ?? null]).toEqual([201, null]);
    return r.body;
  }

  const getRun = (runId: string, token = readKey) => app.request('GET', `/api/reporting/runs/${runId}`, { token });
  const runEnded = (runId: string) =>
    waitFor(
      async () => {
        const res = await getRun(runId);
        return ['completed', 'failed', 'cancelled', 'skipped'].includes(res.body.status) ? res.body : undefined;
      },
      { timeoutMs: 120_000, what: `run ${runId} to end` },
    );

  /** An output's bytes, through the download endpoint's redirect to the signed link. */
  async function fetchOutput(runId: string, outputId: string): Promise<Buffer> {
    const res = await fetch(`${app.url}/api/reporting/runs/${runId}/outputs/${outputId}/download`, { headers: { authorization: `Bearer ${readKey}` }, redirect: 'manual' });
    expect(res.status).toBe(302);
    const file = await download(res.headers.get('location')!);
    expect(file.status).toBe(200);
    return file.body;
  }

  it('runs a report with two datasets into a PDF, a typed workbook and CSV files, downloadable through signed links', async () => {
    const report = await publishedReport();
    const started = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { parameters: { min: 5, customer: 'Globex' }, metadata: { ticket: 'T-1' } } });
    // Accepted work: 201, Location and the same absolute statusUrl (docs/architecture.md "Accepted work").
    expect(started.status).toBe(201);
    expect(started.body).toEqual({ runId: expect.any(String), shortId: expect.stringMatching(/^rrun_[A-Za-z0-9]{16}$/), status: 'queued', statusUrl: `${app.url}/api/reporting/runs/${started.body.runId}` });
    expect(started.headers.get('location')).toBe(started.body.statusUrl);

    const run = await runEnded(started.body.runId);
    expect(run).toMatchObject({
      status: 'completed',
      trigger: 'api',
      reportId: report.id,
      reportVersion: 1,
      parameters: { min: 5, customer: 'Globex' },
      failedStage: null,
      documentsCharged: 2,
      metadata: { ticket: 'T-1' },
      datasets: [
        { name: 'items', status: 'completed', rowCount: 2, truncated: false, executedBy: 'server' },
        { name: 'stats', status: 'completed', rowCount: 1 },
      ],
    });
    expect(JSON.stringify(run)).not.toMatch(/ndjson|storage_key|storageKey/);
    const byFormat = (format: string, dataset?: string) => run.outputs.find((o: any) => o.format === format && (dataset === undefined || o.dataset === dataset));
    expect(run.outputs.map((o: any) => o.filename).sort()).toEqual(['sales-Globex-items.csv', 'sales-Globex-stats.csv', 'sales-Globex.pdf', 'sales-Globex.xlsx']);
    expect(run.outputs.every((o: any) => typeof o.downloadUrl === 'string' && o.bytes > 0)).toBe(true);

    const text = await pdfText(await fetchOutput(run.id, byFormat('pdf').id));
    expect(text).toContain('Dear Globex');
    expect(text).toContain('Apple');
    expect(text).toContain('=HYPERLINK');
    expect(text).not.toContain('Pear');

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await fetchOutput(run.id, byFormat('excel').id)) as unknown as ArrayBuffer);
    const cells: Array<{ value: unknown }> = [];
    wb.eachSheet((sheet) => sheet.eachRow((row) => row.eachCell((cell) => void cells.push({ value: cell.value }))));
    // numeric(10,2) arrives from PostgreSQL as text; in the workbook it is a number again.
    expect(cells.map((c) => c.value)).toEqual(expect.arrayContaining(['Apple', 12.5, 7]));

    const csv = (await fetchOutput(run.id, byFormat('csv', 'items').id)).toString('utf8');
    expect(csv).toBe('label,amount\r\nApple,12.50\r\n"\'=HYPERLINK(""x"")",7.00\r\n');
    expect((await fetchOutput(run.id, byFormat('csv', 'stats').id)).toString('utf8')).toBe('n,total\r\n3,22.75\r\n');

    // The run is listed, filtered by report and status.
    const list = await app.request('GET', `/api/reporting/runs?reportId=${report.shortId}&status=completed`, { token: readKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: any) => r.id)).toEqual([run.id]);
    expect(list.body.meta).toMatchObject({ total: 1, page: 1, limit: 20 });
  });

  it('fails a run whose query fails at the query stage, and retries it as a new run', async () => {
    const report = await publishedReport(`SELECT label, amount / ({{ min }} - {{ min }}) AS broken FROM ${table}`);
    const started = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, as({ body: {} }));
    expect(started.status).toBe(201);
    const run = await runEnded(started.body.runId);
    expect(run).toMatchObject({
      status: 'failed',
      trigger: 'manual',
      failedStage: 'query',
      error: { code: 'ERR_QRY_006' },
      documentsCharged: 0,
      outputs: [],
      datasets: expect.arrayContaining([expect.objectContaining({ name: 'items', status: 'failed', error: expect.objectContaining({ code: 'ERR_QRY_006' }) })]),
    });

    const retry = await app.request('POST', `/api/reporting/runs/${run.shortId}/retry`, { token: runKey, body: {} });
    expect([retry.status, retry.headers.get('location'), retry.body.statusUrl]).toEqual([201, `${app.url}/api/reporting/runs/${retry.body.runId}`, `${app.url}/api/reporting/runs/${retry.body.runId}`]);
    const again = await runEnded(retry.body.runId);
    expect(again).toMatchObject({ retryOf: run.id, status: 'failed', failedStage: 'query', trigger: 'api' });

    const notFailed = await publishedReport();
    const ok = await app.request('POST', `/api/reporting/reports/${notFailed.id}/runs`, { token: runKey, body: { outputs: ['csv'] } });
    const done = await runEnded(ok.body.runId);
    expect(done).toMatchObject({ status: 'completed', formats: ['csv'], documentsCharged: 0 });
    const refused = await app.request('POST', `/api/reporting/runs/${done.id}/retry`, { token: runKey, body: {} });
    expect([refused.status, refused.body.code]).toEqual([409, 'ERR_RPT_010']);
  });

  it('cancels a run whose query is still running; a run that ended cannot be cancelled', async () => {
    const report = await publishedReport(`SELECT label, amount FROM ${table}, pg_sleep(30) WHERE amount >= {{ min }}`);
    const started = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: {} });
    // Active statements only: an idle pooled connection's last query (this very probe) holds the text too.
    const sleeping = async () =>
      (await app.services.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg\\_sleep(30)%' AND query NOT LIKE '%pg_stat_activity%'`))[0].n as number;
    await waitFor(async () => (await sleeping()) > 0, { timeoutMs: 60_000, what: 'the statement running in PostgreSQL' });
    expect((await getRun(started.body.runId)).body.datasets).toEqual([expect.objectContaining({ name: 'items', status: 'running' }), expect.objectContaining({ name: 'stats' })]);
    const cancelled = await app.request('POST', `/api/reporting/runs/${started.body.runId}/cancel`, { token: runKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', completedAt: expect.any(String) });
    // The database statement is cancelled with the activity: no backend keeps sleeping for it.
    // Well before the statement's own 30 s: the cancel reaches the query activity with its next heartbeat.
    await waitFor(async () => (await sleeping()) === 0, {
      timeoutMs: 15_000,
      what: 'the sleeping statement to end',
    });
    expect((await getRun(started.body.runId)).body).toMatchObject({ status: 'cancelled', outputs: [] });
    const again = await app.request('POST', `/api/reporting/runs/${started.body.runId}/cancel`, { token: runKey });
    expect([again.status, again.body.code, again.body.relatedInfo]).toEqual([409, 'ERR_RPT_008', { status: 'cancelled' }]);
  });

  it('previews the draft as a watermarked file without running, storing or charging anything', async () => {
    const report = await publishedReport();
    const quotaBefore = await app.services.db.query(`SELECT coalesce(sum(free_used), 0)::int AS n FROM document_quota_usage`);
    const pdf = await fetch(`${app.url}/api/reporting/reports/${report.id}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ parameters: { min: 10, customer: 'Initech' } }),
    });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const file = Buffer.from(await pdf.arrayBuffer());
    const text = await pdfText(file);
    expect(text).toContain('Dear Initech');
    expect(text).toContain('Apple');
    expect(text).not.toContain('HYPERLINK');
    // The watermark is drawn diagonally: content-stream order reads it in one piece.
    expect((await pdfText(file, { mode: 'raw' })).replace(/\s+/g, '')).toContain('FORMWORKFREE');

    const csv = await app.request('POST', `/api/reporting/reports/${report.id}/preview`, as({ body: { format: 'csv', dataset: 'stats' } }));
    expect([csv.status, csv.headers.get('content-type'), csv.text]).toEqual([200, 'text/csv; charset=utf-8', 'n,total\r\n3,22.75\r\n']);

    const noDataset = await app.request('POST', `/api/reporting/reports/${report.id}/preview`, as({ body: { format: 'csv', dataset: 'nope' } }));
    expect([noDataset.status, noDataset.body.code, noDataset.body.relatedInfo]).toEqual([400, 'ERR_VALID_001', { field: 'dataset', errors: [{ path: 'dataset', code: 'ERR_VALID_001', message: "The report has no dataset 'nope'" }] }]);
    const badValue = await app.request('POST', `/api/reporting/reports/${report.id}/preview`, as({ body: { parameters: { min: 'x' } } }));
    expect([badValue.status, badValue.body.code]).toEqual([400, 'ERR_RPT_007']);
    const byKey = await app.request('POST', `/api/reporting/reports/${report.id}/preview`, { token: runKey, body: {} });
    expect([byKey.status, byKey.body.code]).toEqual([403, 'ERR_AUTH_005']);

    expect((await app.services.db.query(`SELECT count(*)::int AS n FROM reporting_runs WHERE report_id = $1`, [report.id]))[0].n).toBe(0);
    expect(await app.services.db.query(`SELECT coalesce(sum(free_used), 0)::int AS n FROM document_quota_usage`)).toEqual(quotaBefore);
  });

  it('checks parameters and formats before queueing, and keeps every run to its project and its key flags', async () => {
    const report = await publishedReport();
    const bad = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { parameters: { min: 'lots' } } });
    expect([bad.status, bad.body.code, bad.body.relatedInfo?.field]).toEqual([400, 'ERR_RPT_007', 'min']);
    const unknown = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { parameters: { nope: 1 } } });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'ERR_RPT_007']);
    const extra = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { notes: 'x' } });
    expect([extra.status, extra.body.code]).toEqual([400, 'ERR_VALID_001']);
    const noChannel = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { channelIds: ['rch_unknown'] } });
    expect([noChannel.status, noChannel.body.code, noChannel.body.relatedInfo?.channelId]).toEqual([400, 'ERR_CHAN_002', 'rch_unknown']);
    const noVersion = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { version: 7 } });
    expect([noVersion.status, noVersion.body.code]).toEqual([404, 'ERR_RPT_002']);
    expect((await app.services.db.query(`SELECT count(*)::int AS n FROM reporting_runs WHERE report_id = $1`, [report.id]))[0].n).toBe(0);

    const readOnly = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: readKey, body: {} });
    expect([readOnly.status, readOnly.body.code]).toEqual([403, 'ERR_AUTH_005']);

    const started = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: runKey, body: { outputs: ['csv'] } });
    const run = await runEnded(started.body.runId);
    const outputId = run.outputs[0].id;

    const mallory = await signUp(app, { verified: true });
    const otherKey = (await createKey(app, mallory.accessToken, { name: 'other', permissions: { read_reports: true, run_reports: true } })).plainKey;
    const peeks = await Promise.all([
      app.request('GET', `/api/reporting/runs/${run.id}`, { token: otherKey }),
      app.request('GET', `/api/reporting/runs/${run.shortId}`, { token: otherKey }),
      app.request('POST', `/api/reporting/runs/${run.id}/cancel`, { token: otherKey }),
      app.request('POST', `/api/reporting/runs/${run.id}/retry`, { token: otherKey, body: {} }),
      app.request('GET', `/api/reporting/runs/${run.id}/outputs/${outputId}/download`, { token: otherKey }),
    ]);
    expect(peeks.map((r) => [r.status, r.body.code])).toEqual(Array(5).fill([404, 'ERR_RPT_009']));
    const foreignReport = await app.request('POST', `/api/reporting/reports/${report.id}/runs`, { token: otherKey, body: {} });
    expect([foreignReport.status, foreignReport.body.code]).toEqual([404, 'ERR_RPT_001']);
    expect((await app.request('GET', '/api/reporting/runs', { token: otherKey })).body.meta.total).toBe(0);
    const missingOutput = await app.request('GET', `/api/reporting/runs/${run.id}/outputs/${run.id}/download`, { token: readKey });
    expect([missingOutput.status, missingOutput.body.code]).toEqual([404, 'ERR_RPT_011']);

    // The export streams the project's runs only, as CSV (injection-guarded) or a JSON array.
    const csv = await app.request('GET', `/api/reporting/runs/export?format=csv&reportId=${report.id}`, { token: readKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="report-runs-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe('runId,shortId,reportId,reportVersion,trigger,status,failedStage,errorCode,errorMessage,formats,documentsCharged,parameters,metadata,createdAt,completedAt');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual([run.id]);
    const json = await app.request('GET', '/api/reporting/runs/export?format=json&status=completed', { token: readKey });
    expect(json.body.map((r: any) => r.runId)).toContain(run.id);
    expect(json.body.every((r: any) => r.status === 'completed')).toBe(true);
    expect((await app.request('GET', '/api/reporting/runs/export?format=json', { token: otherKey })).body).toEqual([]);
  });
});
