import { randomBytes, randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { MockActivityEnvironment } from '@temporalio/testing/lib/mocking-activity-environment';
import { activityInterceptors } from '../../../activities/failure';
import type { FinishRequest, PdfTools } from '../../../adapters/rendering/pdf-tools/pdf-tools';
import { createReportRenderActivities, type RenderedReportOutput, type RenderReportInput } from '../../../activities/reporting/render-report.activity';
import { datasetResultKey } from '../../../activities/reporting/run-direct-query.activity';
import { renderLimitsOf } from '../../../platform/services';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { squeezedText } from '../../support/rendering-pdf';
import { createTestDatasource } from '../../support/reporting';
import { createTemplate, personalProjectId, publish } from '../../support/templates';

/**
 * A report's pdf output takes the generation's `output` object (docs/documents.md "Output options",
 * "Quotas and the watermark on every output"): checked when the report is saved (400 ERR_VALID_001
 * naming `outputs.<i>.output.<field>`), and handed to the PDF tools with the printed (on the free
 * quota, watermarked) PDF when the run renders. The steps themselves are other tests' subject: here
 * the PDF tools are a recorder that answers the PDF it was given.
 */
describe('report outputs: the output object', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let projectId: string;
  let template: { id: string; version: number };
  let queryId: string;
  const table = `rpt_output_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    app = await startTestApp({ queues: ['main', 'egress'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    alice = await signUp(app, { verified: true });
    projectId = await personalProjectId(app, alice.id);
    const created = await createTemplate(app, alice.accessToken, { variables: [{ name: 'customer', type: 'string', required: false }, { name: 'items', type: 'array', required: false }] });
    template = { id: created.id, version: (await publish(app, alice.accessToken, created.id)).version };
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
    const ds = await createTestDatasource(app, alice.accessToken, `Warehouse ${table}`);
    const q = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: { name: `Items ${table}`, datasourceId: ds.id, text: `SELECT id, label FROM ${table}` } });
    expect(q.status).toBe(201);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, { token: alice.accessToken, body: {} })).status).toBe(201);
    queryId = q.body.id;
  });
  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
  });

  const body = (outputs: unknown[]) => ({ name: `Report ${randomBytes(3).toString('hex')}`, templateId: template.id, datasets: [{ name: 'items', queryId }], outputs });
  const create = (outputs: unknown[]) => app.request('POST', '/api/reporting/reports', { token: alice.accessToken, body: body(outputs) });

  it.each([
    ['an unknown PDF/A level', [{ format: 'pdf', output: { pdfa: '1a' } }], 'outputs.0.output.pdfa'],
    ['facturx with PDF/A-2', [{ format: 'pdf', output: { pdfa: '2b', facturx: { profile: 'EN16931' } } }], 'outputs.0.output.facturx'],
    ['facturx without pdfa', [{ format: 'pdf', output: { facturx: {} } }], 'outputs.0.output.facturx'],
    ['output on a csv output', [{ format: 'pdf' }, { format: 'csv', output: { pdfa: '3b' } }], 'outputs.1.output'],
    ['output on an excel output', [{ format: 'excel', output: { pdfa: '3b' } }], 'outputs.0.output'],
    ['a batch archive', [{ format: 'pdf', output: { archive: 'pdf' } }], 'outputs.0.output.archive'],
    ['encryption (a report keeps no passwords)', [{ format: 'pdf', output: { encryption: { ownerPassword: 'owner' } } }], 'outputs.0.output.encryption'],
  ])('refuses %s when saved: 400 ERR_VALID_001 naming the field', async (_what, outputs, field) => {
    const res = await create(outputs);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field } });
  });

  it('keeps a valid output on the pdf output, checks it again on an update, and publishes it with the version', async () => {
    const res = await create([{ format: 'pdf', output: { pdfa: '3b', attachments: [{ filename: 'terms.txt', content: Buffer.from('Net 30').toString('base64'), contentType: 'text/plain' }] } }, { format: 'csv' }]);
    expect(res.status).toBe(201);
    expect(res.body.outputs[0]).toMatchObject({ format: 'pdf', output: { pdfa: '3b', attachments: [{ filename: 'terms.txt', relationship: 'Supplement' }] } });
    const bad = await app.request('PUT', `/api/reporting/reports/${res.body.id}`, { token: alice.accessToken, body: { outputs: [{ format: 'pdf', output: { pdfa: '2b', attachments: [{ filename: 'x.txt', content: 'eA==' }] } }] } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'outputs.0.output.attachments' } });
    const published = await app.request('POST', `/api/reporting/reports/${res.body.id}/publish`, { token: alice.accessToken, body: {} });
    expect(published.status).toBe(201);
    const [version] = await app.services.db.query(`SELECT definition FROM reporting_report_versions WHERE report_id = $1`, [res.body.id]);
    expect(version.definition.outputs[0].output.pdfa).toBe('3b');
  });

  it('a run hands the pdf output\'s output to the PDF tools with the watermarked PDF; the excel output is not finished', async () => {
    const calls: Array<{ pdf: Buffer; request: FinishRequest }> = [];
    const recorder: PdfTools = {
      async finish(pdf, request) {
        calls.push({ pdf, request });
        return pdf;
      },
      toImages: () => Promise.reject(new Error('not used')),
      merge: () => Promise.reject(new Error('not used')),
      close: () => Promise.resolve(),
    };
    const reportId = randomUUID();
    const slug = `out-${randomBytes(3).toString('hex')}`;
    const definition = {
      templateId: template.id,
      templateVersion: template.version,
      datasets: [{ name: 'items', queryId: randomUUID(), queryVersion: 1, parameters: {}, shape: 'rows' }],
      parameters: [],
      outputs: [{ format: 'pdf', output: { pdfa: '3b', facturx: { profile: 'EN16931' } } }, { format: 'excel' }],
      filenamePattern: '{slug}',
      skipIfEmpty: false,
      useCredit: false,
    };
    await app.services.db.query(
      `INSERT INTO reporting_reports (id, project_id, short_id, slug, name, draft, is_published, latest_version, published_at) VALUES ($1, $2, $3, $4, $5, $6, true, 1, now())`,
      [reportId, projectId, `rpt_${randomBytes(8).toString('hex')}`, slug, `Output ${slug}`, JSON.stringify(definition)],
    );
    await app.services.db.query(`INSERT INTO reporting_report_versions (id, report_id, version, definition, draft, name) VALUES ($1, $2, 1, $3, $3, $4)`, [randomUUID(), reportId, JSON.stringify(definition), `Output ${slug}`]);
    const runId = randomUUID();
    const key = datasetResultKey(projectId, runId, 'items');
    await app.services.storage.put(key, gzipSync(`${JSON.stringify({ id: 1, label: 'Widget' })}\n`), 'application/gzip');
    const input: RenderReportInput = {
      projectId,
      runId,
      runShortId: `rrun_${randomBytes(8).toString('hex')}`,
      reportId,
      reportVersion: 1,
      parameters: {},
      scheduledFor: '2026-01-31T23:30:00Z',
      timezone: 'UTC',
      datasets: [{ name: 'items', key, rowCount: 1, columns: [{ name: 'id', dataType: 'int4' }, { name: 'label', dataType: 'text' }] }],
      formats: ['pdf', 'excel'],
      watermark: true,
    };
    const { services } = app;
    const activities = createReportRenderActivities({
      db: services.db,
      storage: services.storage,
      pdfRenderer: () => services.pdfRenderer,
      evaluator: services.evaluator,
      excelRenderer: services.excelRenderer,
      limits: renderLimitsOf(services.config),
      imageAllowlist: [],
      pdfTools: recorder,
    });
    const env = new MockActivityEnvironment(undefined, { interceptors: activityInterceptors().activity });
    const { outputs } = (await env.run(activities.renderReportOutputs, input)) as { outputs: RenderedReportOutput[] };
    expect(outputs.map((o) => o.format)).toEqual(['pdf', 'excel']);
    expect(calls).toHaveLength(1);
    expect(calls[0].request).toMatchObject({ output: { pdfa: '3b', facturx: { profile: 'EN16931' } }, title: slug });
    // The free quota's watermark is printed before the PDF is finished, so PDF/A and a signature cover it.
    expect(await squeezedText(calls[0].pdf)).toContain('FORMWORKFREE');
  });
});
