import { artefactKey } from '../../../domain/documents/files';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { startHangingImageServer, type HangingImageServer, HANGING_IMAGE_TEMPLATE } from '../../support/hanging-image';
import { waitFor } from '../../support/wait';

/**
 * Cancelling a job while it renders (issue 16): the render stops (its Chromium page closes), nothing
 * is stored, and the single page is free for the next job at once. The render is held in progress by
 * an image host that never answers: Chromium waits for the page's images before printing, up to 30 s.
 */
describe('cancelling a job mid-render', () => {
  let app: TestApp;
  let p: DocumentProject;
  let images: HangingImageServer;
  let pool: ChromiumPool;

  beforeAll(async () => {
    images = await startHangingImageServer();
    // One page: a render that did not stop would hold it, and the next job would wait its 30 s.
    app = await startTestApp({ env: { IMAGE_HOST_ALLOWLIST: images.host, RENDER_POOL_SIZE: '1' } });
    p = await setupDocumentProject(app, HANGING_IMAGE_TEMPLATE);
    pool = app.services.pdfRenderer as ChromiumPool;
  });
  afterAll(async () => {
    await app?.close();
    await images?.stop();
  });

  const generate = async (variables: Record<string, unknown>) => {
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables } });
    expect(res.status).toBe(201);
    return res.body.jobId as string;
  };
  const stored = (jobId: string) => app.services.storage.exists(artefactKey(p.projectId, jobId, 'pdf'));
  const workflowStatus = async (jobId: string) => (await app.services.temporal.workflow.getHandle(jobId).describe()).status.name;

  /** A job whose render is in progress: its page waits for the n-th image request. */
  const renderingJob = async (customer: string, n: number) => {
    const jobId = await generate({ customer, logo: `${images.url}/logo-${n}.png` });
    const image = await images.request(n);
    expect(image.url).toBe(`/logo-${n}.png`);
    expect((await app.request('GET', `/api/documents/jobs/${jobId}`, { token: p.apiKey })).body.status).toBe('processing');
    return { jobId, image };
  };

  /** The page is free again: a plain document renders before the 30 s a held page would take. */
  const nextJobRendersPromptly = async () => {
    const started = Date.now();
    const next = await generate({ customer: 'Next Nora' });
    const done = await waitForJob(app, p.apiKey, next, 25_000);
    expect(done.status).toBe('completed');
    expect(await stored(next)).toBe(true);
    return Date.now() - started;
  };

  it('POST /cancel stops the render: the page closes within seconds, the job ends cancelled, no file is stored', async () => {
    const { jobId, image } = await renderingJob('Cancel Carl', 1);
    const cancelledAt = Date.now();
    const res = await app.request('POST', `/api/documents/jobs/${jobId}/cancel`, { token: p.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jobId, status: 'cancelled' });

    // Chromium dropped the page (its image request was abandoned), long before its 30 s load timeout.
    await waitFor(() => image.closed, { timeoutMs: 20_000, what: 'the page to be closed' });
    expect(Date.now() - cancelledAt).toBeLessThan(20_000);
    await waitFor(async () => (await workflowStatus(jobId)) === 'CANCELLED', { what: 'the job workflow to end cancelled' });
    await waitFor(() => pool.stats.active === 0, { what: 'the pool to be idle' });
    image.release(); // too late: nobody listens any more

    expect(await stored(jobId)).toBe(false);
    const job = (await app.request('GET', `/api/documents/jobs/${jobId}`, { token: p.apiKey })).body;
    expect(job).toMatchObject({ status: 'cancelled' });
    expect(job.downloadUrl).toBeUndefined();
    expect(await nextJobRendersPromptly()).toBeLessThan(25_000);
    expect(await stored(jobId)).toBe(false);
  });

  it('DELETE of a rendering job stops its render too and leaves no file behind', async () => {
    const { jobId, image } = await renderingJob('Delete Dora', 2);
    const del = await app.request('DELETE', `/api/documents/jobs/${jobId}`, { token: p.apiKey });
    expect(del.status).toBe(204);
    await waitFor(() => image.closed, { timeoutMs: 10_000, what: 'the page to be closed' });
    await waitFor(async () => (await workflowStatus(jobId)) === 'CANCELLED', { what: 'the job workflow to end cancelled' });
    await waitFor(() => pool.stats.active === 0, { what: 'the pool to be idle' });
    expect((await app.request('GET', `/api/documents/jobs/${jobId}`, { token: p.apiKey })).status).toBe(404);
    expect(await stored(jobId)).toBe(false);
    expect(await nextJobRendersPromptly()).toBeLessThan(25_000);
  });

  it('a render that finishes after its job was cancelled without it (a batch job) stores nothing', async () => {
    const res = await app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'pdf', documents: [{ variables: { customer: 'Batch Bea', logo: `${images.url}/logo-3.png` } }] },
    });
    expect(res.status).toBe(201);
    const image = await images.request(3);
    const [{ id: jobId }] = await app.services.db.query(`SELECT id FROM document_jobs WHERE batch_id = $1`, [res.body.batchId]);
    // A batch's job is cancelled in its record only; its render is not told and runs on.
    const cancel = await app.request('POST', `/api/documents/jobs/${jobId}/cancel`, { token: p.apiKey });
    expect(cancel.body).toMatchObject({ status: 'cancelled' });
    expect(image.closed).toBe(false);
    image.release();
    await waitFor(async () => (await app.request('GET', `/api/documents/batches/${res.body.batchId}`, { token: p.apiKey })).body.status !== 'processing', {
      timeoutMs: 30_000,
      what: 'the batch to end',
    });
    expect((await app.request('GET', `/api/documents/jobs/${jobId}`, { token: p.apiKey })).body.status).toBe('cancelled');
    expect(await stored(jobId)).toBe(false);
  });
});
