import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { pdfInfo, pdfText } from '../../support/rendering-pdf';
import { blankPdf, postMerge, qpdfOutline, textPdf } from '../../support/pdf-parts';
import { requiresPassword, showEncryption, textWith } from '../../support/output-files';

/** POST /api/documents/merge (docs/documents.md "Merging and appended PDFs"). */
describe('merging documents', () => {
  let app: TestApp;
  let p: DocumentProject;
  let other: DocumentProject;
  /** A completed PDF job of `p` and its page count. */
  let letter: { jobId: string; pages: number };
  beforeAll(async () => {
    app = await startTestApp();
    [p, other] = await Promise.all([setupDocumentProject(app), setupDocumentProject(app)]);
    const res = await app.request('POST', '/api/documents/generate', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'pdf', variables: { customer: 'Ada', items: [{ label: 'Consulting', amount: 10 }] }, filename: 'letter-to-ada' },
    });
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job.status).toBe('completed');
    letter = { jobId: job.jobId, pages: (await pdfInfo((await download(job.downloadUrl)).body)).pages };
  });
  afterAll(() => app.close());

  const mergeJson = (body: unknown, token = p.apiKey, path = '/api/documents/merge') => app.request('POST', path, { token, body });
  const jobCount = async () => (await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE kind = 'merge'`))[0].n as number;

  it('joins a job and uploaded PDFs in order: a bookmark per part, each part\'s page labels kept, one document of the quota', async () => {
    const quotaBefore = (await app.request('GET', '/api/documents/quota', { token: p.apiKey })).body.freeDocuments.used;
    const roman = await textPdf('Preface', 3, { style: 'r' });
    const terms = await textPdf('Terms', 2);
    const res = await postMerge(app, p.apiKey, { parts: [{ upload: 1, title: 'Foreword' }, { jobId: letter.jobId }, { upload: 0 }], filename: 'bundle' }, [{ body: terms }, { body: roman }]);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${app.url}/api/documents/jobs/${res.body.jobId}`);
    expect(res.body).toEqual({ jobId: expect.any(String), status: 'queued', statusUrl: `${app.url}/api/documents/jobs/${res.body.jobId}`, estimatedWaitSeconds: expect.any(Number) });
    expect((await app.request('GET', '/api/documents/quota', { token: p.apiKey })).body.freeDocuments.used).toBe(quotaBefore + 1);

    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    await app.services.temporal.workflow.getHandle(job.jobId).result();
    expect(job).toMatchObject({ status: 'completed', format: 'pdf', kind: 'merge', templateId: null, templateVersion: null, filename: 'bundle', watermarked: true });
    const file = await download(job.downloadUrl);
    expect(file.headers.get('content-disposition')).toContain('bundle.pdf');
    const total = 3 + letter.pages + 2;
    expect((await pdfInfo(file.body)).pages).toBe(total);
    const { outlines, labels } = await qpdfOutline(file.body);
    // Titles: the part's own, else the job's filename, else "Part n".
    expect(outlines).toEqual([
      { title: 'Foreword', page: 1 },
      { title: 'letter-to-ada', page: 4 },
      { title: 'Part 3', page: 4 + letter.pages },
    ]);
    expect(labels).toEqual(['i', 'ii', 'iii', ...Array.from({ length: letter.pages }, (_, i) => String(i + 1)), '1', '2']);
    const text = await pdfText(file.body);
    expect(text.indexOf('Preface page 3')).toBeLessThan(text.indexOf('Dear Ada'));
    expect(text.indexOf('Dear Ada')).toBeLessThan(text.indexOf('Terms page 1'));
    // The free plan's mark, as on a rendered free document.
    expect((await pdfText(file.body, { page: 1, mode: 'raw' })).replace(/\s/g, '')).toContain('FORMWORKFREE');

    // The uploads were kept only until the merge ended.
    expect(await app.services.storage.exists(`merge-uploads/${p.projectId}/${job.jobId}/0.pdf`)).toBe(false);
  });

  it('takes JSON alone when every part is a job, under /api/v1 too; a merge job is listed and exported like any job', async () => {
    const res = await mergeJson({ parts: [{ jobId: letter.jobId, title: 'First' }, { jobId: letter.jobId, title: 'Second' }] }, p.apiKey, '/api/v1/documents/merge');
    expect(res.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job.status).toBe('completed');
    const file = (await download(job.downloadUrl)).body;
    expect((await qpdfOutline(file)).outlines).toEqual([
      { title: 'First', page: 1 },
      { title: 'Second', page: 1 + letter.pages },
    ]);

    const list = await app.request('GET', '/api/documents/jobs?limit=100', { token: p.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.jobs.find((j: any) => j.jobId === job.jobId)).toMatchObject({ kind: 'merge', templateId: null, templateVersion: null, status: 'completed' });
    const csv = await app.request('GET', '/api/documents/jobs/export?format=csv', { token: p.apiKey });
    expect(csv.status).toBe(200);
    const row = csv.text.split('\n').find((l) => l.startsWith(job.jobId));
    expect(row).toMatch(new RegExp(`^${job.jobId},completed,pdf,,,`));
    const analytics = await app.request('GET', '/api/documents/analytics', { token: p.apiKey });
    expect(analytics.status).toBe(200);
    expect(analytics.body.byTemplate).toEqual(expect.arrayContaining([expect.objectContaining({ templateId: null })]));
  });

  it('finishes a merge as `output` asks, like a generation: encrypted with AES-256, readable with the password only', async () => {
    const res = await postMerge(app, p.apiKey, { parts: [{ jobId: letter.jobId }, { upload: 0 }], output: { encryption: { userPassword: 'merge-user', ownerPassword: 'merge-owner', permissions: { print: true, copy: false, modify: false } } } }, [
      { body: await textPdf('Annex', 1) },
    ]);
    expect(res.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', output: { encryption: { ownerPassword: { set: true }, userPassword: { set: true } } } });
    const pdf = (await download(job.downloadUrl)).body;
    expect(await requiresPassword(pdf)).toBe(0);
    const shown = await showEncryption(pdf, 'merge-user');
    expect(shown.stdout).toMatch(/^R = 6$/m);
    expect(shown.stdout).toContain('extract for any purpose: not allowed');
    expect((await textWith(pdf)).stdout).not.toContain('Annex');
    const read = await textWith(pdf, { user: 'merge-user' });
    expect(read.stdout).toContain('Dear Ada');
    expect(read.stdout).toContain('Annex page 1');
    // PDF/A with encryption is refused here as on generation.
    const both = await app.request('POST', '/api/documents/merge', { token: p.apiKey, body: { parts: [{ jobId: letter.jobId }], output: { pdfa: '2b', encryption: { ownerPassword: 'x' } } } });
    expect([both.status, both.body.code, both.body.relatedInfo?.field]).toEqual([400, 'ERR_VALID_001', 'output.encryption']);
  });

  it('refuses at once, recording nothing: a non-PDF upload, a job of another project, a job that is not a completed PDF, too many parts', async () => {
    const before = await jobCount();
    const html = await postMerge(app, p.apiKey, { parts: [{ upload: 0 }] }, [{ body: Buffer.from('<html><body>not a pdf</body></html>'), name: 'invoice.pdf' }]);
    expect([html.status, html.body.code, html.body.relatedInfo]).toEqual([400, 'ERR_OUTPUT_003', { field: 'files', upload: 0 }]);
    // A file shorter than the magic is not a PDF either.
    const tiny = await postMerge(app, p.apiKey, { parts: [{ upload: 0 }] }, [{ body: Buffer.from('%P') }]);
    expect([tiny.status, tiny.body.code]).toEqual([400, 'ERR_OUTPUT_003']);

    const foreign = await mergeJson({ parts: [{ jobId: letter.jobId }] }, other.apiKey);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'ERR_JOB_001']);

    const sheet = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables: { customer: 'Ada', items: [] } } });
    expect((await waitForJob(app, p.apiKey, sheet.body.jobId)).status).toBe('completed');
    const notPdf = await mergeJson({ parts: [{ jobId: letter.jobId }, { jobId: sheet.body.jobId }] });
    expect([notPdf.status, notPdf.body.code, notPdf.body.relatedInfo?.jobId]).toEqual([409, 'ERR_OUTPUT_006', sheet.body.jobId]);

    const many = await mergeJson({ parts: Array.from({ length: 51 }, () => ({ jobId: letter.jobId })) });
    expect([many.status, many.body.code, many.body.relatedInfo]).toEqual([400, 'ERR_OUTPUT_005', { limit: 50, field: 'parts' }]);

    const unnamed = await postMerge(app, p.apiKey, { parts: [{ jobId: letter.jobId }] }, [{ body: await textPdf('Stray', 1) }]);
    expect([unnamed.status, unnamed.body.code]).toEqual([400, 'ERR_VALID_001']);
    const missing = await postMerge(app, p.apiKey, { parts: [{ upload: 1 }] }, [{ body: await textPdf('Only', 1) }]);
    expect([missing.status, missing.body.code]).toEqual([400, 'ERR_VALID_001']);
    expect(await jobCount()).toBe(before);
  });

  it('bounds a 10,000-page merge: the job fails with ERR_OUTPUT_005 before copying a page, its document comes back, and it is not retried', async () => {
    const quotaBefore = (await app.request('GET', '/api/documents/quota', { token: p.apiKey })).body.freeDocuments.used;
    const huge = await blankPdf(10_000);
    const res = await postMerge(app, p.apiKey, { parts: [{ jobId: letter.jobId }, { upload: 0 }] }, [{ body: huge }]);
    expect(res.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job).toMatchObject({ status: 'failed', kind: 'merge' });
    expect(job.errorMessage).toMatch(/more than 1000 pages/);
    const [row] = await app.services.db.query(`SELECT error_code FROM document_jobs WHERE id = $1`, [job.jobId]);
    expect(row.error_code).toBe('ERR_OUTPUT_005');
    expect((await app.request('GET', '/api/documents/quota', { token: p.apiKey })).body.freeDocuments.used).toBe(quotaBefore);
    // The workflow removes the upload once the job has ended, before it ends itself.
    await app.services.temporal.workflow.getHandle(job.jobId).result();
    expect(await app.services.storage.exists(`merge-uploads/${p.projectId}/${job.jobId}/0.pdf`)).toBe(false);

    const retry = await app.request('POST', `/api/documents/jobs/${job.jobId}/retry`, { token: p.apiKey });
    expect([retry.status, retry.body.code]).toEqual([409, 'ERR_OUTPUT_006']);
    expect(retry.body.message).toMatch(/POST \/api\/documents\/merge again/);
  });

  it('fails the job, naming the part, when an upload starts like a PDF but is not one', async () => {
    const broken = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('this is no PDF body at all\n'.repeat(10))]);
    const res = await postMerge(app, p.apiKey, { parts: [{ jobId: letter.jobId }, { upload: 0 }] }, [{ body: broken }]);
    expect(res.status).toBe(201);
    const job = await waitForJob(app, p.apiKey, res.body.jobId);
    expect(job.status).toBe('failed');
    expect(job.errorMessage).toMatch(/Part 2 is not a readable PDF/);
  });
});
