import ExcelJS from 'exceljs';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { pdfText, squeezedText } from '../../support/rendering-pdf';
import { createTemplate } from '../../support/templates';

describe('document generation', () => {
  let app: TestApp;
  let p: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp();
    p = await setupDocumentProject(app);
  });
  afterAll(() => app.close());

  const generate = (body: Record<string, unknown>, token = p.apiKey, path = '/api/documents/generate') => app.request('POST', path, { token, body });
  const letter = (customer: string) => ({ customer, items: [{ label: 'Consulting', amount: 1200 }, { label: 'Travel', amount: 80.5 }] });

  it('accepts a request at once, renders it on Temporal and offers a signed download', async () => {
    const res = await generate({ templateId: p.templateId, format: 'pdf', variables: letter('Zoë Ångström'), filename: 'letter-42', metadata: { orderId: 'A-42', priority: 2 } });
    // A created resource: 201 (the spec lists no 202) with Location at the job's GET URL.
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${app.url}/api/documents/jobs/${res.body.jobId}`);
    expect((await app.request('GET', new URL(res.headers.get('location')!).pathname, { token: p.apiKey })).body.jobId).toBe(res.body.jobId);
    expect(res.body).toEqual({
      jobId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'queued',
      statusUrl: `${app.url}/api/documents/jobs/${res.body.jobId}`,
      estimatedWaitSeconds: expect.any(Number),
    });
    expect(res.body.estimatedWaitSeconds).toBeGreaterThanOrEqual(1);

    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job).toMatchObject({ jobId: res.body.jobId, status: 'completed', format: 'pdf', templateId: p.templateId, templateVersion: 1, metadata: { orderId: 'A-42', priority: 2 }, watermarked: true });
    expect(new Date(job.expiresAt).getTime()).toBeGreaterThan(Date.now());

    const file = await download(job.downloadUrl);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toContain('letter-42.pdf');
    const text = await pdfText(file.body);
    expect(text).toContain('Dear Zoë Ångström');
    expect(text).toContain('Consulting');
    expect(text).toContain('total 1280.5');
    expect(text).toContain('1,200');
    expect(await squeezedText(file.body)).toContain('FORMWORKFREE');
  });

  it('does not double the extension of a filename given with it: a.pdf stays a.pdf', async () => {
    const cases: Array<[string, string, string]> = [
      ['a.pdf', 'pdf', 'a.pdf'],
      ['Q3 Report.XLSX', 'excel', 'Q3 Report.XLSX'],
      // Another format's extension is part of the name.
      ['notes.xlsx', 'pdf', 'notes.xlsx.pdf'],
    ];
    const jobs = await Promise.all(cases.map(([filename, format]) => generate({ templateId: p.templateId, format, variables: letter('Named'), filename })));
    for (const [i, [filename, , saved]] of cases.entries()) {
      expect(jobs[i].status).toBe(201);
      const job = await waitForJob(app, p.apiKey, jobs[i].body.jobId);
      expect(job).toMatchObject({ status: 'completed', filename });
      const file = await download(job.downloadUrl);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-disposition')).toBe(`attachment; filename="${saved}"; filename*=UTF-8''${encodeURIComponent(saved)}`);
    }
  });

  it('creates a batch with 201 and Location at its GET URL; an unknown template is 404 ERR_TMPL_002 and records nothing', async () => {
    const documents = [{ variables: letter('Batch A') }, { variables: letter('Batch B') }];
    const res = await generate({ templateId: p.templateSlug, format: 'excel', documents }, p.apiKey, '/api/documents/generate/batch');
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${app.url}/api/documents/batches/${res.body.batchId}`);
    const batch = await app.request('GET', `/api/documents/batches/${res.body.batchId}`, { token: p.apiKey });
    expect(batch.body).toMatchObject({ batchId: res.body.batchId, totalJobs: 2 });

    const before = await app.services.db.query(`SELECT count(*)::int AS n FROM document_batches`);
    for (const templateId of ['no-such-template', 'etpl_nosuchtemplate', '00000000-0000-4000-8000-000000000000']) {
      const unknown = await generate({ templateId, format: 'excel', documents }, p.apiKey, '/api/documents/generate/batch');
      expect([templateId, unknown.status, unknown.body.code]).toEqual([templateId, 404, 'ERR_TMPL_002']);
    }
    expect(await app.services.db.query(`SELECT count(*)::int AS n FROM document_batches`)).toEqual(before);
  });

  it('finds the template by slug and renders Excel with typed cells', async () => {
    const res = await generate({ templateId: p.templateSlug, format: 'excel', variables: letter('Excel Inc') });
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job.status).toBe('completed');
    const file = await download(job.downloadUrl);
    expect(file.headers.get('content-type')).toContain('spreadsheetml');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(file.body as unknown as ArrayBuffer);
    const cells = wb.worksheets.flatMap((ws) => ws.getSheetValues().flat());
    expect(cells).toContain(1200);
    expect(cells).toContain('Consulting');
  });

  it('answers on the /api/v1 alias too', async () => {
    const res = await generate({ templateId: p.templateId, format: 'pdf', variables: letter('V1') }, p.apiKey, '/api/v1/documents/generate');
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${app.url}/api/documents/jobs/${res.body.jobId}`);
    const job = await app.request('GET', `/api/v1/documents/jobs/${res.body.jobId}`, { token: p.apiKey });
    expect(job.status).toBe(200);
  });

  it('refuses bad input with the spec codes and records nothing', async () => {
    const before = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs`);
    const cases: Array<[Record<string, unknown>, number, string, unknown?]> = [
      [{ templateId: p.templateId, format: 'pdf', variables: {} }, 400, 'ERR_VALID_005', { field: 'customer' }],
      [{ templateId: p.templateId, format: 'pdf', variables: { customer: 'x', items: 'not a list' } }, 400, 'ERR_VALID_002'],
      [{ templateId: p.templateId, format: 'word', variables: { customer: 'x' } }, 400, 'ERR_VALID_001', { field: 'format' }],
      // Generation's own code for an unknown template (spec): ERR_TMPL_002, not the template API's ERR_TMPL_001.
      [{ templateId: 'no-such-template', format: 'pdf', variables: { customer: 'x' } }, 404, 'ERR_TMPL_002', { templateId: 'no-such-template' }],
      [{ templateId: 'etpl_nosuchtemplate', format: 'pdf', variables: { customer: 'x' } }, 404, 'ERR_TMPL_002'],
      [{ templateId: '00000000-0000-4000-8000-000000000000', format: 'pdf', variables: { customer: 'x' } }, 404, 'ERR_TMPL_002'],
      [{ templateId: "x' OR '1'='1", format: 'pdf', variables: { customer: 'x' } }, 404, 'ERR_TMPL_002'],
      [{ templateId: p.templateId, format: 'pdf', variables: { customer: 'x' }, metadata: { nested: { a: 1 } } }, 400, 'ERR_VALID_001', { field: 'metadata.nested' }],
      [{ templateId: p.templateId, format: 'pdf', variables: { customer: 'x' }, metadata: { big: 'x'.repeat(11 * 1024) } }, 400, 'ERR_VALID_001', { field: 'metadata' }],
      [{ templateId: p.templateId, format: 'pdf', variables: { customer: 'x' }, filename: 'a/b' }, 400, 'ERR_VALID_001', { field: 'filename' }],
    ];
    for (const [body, status, code, info] of cases) {
      const res = await generate(body);
      expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
      if (info) expect(res.body.relatedInfo).toMatchObject(info as object);
    }
    const after = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs`);
    expect(after[0].n).toBe(before[0].n);
  });

  it('refuses a template never published (422) and a format it does not render to', async () => {
    const draft = await createTemplate(app, p.user.accessToken);
    const unpublished = await generate({ templateId: draft.id, format: 'pdf', variables: { customer: 'x' } });
    expect(unpublished.status).toBe(422);
    expect(unpublished.body.code).toBe('ERR_TMPL_021');

    const pdfOnly = await createTemplate(app, p.user.accessToken, { outputFormats: ['pdf'] });
    await app.request('POST', `/api/templates/${pdfOnly.id}/publish`, { token: p.user.accessToken, body: {} });
    const excel = await generate({ templateId: pdfOnly.id, format: 'excel', variables: { customer: 'x' } });
    expect(excel.status).toBe(400);
    expect(excel.body).toMatchObject({ code: 'ERR_TMPL_009', relatedInfo: { field: 'format', allowed: ['pdf'] } });
  });

  it('checks the key permissions: generate_documents to generate, read_documents to read', async () => {
    const readOnly = await createKey(app, p.user.accessToken, { name: 'reader', permissions: { read_documents: true } });
    const denied = await generate({ templateId: p.templateId, format: 'pdf', variables: { customer: 'x' } }, readOnly.plainKey);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'generate_documents', granted: 'read_documents' } });

    const writer = await createKey(app, p.user.accessToken, { name: 'writer', permissions: { generate_documents: true } });
    const ok = await generate({ templateId: p.templateId, format: 'pdf', variables: { customer: 'x' } }, writer.plainKey);
    expect(ok.status).toBe(201);
    const read = await app.request('GET', `/api/documents/jobs/${ok.body.jobId}`, { token: writer.plainKey });
    expect(read.status).toBe(403);
    expect(read.body.relatedInfo.required).toBe('read_documents');
    expect((await app.request('GET', `/api/documents/jobs/${ok.body.jobId}`, { token: readOnly.plainKey })).status).toBe(200);
  });

  it('keeps projects apart: another project cannot see or touch a job', async () => {
    const res = await generate({ templateId: p.templateId, format: 'pdf', variables: { customer: 'mine' } });
    const other = await setupDocumentProject(app);
    for (const [method, path] of [
      ['GET', `/api/documents/jobs/${res.body.jobId}`],
      ['POST', `/api/documents/jobs/${res.body.jobId}/cancel`],
      ['POST', `/api/documents/jobs/${res.body.jobId}/retry`],
      ['DELETE', `/api/documents/jobs/${res.body.jobId}`],
    ] as const) {
      const r = await app.request(method, path, { token: other.apiKey });
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 404, code: 'ERR_JOB_001' });
    }
    const list = await app.request('GET', '/api/documents/jobs', { token: other.apiKey });
    expect(list.body.jobs.map((j: any) => j.jobId)).not.toContain(res.body.jobId);
    const template = await generate({ templateId: p.templateId, format: 'pdf', variables: { customer: 'x' } }, other.apiKey);
    expect(template.status).toBe(404);
    expect(template.body.code).toBe('ERR_TMPL_002');
    expect((await app.request('GET', '/api/documents/jobs/not-a-uuid', { token: other.apiKey })).body.code).toBe('ERR_JOB_001');
  });

  it('counts documents generated on the API key', async () => {
    const key = await createKey(app, p.user.accessToken, { name: 'counted' });
    const res = await generate({ templateId: p.templateId, format: 'excel', variables: { customer: 'count me' } }, key.plainKey);
    await waitForJob(app, key.plainKey, res.body.jobId);
    const stats = await app.request('GET', `/api/api-keys/${key.id}/stats`, { token: p.user.accessToken });
    expect(stats.body.documentsGenerated).toBe(1);
  });

  it('lets a signed-in member generate too, and a viewer only read', async () => {
    const res = await generate({ templateId: p.templateId, format: 'excel', variables: { customer: 'from the dashboard' } }, p.user.accessToken);
    expect(res.status).toBe(201);
    expect((await app.request('GET', `/api/documents/jobs/${res.body.jobId}`, { token: p.user.accessToken })).status).toBe(200);
  });
});
