import { randomBytes, randomUUID } from 'node:crypto';
import { Transform } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing/lib/mocking-activity-environment';
import ExcelJS from 'exceljs';
import { activityInterceptors } from '../../../activities/failure';
import {
  createReportRenderActivities,
  type RenderedReportOutput,
  type RenderReportInput,
  type ReportRenderDeps,
} from '../../../activities/reporting/render-report.activity';
import { datasetResultKey } from '../../../activities/reporting/run-direct-query.activity';
import type { ArtefactStorage } from '../../../adapters/storage/storage';
import { startMetricsServer, type MetricsServer } from '../../../platform/metrics';
import { renderLimitsOf } from '../../../platform/services';
import { startTestApp, type TestApp } from '../../support/app';
import { sample } from '../../support/metrics';
import { signUp, type SignedUpUser } from '../../support/factories';
import { pdfText, squeezedText } from '../../support/rendering-pdf';
import { createTemplate, personalProjectId, publish } from '../../support/templates';

/**
 * The render step of a report run (docs/reporting.md "Report outputs"), called directly as an
 * activity: stored gzip NDJSON results → PDF (read back with pdftotext), Excel (re-read with
 * ExcelJS) and CSV (exact bytes) in local storage, on real Chromium and Postgres.
 */

type Columns = RenderReportInput['datasets'][number]['columns'];

const SALES_COLUMNS: Columns = [
  { name: 'region', dataType: 'text' },
  { name: 'units', dataType: 'int4' },
  { name: 'amount', dataType: 'numeric' },
];
const SALES = [
  { region: 'North', units: 3, amount: '12.50' },
  { region: 'South', units: 4, amount: '-7.25' },
  { region: 'West', units: 5, amount: '1000.00' },
];

