import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowIds } from '../../../domain/temporal-names';
import { startApiProcess, type ApiProcess } from '../../support/api-process';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { waitFor } from '../../support/wait';

/**
 * Kill test of the API (issue 16): the real API role (`node dist/api/main.js`) accepts a job and a
 * batch, answers, and is SIGKILLed before it started their workflows (OUTBOX_START_DELAY_MS, the
 * test-only hold on its background starts, makes that window certain). The records are safe with
 * `workflow_pending`; a main worker that starts afterwards sweeps them at start-up, and each
 * document renders exactly once. The API process shares the test app's database, Temporal task
 * queues and storage; the test app's own worker is the one that recovers the work.
 */
describe('kill test: the API SIGKILLed between accepting work and starting its workflow', () => {
  let app: TestApp;
  let api: ApiProcess;
  let p: DocumentProject;

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOX_SWEEP_GRACE_SECONDS: '1', OUTBOX_SWEEP_INTERVAL_SECONDS: '1' } });
    p = await setupDocumentProject(app);
    // No worker while the API dies: nothing but the sweep of the worker started later can start the work.
    await app.stopWorker();
    api = await startApiProcess({
      DATABASE_URL: app.env.DATABASE_URL,
      DATA_DIR: app.dataDir,
      JWT_SECRET: app.env.JWT_SECRET,
      TEMPORAL_TASK_QUEUE_PREFIX: app.env.TEMPORAL_TASK_QUEUE_PREFIX,
      OUTBOX_START_DELAY_MS: '600000',
    });
  });

  afterAll(async () => {
    await api?.close();
    await app?.close();
  });

  it('the job and the batch it answered for still run, each document once', async () => {
    const job = await api.app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'excel', variables: { customer: 'killed' } } });
    expect(job.status).toBe(201);
    const batch = await api.app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'excel', documents: [{ variables: { customer: 'k1' } }, { variables: { customer: 'k2' } }] },
    });
    expect(batch.status).toBe(201);
    await api.kill('SIGKILL');
    const jobId: string = job.body.jobId;
    const batchId: string = batch.body.batchId;

    // Recorded, marked, and not started by anyone.
    expect(await row(`SELECT status, workflow_pending FROM document_jobs WHERE id = $1`, jobId)).toEqual({ status: 'queued', workflow_pending: true });
    expect(await row(`SELECT status, workflow_pending FROM document_batches WHERE id = $1`, batchId)).toEqual({ status: 'processing', workflow_pending: true });
    for (const id of [workflowIds.documentJob(jobId), workflowIds.documentBatch(batchId)]) {
      await expect(app.services.temporal.workflow.getHandle(id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }

    const workerStarted = Date.now();
    await app.startWorker();
    expect((await waitForJob(app, p.apiKey, jobId)).status).toBe('completed');
    const jobRecovered = Date.now() - workerStarted;
    await waitFor(async () => (await row(`SELECT status FROM document_batches WHERE id = $1`, batchId)).status === 'completed', { timeoutMs: 60_000, what: 'the batch' });
    const batchRecovered = Date.now() - workerStarted;

    const rendered = await app.services.db.query(
      `SELECT status, attempts, workflow_pending FROM document_jobs WHERE id = $1 OR batch_id = $2 ORDER BY batch_index NULLS FIRST`,
      [jobId, batchId],
    );
    expect(rendered).toEqual([
      { status: 'completed', attempts: 1, workflow_pending: false },
      { status: 'completed', attempts: 1, workflow_pending: false },
      { status: 'completed', attempts: 1, workflow_pending: false },
    ]);
    expect(await row(`SELECT workflow_pending FROM document_batches WHERE id = $1`, batchId)).toEqual({ workflow_pending: false });
    console.log(`API SIGKILLed after its 201s: the worker started ${Date.now() - workerStarted} ms ago recovered the job in ${jobRecovered} ms and the 2-document batch in ${batchRecovered} ms`);
  });

  const row = async (sql: string, id: string) => (await app.services.db.query(sql, [id]))[0];
});
