import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing/lib/mocking-activity-environment';
import { createBatchArchiveActivities, type BatchArchiveDeps } from '../../../activities/documents/batch-archive.activity';
import { activityInterceptors } from '../../../activities/failure';
import { startTestApp, type TestApp } from '../../support/app';
import { pdfOutline, unzipAll } from '../../support/batch-archives';
import { GROWING_LINES_TEMPLATE, download, linesOf, setupDocumentProject, type DocumentProject } from '../../support/documents';
import { documentedAnswers, type DocumentedAnswers } from '../../support/openapi-answers';
import { pdfInfo, pdfText } from '../../support/rendering-pdf';
import { runMaintenance } from '../../support/maintenance';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * `output.archive` on a batch (docs/documents.md "Batch archives"): the batch workflow builds one ZIP
 * or one merged PDF of its documents before it completes, offered by a signed link in the batch's
 * answer and in batch.completed.
 *
 * The app allows batches of 10,000 (BATCH_MAX_DOCUMENTS' largest value) but archives of 1,000
 * (BATCH_ARCHIVE_MAX_DOCUMENTS), so the issue's hostile "ZIP of a batch of 10,000" meets the archive's
 * own limit rather than the batch's; RENDER_HTML_MAX_BYTES is 64 KB so one document of a batch fails.
 */
describe('batch archives', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let p: DocumentProject;
  let docs: DocumentedAnswers;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      env: {
        FREE_DOCUMENTS_PER_MONTH: '20000',
        BATCH_MAX_DOCUMENTS: '10000',
        BATCH_ARCHIVE_MAX_DOCUMENTS: '1000',
        RENDER_HTML_MAX_BYTES: '65536',
        OUTBOUND_ALLOWLIST: '127.0.0.1',
        WEBHOOK_RETRY_DELAYS: '100,100,100',
        DOCUMENT_RETENTION_SECONDS: '3600',
      },
    });
    p = await setupDocumentProject(app);
    const sub = await app.request('POST', '/api/webhooks', { token: p.user.accessToken, body: { url: `${receiver.url}/hooks`, events: ['batch.completed'] } });
    expect(sub.status).toBe(201);
    docs = await documentedAnswers(app);
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
  });

  const submit = (project: DocumentProject, body: Record<string, unknown>) =>
    app.request('POST', '/api/documents/generate/batch', { token: project.apiKey, body: { templateId: project.templateId, format: 'pdf', ...body } });
  const batchDone = (project: DocumentProject, batchId: string) =>
    waitFor(
      async () => {
        const res = await app.request('GET', `/api/documents/batches/${batchId}`, { token: project.apiKey });
        return res.body.status === 'completed' ? res : undefined;
      },
      { timeoutMs: 240_000, what: `batch ${batchId}` },
    );
  const completedEvent = (batchId: string) =>
    waitFor(() => receiver.requests.find((r) => r.json?.type === 'batch.completed' && r.json.data.batchId === batchId), { timeoutMs: 60_000, what: `batch.completed of ${batchId}` });
  /** The archive activity as the render worker has it, with limits of the test's choosing (the byte cap and the page cap in a few kilobytes). */
  const archiveActivity = (limits: Partial<BatchArchiveDeps['limits']> = {}) =>
    createBatchArchiveActivities({
      db: app.services.db,
      storage: app.services.storage,
      pdfTools: app.services.pdfTools,
      limits: { maxBytes: 2 ** 31, maxPages: 1000, maxMergeInputBytes: 2 ** 28, ...limits },
    }).buildBatchArchive;
  const runActivity = (fn: ReturnType<typeof archiveActivity>, batchId: string) => new MockActivityEnvironment(undefined, { interceptors: activityInterceptors().activity }).run(fn, { batchId });

  let zipBatch: { batchId: string; jobIds: string[]; archiveKey: string };

  it('builds a ZIP of every document once, under its download name, before batch.completed, which carries the link', async () => {
    const documents = [
      { variables: { customer: 'Ada' }, filename: 'invoice-a' },
      { variables: { customer: 'Bea' }, filename: 'invoice-a' },
      { variables: { customer: 'Cyd' }, filename: 'INVOICE-A.pdf' },
      { variables: { customer: 'Dan' } },
      { variables: { customer: 'Eve' }, filename: 'report [final].pdf' },
    ];
    const res = await submit(p, { documents, output: { archive: 'zip' } });
    expect(res.status).toBe(201);
    expect(res.body.archive).toEqual({ format: 'zip', status: 'pending' });
    docs.expectDocumented(res, 'post', '/api/documents/generate/batch', 201);

    const done = await batchDone(p, res.body.batchId);
    docs.expectDocumented(done, 'get', '/api/documents/batches/{batchId}');
    const jobIds: string[] = done.body.documents.map((d: any) => d.jobId);
    expect(done.body).toMatchObject({ completedJobs: 5, failedJobs: 0 });
    expect(done.body.archive).toEqual({
      format: 'zip',
      status: 'ready',
      downloadUrl: expect.any(String),
      expiresAt: expect.any(String),
      size: expect.any(Number),
      documents: 5,
      leftOut: [],
    });

    // The link: signed, expiring with DOWNLOAD_URL_TTL_SECONDS, a ZIP under the batch's name.
    const link = new URL(done.body.archive.downloadUrl);
    expect(Number(link.searchParams.get('expires')) * 1000).toBe(new Date(done.body.archive.expiresAt).getTime());
    expect(new Date(done.body.archive.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(3600 * 1000);
    const file = await download(link.toString());
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/zip');
    expect(file.headers.get('content-disposition')).toContain(`filename="batch-${res.body.batchId}.zip"`);
    expect(file.body.length).toBe(done.body.archive.size);

    const entries = await unzipAll(file.body);
    expect(entries.map((e) => e.name)).toEqual(['invoice-a.pdf', 'invoice-a (2).pdf', 'INVOICE-A (3).pdf', `document-${jobIds[3]}.pdf`, 'report [final].pdf']);
    for (const [i, entry] of entries.entries()) {
      expect((await pdfInfo(entry.body)).pages).toBeGreaterThanOrEqual(1);
      const text = await pdfText(entry.body);
      expect(text).toContain(`Dear ${documents[i].variables.customer}`);
      for (const other of documents.filter((_, j) => j !== i)) expect(text).not.toContain(`Dear ${other.variables.customer}`);
    }

    // batch.completed went out after the archive was built, with its link.
    const event = await completedEvent(res.body.batchId);
    expect(event.json.data.archive).toMatchObject({ format: 'zip', status: 'ready', downloadUrl: expect.any(String), documents: 5 });
    expect((await download(event.json.data.archive.downloadUrl)).body.equals(file.body)).toBe(true);

    const [row] = await app.services.db.query(`SELECT archive_key FROM document_batches WHERE id = $1`, [res.body.batchId]);
    zipBatch = { batchId: res.body.batchId, jobIds, archiveKey: row.archive_key };
  }, 300_000);

  it.each([
    ['an edited signature', (u: URL) => u.searchParams.set('signature', 'f'.repeat(64))],
    ['an extended expiry', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))],
    ['another file name', (u: URL) => u.searchParams.set('filename', 'other.zip')],
    ['another batch', (u: URL) => (u.pathname = u.pathname.replace(zipBatch.batchId, randomUUID()))],
  ])('refuses the archive link with %s', async (_label, edit) => {
    const read = await app.request('GET', `/api/documents/batches/${zipBatch.batchId}`, { token: p.apiKey });
    const url = new URL(read.body.archive.downloadUrl);
    edit(url);
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'ERR_FILE_003' });
  });

  it('merges a PDF batch into one PDF: the pages of every document in order, a bookmark per document', async () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `Line ${i}`, amount: i }));
    const documents = [
      { variables: { customer: 'Fay', items: items(1) }, filename: 'Fay letter' },
      { variables: { customer: 'Gus', items: items(60) } },
      { variables: { customer: 'Hal', items: items(5) }, filename: 'Hal letter' },
    ];
    const res = await submit(p, { documents, output: { archive: 'pdf' } });
    expect(res.status).toBe(201);
    const done = await batchDone(p, res.body.batchId);
    expect(done.body.archive).toMatchObject({ format: 'pdf', status: 'ready', documents: 3, leftOut: [] });

    const merged = await download(done.body.archive.downloadUrl);
    expect(merged.headers.get('content-type')).toBe('application/pdf');
    expect(merged.headers.get('content-disposition')).toContain(`filename="batch-${res.body.batchId}.pdf"`);
    const pages: number[] = [];
    for (const d of done.body.documents) pages.push((await pdfInfo((await download(d.downloadUrl)).body)).pages);
    expect(pages[1]).toBeGreaterThan(1);
    expect((await pdfInfo(merged.body)).pages).toBe(pages[0] + pages[1] + pages[2]);
    expect(await pdfOutline(merged.body)).toEqual([
      { title: 'Fay letter', page: 0 },
      { title: 'Document 2', page: pages[0] },
      { title: 'Hal letter', page: pages[0] + pages[1] },
    ]);
    expect(await pdfText(merged.body, { page: pages[0] + 1 })).toContain('Dear Gus');
    expect(await pdfText(merged.body, { page: pages[0] + pages[1] + 1 })).toContain('Dear Hal');

    // Past the merged document's page limit: the archive fails with ERR_OUTPUT_005, the batch's documents stay.
    await app.services.db.query(`UPDATE document_batches SET archive_status = 'pending' WHERE id = $1`, [res.body.batchId]);
    expect(await runActivity(archiveActivity({ maxPages: pages[0] + pages[1] }), res.body.batchId)).toEqual({ status: 'failed' });
    const failed = await app.request('GET', `/api/documents/batches/${res.body.batchId}`, { token: p.apiKey });
    expect(failed.body.archive).toEqual({ format: 'pdf', status: 'failed', errorCode: 'ERR_OUTPUT_005', errorMessage: expect.stringContaining(`${pages[0] + pages[1]} pages`) });
    docs.expectDocumented(failed, 'get', '/api/documents/batches/{batchId}');
  }, 300_000);

  it('leaves a failed document out of the archive and says which', async () => {
    const lines = await setupDocumentProject(app, GROWING_LINES_TEMPLATE);
    const documents = [{ variables: linesOf(3), filename: 'short' }, { variables: linesOf(100), filename: 'too-long' }, { variables: linesOf(5), filename: 'also-short' }];
    const res = await submit(lines, { documents, output: { archive: 'zip' } });
    expect(res.status).toBe(201);
    const done = await batchDone(lines, res.body.batchId);
    const failedJob = done.body.documents[1];
    expect(done.body).toMatchObject({ completedJobs: 2, failedJobs: 1 });
    expect(failedJob.status).toBe('failed');
    expect(done.body.archive).toMatchObject({ status: 'ready', documents: 2, leftOut: [{ jobId: failedJob.jobId, status: 'failed' }] });
    const entries = await unzipAll((await download(done.body.archive.downloadUrl)).body);
    expect(entries.map((e) => e.name)).toEqual(['short.pdf', 'also-short.pdf']);
  }, 300_000);

  it('refuses a ZIP of a batch of 10,000 at once, with ERR_OUTPUT_005 and its limit, and accepts nothing', async () => {
    const before = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1`, [p.projectId]);
    const documents = Array.from({ length: 10_000 }, (_, i) => ({ variables: { customer: `C${i}` } }));
    const res = await submit(p, { documents, output: { archive: 'zip' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_OUTPUT_005', relatedInfo: { limit: 1000, field: 'output.archive' } });
    const after = await app.services.db.query(`SELECT count(*)::int AS n FROM document_jobs WHERE project_id = $1`, [p.projectId]);
    expect(after[0].n).toBe(before[0].n);

    // A merged PDF needs PDF documents.
    const excel = await submit(p, { format: 'excel', documents: [{ variables: { customer: 'x' } }], output: { archive: 'pdf' } });
    expect(excel.status).toBe(400);
    expect(excel.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'output.archive' } });
  }, 120_000);

  it('fails an archive that grows past BATCH_ARCHIVE_MAX_BYTES while it streams, storing nothing; a retry rebuilds it, a finished one is answered as it is', async () => {
    const { batchId, archiveKey } = zipBatch;
    await app.services.storage.delete(archiveKey);
    await app.services.db.query(`UPDATE document_batches SET archive_status = 'pending' WHERE id = $1`, [batchId]);
    // The records' sizes (about 5 × 20 KB) pass a cap of one and a half documents; the ZIP as it is written does not.
    const [{ one }] = await app.services.db.query(`SELECT max(artefact_size)::int AS one FROM document_jobs WHERE batch_id = $1`, [batchId]);
    const cap = Math.floor(one * 1.5);
    await app.services.db.query(`UPDATE document_jobs SET artefact_size = 1 WHERE batch_id = $1`, [batchId]);
    expect(await runActivity(archiveActivity({ maxBytes: cap }), batchId)).toEqual({ status: 'failed' });
    expect(await app.services.storage.exists(archiveKey)).toBe(false);
    const failed = await app.request('GET', `/api/documents/batches/${batchId}`, { token: p.apiKey });
    expect(failed.body.archive).toMatchObject({ status: 'failed', errorCode: 'ERR_OUTPUT_005' });
    expect(failed.body.archive.downloadUrl).toBeUndefined();

    // Pending again (as a retried attempt finds it): built again, the same documents under the same names.
    await app.services.db.query(`UPDATE document_batches SET archive_status = 'pending' WHERE id = $1`, [batchId]);
    expect(await runActivity(archiveActivity(), batchId)).toEqual({ status: 'ready' });
    const rebuilt = await app.request('GET', `/api/documents/batches/${batchId}`, { token: p.apiKey });
    const names = (await unzipAll((await download(rebuilt.body.archive.downloadUrl)).body)).map((e) => e.name);
    expect(names).toEqual(['invoice-a.pdf', 'invoice-a (2).pdf', 'INVOICE-A (3).pdf', `document-${zipBatch.jobIds[3]}.pdf`, 'report [final].pdf']);
    // Ready: a further attempt changes nothing.
    const [{ at }] = await app.services.db.query(`SELECT archive_completed_at AS at FROM document_batches WHERE id = $1`, [batchId]);
    expect(await runActivity(archiveActivity({ maxBytes: 1024 }), batchId)).toEqual({ status: 'ready' });
    const [{ at: again }] = await app.services.db.query(`SELECT archive_completed_at AS at FROM document_batches WHERE id = $1`, [batchId]);
    expect(again).toEqual(at);
  }, 120_000);

  it('removes an archive past the retention period like a job file: the batch then says expired and offers no link', async () => {
    const { batchId, archiveKey } = zipBatch;
    await app.services.db.query(`UPDATE document_batches SET archive_completed_at = now() - interval '2 hours' WHERE id = $1`, [batchId]);
    await runMaintenance(app, { retentionSeconds: 3600, strandedAfterSeconds: 3600, deletionGraceSeconds: 302 });
    expect(await app.services.storage.exists(archiveKey)).toBe(false);
    const read = await app.request('GET', `/api/documents/batches/${batchId}`, { token: p.apiKey });
    expect(read.body.archive).toEqual({ format: 'zip', status: 'expired', documents: 5, leftOut: [] });
  }, 120_000);
});