describe('renderReportOutputs activity (render task queue)', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let projectId: string;
  let bobsProjectId: string;
  let template: { id: string; version: number };
  let deps: ReportRenderDeps;
  let metrics: MetricsServer | undefined;
  const env = () => new MockActivityEnvironment(undefined, { interceptors: activityInterceptors().activity });

  beforeAll(async () => {
    app = await startTestApp({ queues: ['main', 'egress'] });
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    projectId = await personalProjectId(app, alice.id);
    bobsProjectId = await personalProjectId(app, bob.id);
    const created = await createTemplate(app, alice.accessToken, {
      outputFormats: ['pdf', 'excel'],
      schema: {
        pageSize: 'A4',
        sections: [
          {
            id: 'main',
            components: [
              { id: 'h', type: 'heading', props: { text: 'Sales for {{region}}', level: 1 } },
              { id: 'k', type: 'text', props: { text: 'Total {{total}} / top {{top.region}}' } },
              { id: 't', type: 'table', props: { dataSource: 'sales', columns: [{ header: 'Region', field: 'region' }, { header: 'Units', field: 'units' }, { header: 'Amount', field: 'amount' }] } },
            ],
          },
        ],
      },
      variables: [
        { name: 'region', type: 'string', required: false },
        { name: 'total', type: 'number', required: false },
        { name: 'top', type: 'object', required: false },
        {
          name: 'sales',
          type: 'array',
          required: false,
          items: { type: 'object', properties: [{ name: 'region', type: 'string' }, { name: 'units', type: 'integer' }, { name: 'amount', type: 'number' }] },
        },
      ],
      constants: {},
      calculatedVariables: [],
    });
    template = { id: created.id, version: (await publish(app, alice.accessToken, created.id)).version };
    const { services } = app;
    deps = {
      db: services.db,
      storage: services.storage,
      pdfRenderer: () => services.pdfRenderer,
      evaluator: services.evaluator,
      excelRenderer: services.excelRenderer,
      limits: renderLimitsOf(services.config),
      imageAllowlist: [],
      resultMaxBytes: services.config.reporting.resultMaxBytes,
    };
    metrics = await startMetricsServer({ ...services, config: { metrics: { port: 0, host: '127.0.0.1' } } }, { global: false });
  });

  afterAll(async () => {
    await metrics?.close();
    await app?.close();
  });

  /** Workbooks the process's /metrics counted (formwork_render_duration_seconds, kind excel): streamed ones are timed like built ones. */
  const excelRenders = async (outcome: 'ok' | 'error') =>
    sample(await (await fetch(metrics!.url)).text(), 'formwork_render_duration_seconds_count', { kind: 'excel', outcome }) ?? 0;

  /** A report with one published version (rows written as the reports API would). */
  async function insertReport(definition: Record<string, unknown>, project = projectId): Promise<{ id: string; slug: string }> {
    const id = randomUUID();
    const slug = `sales-${randomBytes(3).toString('hex')}`;
    const full = {
      templateId: template.id,
      templateVersion: template.version,
      parameters: [{ name: 'region', type: 'string', required: false, multiple: false }],
      outputs: [{ format: 'pdf' }, { format: 'excel' }, { format: 'csv' }],
      filenamePattern: '{slug}-{param.region}-{scheduledFor:yyyy-MM-dd}',
      skipIfEmpty: false,
      useCredit: false,
      ...definition,
    };
    await app.services.db.query(
      `INSERT INTO reporting_reports (id, project_id, short_id, slug, name, draft, is_published, latest_version, published_at)
       VALUES ($1, $2, $3, $4, $5, $6, true, 1, now())`,
      [id, project, `rpt_${randomBytes(8).toString('hex')}`, slug, `Sales ${slug}`, JSON.stringify(full)],
    );
    await app.services.db.query(`INSERT INTO reporting_report_versions (id, report_id, version, definition, draft, name) VALUES ($1, $2, 1, $3, $3, $4)`, [
      randomUUID(),
      id,
      JSON.stringify(full),
      `Sales ${slug}`,
    ]);
    return { id, slug };
  }

  const dataset = (name: string, shape: 'rows' | 'first_row' | 'value', bindTo?: string) => ({ name, queryId: randomUUID(), queryVersion: 1, parameters: {}, shape, ...(bindTo ? { bindTo } : {}) });

  /** Stores a result exactly as runDirectQuery does: gzip NDJSON under the run's datasets/ folder. */
  async function storeResult(runId: string, name: string, rows: unknown[], columns: Columns) {
    const key = datasetResultKey(projectId, runId, name);
    await app.services.storage.put(key, gzipSync(rows.map((r) => `${JSON.stringify(r)}\n`).join('')), 'application/gzip');
    return { name, key, rowCount: rows.length, columns };
  }

  async function standardRun(report: { id: string }, overrides: Partial<RenderReportInput> = {}, rows: Array<Record<string, unknown>> = SALES): Promise<RenderReportInput> {
    const runId = overrides.runId ?? randomUUID();
    return {
      projectId,
      runId,
      runShortId: `rrun_${randomBytes(8).toString('hex')}`,
      reportId: report.id,
      reportVersion: 1,
      parameters: { region: 'EMEA' },
      scheduledFor: '2026-01-31T23:30:00Z',
      timezone: 'Europe/Berlin',
      datasets: [
        await storeResult(runId, 'sales', rows, SALES_COLUMNS),
        await storeResult(runId, 'kpi', rows.length ? [{ total: '1234.50', n: rows.length }] : [], [{ name: 'total', dataType: 'numeric' }, { name: 'n', dataType: 'int8' }]),
        await storeResult(runId, 'best', rows.slice().reverse(), SALES_COLUMNS),
      ],
      formats: ['pdf', 'excel', 'csv'],
      watermark: false,
      ...overrides,
    };
  }

  const STANDARD = { datasets: [dataset('sales', 'rows'), dataset('kpi', 'value', 'total'), dataset('best', 'first_row', 'top')], outputs: [{ format: 'pdf' }, { format: 'excel' }, { format: 'csv', datasets: ['sales'] }] };

  const run = (input: RenderReportInput, activities = createReportRenderActivities(deps)) =>
    env().run(activities.renderReportOutputs, input) as Promise<{ outputs: RenderedReportOutput[] }>;

  async function failure(input: RenderReportInput, activities = createReportRenderActivities(deps)): Promise<ApplicationFailure> {
    const err = await run(input, activities).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  async function stored(key: string): Promise<Buffer> {
    const { body } = await app.services.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  it('renders PDF, Excel and CSV from the stored results: rows, first_row and value bound, file names from the pattern', async () => {
    const report = await insertReport(STANDARD);
    const input = await standardRun(report);
    const { outputs } = await run(input);
    const base = `${report.slug}-EMEA-2026-02-01`;
    const folder = `reporting/${projectId}/runs/${input.runId}/outputs/`;
    expect(outputs).toEqual([
      { format: 'pdf', filename: `${base}.pdf`, key: `${folder}${base}.pdf`, contentType: 'application/pdf', bytes: expect.any(Number), pageCount: 1 },
      { format: 'excel', filename: `${base}.xlsx`, key: `${folder}${base}.xlsx`, contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', bytes: expect.any(Number) },
      { format: 'csv', dataset: 'sales', filename: `${base}.csv`, key: `${folder}${base}.csv`, contentType: 'text/csv; charset=utf-8', bytes: expect.any(Number), rowCount: 3 },
    ]);

    const pdf = await stored(outputs[0].key);
    expect(pdf.length).toBe(outputs[0].bytes);
    const text = (await pdfText(pdf)).replace(/\s+/g, ' ');
    expect(text).toContain('Sales for EMEA');
    expect(text).toContain('Total 1234.5 / top West');
    expect(text).toMatch(/North 3 12\.5 South 4 -7\.25 West 5 1000/);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await stored(outputs[1].key)) as unknown as ExcelJS.Buffer);
    const cells: Record<string, ExcelJS.Cell[]> = {};
    wb.worksheets[0].eachRow((row) => {
      const first = row.getCell(1).value;
      if (typeof first === 'string') cells[first] = [1, 2, 3].map((i) => row.getCell(i));
    });
    expect(cells.North.map((c) => c.value)).toEqual(['North', 3, 12.5]);
    expect(cells.South.map((c) => c.value)).toEqual(['South', 4, -7.25]);
    expect(cells.South[2].type).toBe(ExcelJS.ValueType.Number); // the numeric column came as the string "-7.25"
    expect(cells.West[2].value).toBe(1000);

    expect((await stored(outputs[2].key)).toString('utf8')).toBe('region,units,amount\r\nNorth,3,12.50\r\nSouth,4,-7.25\r\nWest,5,1000.00\r\n');
  });

  it('writes CSV by RFC 4180 with CRLF, no BOM, formula injection guarded, one file per dataset', async () => {
    const report = await insertReport({ ...STANDARD, outputs: [{ format: 'csv' }] });
    const hostile = [
      { region: '=SUM(A1:A9)', units: -5, amount: '-12.50' },
      { region: 'a,b "quoted"', units: null, amount: null },
      { region: 'two\r\nlines', units: 0, amount: '0.00' },
      { region: '@cmd', units: 1, amount: '1' },
      { region: '+1', units: 2, amount: '2' },
      { region: '-2', units: 3, amount: '3' },
      { region: '\tTab', units: 4, amount: '4' },
      { region: 'Zürich ✓', units: 5, amount: '5' },
    ];
    const input = await standardRun(report, { formats: ['csv'] }, hostile);
    const { outputs } = await run(input);
    const base = `${report.slug}-EMEA-2026-02-01`;
    expect(outputs.map((o) => [o.dataset, o.filename, o.rowCount])).toEqual([
      ['sales', `${base}-sales.csv`, 8],
      ['kpi', `${base}-kpi.csv`, 1],
      ['best', `${base}-best.csv`, 8],
    ]);
    const sales = await stored(outputs[0].key);
    expect(sales.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
    expect(sales.length).toBe(outputs[0].bytes);
    expect(sales.toString('utf8')).toBe(
      [
        'region,units,amount',
        "'=SUM(A1:A9),-5,-12.50",
        '"a,b ""quoted""",,',
        '"two\r\nlines",0,0.00',
        "'@cmd,1,1",
        "'+1,2,2",
        "'-2,3,3",
        "'\tTab,4,4",
        'Zürich ✓,5,5',
        '',
      ].join('\r\n'),
    );
    expect((await stored(outputs[1].key)).toString('utf8')).toBe('total,n\r\n1234.50,8\r\n');
  });

  it('an empty dataset: the PDF renders without rows, first_row and value are null, the CSV is its header', async () => {
    const report = await insertReport(STANDARD);
    const input = await standardRun(report, {}, []);
    const { outputs } = await run(input);
    const text = (await pdfText(await stored(outputs[0].key))).replace(/\s+/g, ' ');
    expect(text).toContain('Sales for EMEA');
    expect(text).toContain('Region Units Amount');
    expect(text).not.toContain('North');
    expect(text).not.toMatch(/Total \d/);
    expect(outputs[2]).toMatchObject({ format: 'csv', rowCount: 0 });
    expect((await stored(outputs[2].key)).toString('utf8')).toBe('region,units,amount\r\n');
  });

  it('free-quota outputs carry the watermark; paid ones do not', async () => {
    const report = await insertReport(STANDARD);
    const free = await run(await standardRun(report, { formats: ['pdf'], watermark: true }));
    const paid = await run(await standardRun(report, { formats: ['pdf'], watermark: false }));
    expect(await squeezedText(await stored(free.outputs[0].key))).toContain('FORMWORKFREE');
    expect(await squeezedText(await stored(paid.outputs[0].key))).not.toContain('FORMWORKFREE');
  });

  it('a retried attempt writes the same keys again', async () => {
    const report = await insertReport({ ...STANDARD, outputs: [{ format: 'csv', datasets: ['sales'] }] });
    const input = await standardRun(report, { formats: ['csv'] });
    const first = await run(input);
    const again = await run(input);
    expect(again.outputs.map((o) => o.key)).toEqual(first.outputs.map((o) => o.key));
    expect((await stored(again.outputs[0].key)).toString('utf8')).toBe('region,units,amount\r\nNorth,3,12.50\r\nSouth,4,-7.25\r\nWest,5,1000.00\r\n');
  });

  it('streams a large CSV into storage (20,000 rows, a 1 MB cell) without holding the file', async () => {
    const report = await insertReport({ ...STANDARD, outputs: [{ format: 'csv', datasets: ['sales'] }] });
    const big = 'x'.repeat(1024 * 1024);
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ region: i === 10 ? big : `r${i}`, units: i, amount: `${i}.10` }));
    const input = await standardRun(report, { formats: ['csv'] }, rows);
    // A storage that records how it was given the file: a stream, in chunks.
    const chunkSizes: number[] = [];
    let bodyWasBuffer = false;
    const real = app.services.storage;
    const recording: ArtefactStorage = {
      put(key, body, contentType) {
        if (Buffer.isBuffer(body)) {
          bodyWasBuffer = true;
          return real.put(key, body, contentType);
        }
        const counter = new Transform({
          transform(chunk: Buffer, _enc, done) {
            chunkSizes.push(chunk.length);
            done(null, chunk);
          },
        });
        body.on('error', (e) => counter.destroy(e));
        return real.put(key, body.pipe(counter), contentType);
      },
      get: (key) => real.get(key),
      delete: (key) => real.delete(key),
      exists: (key) => real.exists(key),
      signedUrl: (key, options) => real.signedUrl(key, options),
      check: () => real.check(),
    };
    const { outputs } = await run(input, createReportRenderActivities({ ...deps, storage: recording }));
    expect(bodyWasBuffer).toBe(false);
    expect(outputs[0].rowCount).toBe(20_000);
    const file = await stored(outputs[0].key);
    expect(file.length).toBe(outputs[0].bytes);
    expect(file.length).toBeGreaterThan(big.length + 20_000 * 10);
    expect(chunkSizes.reduce((a, b) => a + b, 0)).toBe(file.length);
    // Rows gathered into writes of about 64 KB (not one write per row), never the file in one piece.
    expect(chunkSizes.length).toBeGreaterThan(5);
    expect(Math.max(...chunkSizes)).toBeLessThanOrEqual(64 * 1024 + big.length + 100);
    const lines = file.toString('utf8').split('\r\n');
    expect(lines).toHaveLength(20_002);
    expect(lines[11]).toBe(`${big},10,10.10`);
    expect(lines[20_000]).toBe('r19999,19999,19999.10');
  });

  it('refuses a stored result over REPORTING_RESULT_MAX_BYTES uncompressed (a gzip bomb is not inflated)', async () => {
    const report = await insertReport({ ...STANDARD, outputs: [{ format: 'csv', datasets: ['sales'] }] });
    const input = await standardRun(report, { formats: ['csv'] });
    // 64 MB of one row's text compresses to ~64 KB; it replaces the stored result of `sales`.
    const bomb = gzipSync(Buffer.from(`${JSON.stringify({ region: 'a'.repeat(64 * 1024 * 1024) })}\n`));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    await app.services.storage.put(input.datasets[0].key, bomb, 'application/gzip');
    const err = await failure(input, createReportRenderActivities({ ...deps, resultMaxBytes: 1024 * 1024 }));
    expect(err.type).toBe('ERR_QRY_010');
    expect(err.nonRetryable).toBe(true);
  });

  it('render limits stop PDF and Excel outputs with their non-retryable codes', async () => {
    const report = await insertReport(STANDARD);
    const rows = Array.from({ length: 300 }, (_, i) => ({ region: `r${i}`, units: i, amount: `${i}.50` }));
    const small = createReportRenderActivities({ ...deps, limits: { ...deps.limits, maxPdfPages: 1, maxExcelRows: 100 } });
    const pdf = await failure(await standardRun(report, { formats: ['pdf'] }, rows), small);
    expect([pdf.type, pdf.nonRetryable]).toEqual(['ERR_LIMIT_001', true]);
    const excel = await failure(await standardRun(report, { formats: ['excel'] }, rows), small);
    expect([excel.type, excel.nonRetryable]).toEqual(['ERR_LIMIT_003', true]);
  });

  it('streams a table-only Excel output: rows read from the stored result in batches, the workbook stored as it is made; a refused workbook stores nothing', async () => {
    const [okBefore, errorsBefore] = [await excelRenders('ok'), await excelRenders('error')];
    const report = await insertReport(STANDARD);
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ region: i === 7 ? '=HYPERLINK("http://evil")' : `r${i}`, units: i, amount: `${i}.25` }));
    const puts: Array<{ key: string; streamed: boolean }> = [];
    const real = app.services.storage;
    const recording: ArtefactStorage = {
      put(key, body, contentType) {
        puts.push({ key, streamed: !Buffer.isBuffer(body) });
        return real.put(key, body, contentType);
      },
      get: (key) => real.get(key),
      delete: (key) => real.delete(key),
      exists: (key) => real.exists(key),
      signedUrl: (key, options) => real.signedUrl(key, options),
      check: () => real.check(),
    };
    const input = await standardRun(report, { formats: ['excel'] }, rows);
    const { outputs } = await run(input, createReportRenderActivities({ ...deps, storage: recording, maxRows: 10_000 }));
    expect(puts).toEqual([{ key: outputs[0].key, streamed: true }]);
    const file = await stored(outputs[0].key);
    expect(file.length).toBe(outputs[0].bytes);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(file as unknown as ArrayBuffer);
    const ws = wb.worksheets[0];
    expect(ws.getRow(1).getCell(1).value).toBe('Sales for EMEA');
    const header = ws.getRow(3);
    expect((header.values as unknown[]).slice(1)).toEqual(['Region', 'Units', 'Amount']);
    const tables = ws.getTables() as unknown as Array<{ table: { name: string; tableRef: string } }>;
    expect(tables.map((t) => t.table)).toEqual([expect.objectContaining({ name: 'T_t', tableRef: 'A3:C5003' })]);
    expect(ws.getRow(4 + 4_999).getCell(1).value).toBe('r4999');
    expect(ws.getRow(4 + 4_999).getCell(3).value).toBe(4999.25);
    expect(ws.getRow(4 + 4_999).getCell(3).type).toBe(ExcelJS.ValueType.Number);
    // A formula-looking text stays text: no cell of the workbook is a formula.
    expect(ws.getRow(4 + 7).getCell(1).value).toBe('=HYPERLINK("http://evil")');
    expect(ws.getRow(4 + 7).getCell(1).type).toBe(ExcelJS.ValueType.String);
    expect(ws.getColumn(1).width).toBe('=HYPERLINK("http://evil")'.length + 2);
    expect(await excelRenders('ok')).toBe(okBefore + 1);

    // Over the row limit: refused before a byte is written, and no file under the key.
    const refused = await standardRun(report, { formats: ['excel'] }, rows);
    const err = await failure(refused, createReportRenderActivities({ ...deps, limits: { ...deps.limits, maxExcelRows: 4_000 }, maxRows: 10_000 }));
    expect(err.type).toBe('ERR_LIMIT_003');
    expect(await real.exists(outputs[0].key.replace(input.runId, refused.runId))).toBe(false);
    // Over the output limit mid-stream (ERR_LIMIT_011): the partial upload is discarded.
    const big = await standardRun(report, { formats: ['excel'] }, rows);
    const tooBig = await failure(big, createReportRenderActivities({ ...deps, limits: { ...deps.limits, maxOutputBytes: 20_000 }, maxRows: 10_000 }));
    expect(tooBig.type).toBe('ERR_LIMIT_011');
    expect(await real.exists(outputs[0].key.replace(input.runId, big.runId))).toBe(false);
    // Both refusals ended a workbook's thread work in an error: the row limit and the output limit.
    expect(await excelRenders('error')).toBe(errorsBefore + 2);
  });

  it('fills an Excel table with every row up to REPORTING_MAX_ROWS, past the loop budget templates get (LOOP_MAX_ITERATIONS)', async () => {
    const report = await insertReport(STANDARD);
    const rows = Array.from({ length: 300 }, (_, i) => ({ region: `r${i}`, units: i, amount: `${i}.50` }));
    const input = await standardRun(report, { formats: ['excel'] }, rows);
    const loops = { ...deps.limits, maxLoopIterations: 100 };
    const capped = await failure(input, createReportRenderActivities({ ...deps, limits: loops }));
    expect([capped.type, capped.nonRetryable]).toEqual(['ERR_LIMIT_007', true]);
    const { outputs } = await run(input, createReportRenderActivities({ ...deps, limits: loops, maxRows: 1000 }));
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await stored(outputs[0].key)) as unknown as ArrayBuffer);
    const values: unknown[] = [];
    wb.eachSheet((sheet) => sheet.eachRow((row) => row.eachCell((cell) => void values.push(cell.value))));
    expect(values).toEqual(expect.arrayContaining(['r0', 'r299', 299.5]));
  });

  it('answers ERR_RPT_002 for an unknown version or another project, ERR_TMPL_013 for a missing template version, ERR_VALID_001 for a result outside the run', async () => {
    const report = await insertReport(STANDARD);
    const input = await standardRun(report);
    expect((await failure({ ...input, reportVersion: 2 })).type).toBe('ERR_RPT_002');
    expect((await failure({ ...input, projectId: bobsProjectId })).type).toBe('ERR_RPT_002');
    const orphan = await insertReport({ ...STANDARD, templateVersion: 99 });
    const err = await failure({ ...input, reportId: orphan.id });
    expect(err.type).toBe('ERR_TMPL_013');
    expect(err.nonRetryable).toBe(true);
    const elsewhere = { ...input, datasets: [{ ...input.datasets[0], key: datasetResultKey(projectId, randomUUID(), 'sales') }, ...input.datasets.slice(1)] };
    expect((await failure(elsewhere)).type).toBe('ERR_VALID_001');
  });
});
