import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, type DocumentProject } from '../../support/documents';
import { waitFor } from '../../support/wait';
import { createWorkers, type WorkerSet } from '../../../worker/create-workers';

/**
 * Jobs deleted while their batch runs. The app's worker polls the main queue only, so the batch
 * workflow lists its first chunk and then waits for a renderer; the test deletes jobs of that
 * chunk, then starts a render worker (in-process, the real one) and lets the batch finish.
 */
describe('batches with jobs deleted mid-run', () => {
  let app: TestApp;
  let p: DocumentProject;
  let renderer: WorkerSet | undefined;
  beforeAll(async () => {
    app = await startTestApp({ queues: ['main', 'egress'], env: { BATCH_CHUNK_SIZE: '4', BATCH_CONCURRENCY: '2', FREE_DOCUMENTS_PER_MONTH: '100' } });
    p = await setupDocumentProject(app);
  });
  afterAll(async () => {
    await renderer?.shutdown();
    await app.close();
  });

  const freeUsed = async () => (await app.services.db.query(`SELECT coalesce(sum(free_used), 0)::int AS n FROM document_quota_usage WHERE project_id = $1`, [p.projectId]))[0].n as number;

  it('finishes every later job and charges nothing for the deleted ones', async () => {
    const documents = Array.from({ length: 12 }, (_, i) => ({ variables: { customer: `Row ${i}` } }));
    const res = await app.request('POST', '/api/documents/generate/batch', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', documents } });
    expect(res.status).toBe(201);
    const batchId = res.body.batchId as string;
    expect(await freeUsed()).toBe(12);

    // The first chunk (batch_index 0..3) is listed once its renders wait on the render queue.
    const handle = app.services.temporal.workflow.getHandle(batchId);
    await waitFor(async () => (await handle.describe()).raw.pendingActivities?.some((a) => a.activityType?.name === 'renderJobs'), {
      timeoutMs: 60_000,
      what: 'the batch to wait on its first renders',
    });
    const ids = (await app.services.db.query(`SELECT id FROM document_jobs WHERE batch_id = $1 ORDER BY batch_index`, [batchId])).map((r: { id: string }) => r.id);
    const deleted = ids.slice(0, 3);
    const del = await app.request('DELETE', '/api/documents/jobs/bulk', { token: p.apiKey, body: { jobIds: deleted } });
    expect(del.status).toBe(200);
    expect(del.body.deleted).toBe(3);
    // Deleted before they rendered: their free documents are given back at once.
    expect(await freeUsed()).toBe(9);

    renderer = await createWorkers(app.services, { queues: ['render'], workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, schedules: false });
    void renderer.run();

    const done = await waitFor(
      async () => {
        const r = await app.request('GET', `/api/documents/batches/${batchId}`, { token: p.apiKey });
        return r.body.status === 'completed' ? r.body : undefined;
      },
      { timeoutMs: 180_000, what: `batch ${batchId} to complete` },
    );
    expect(done).toMatchObject({ status: 'completed', completedJobs: 9, failedJobs: 0 });

    const rows: Array<{ id: string; status: string; batch_index: number }> = await app.services.db.query(
      `SELECT id, status, batch_index FROM document_jobs WHERE batch_id = $1 ORDER BY batch_index`,
      [batchId],
    );
    expect(rows.map((r) => r.batch_index)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(rows.every((r) => r.status === 'completed')).toBe(true);
    expect(rows.some((r) => deleted.includes(r.id))).toBe(false);
    // Nine documents made, nine charged: the deleted three stay refunded.
    expect(await freeUsed()).toBe(9);
  }, 300_000);
});
