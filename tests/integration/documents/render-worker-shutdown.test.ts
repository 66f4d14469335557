import { artefactKey } from '../../../domain/documents/files';
import { startTestApp, type TestApp } from '../../support/app';
import { setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { startHangingImageServer, type HangingImageServer, HANGING_IMAGE_TEMPLATE } from '../../support/hanging-image';
import { spawnRenderWorker, type RenderWorkerProcess } from '../../support/render-worker';
import { waitFor } from '../../support/wait';

/**
 * SIGTERM to a render worker process (`node dist/worker/render-main.js`) in the middle of a render
 * (issue 16): within WORKER_SHUTDOWN_GRACE_SECONDS the render finishes and is stored; past it the
 * render is cancelled (its page closes, nothing is stored) and Temporal hands it to the next render
 * worker. Either way the job completes once. The render is held in progress by an image host that
 * answers when the test says so.
 */
describe('render worker shutdown (SIGTERM mid-render)', () => {
  let app: TestApp;
  let p: DocumentProject;
  let images: HangingImageServer;
  const started: RenderWorkerProcess[] = [];

  const renderWorker = (env: Record<string, string>) => {
    const w = spawnRenderWorker(app, env);
    started.push(w);
    return w;
  };

  beforeAll(async () => {
    images = await startHangingImageServer();
    app = await startTestApp({ queues: ['main', 'egress'], env: { IMAGE_HOST_ALLOWLIST: images.host } });
    p = await setupDocumentProject(app, HANGING_IMAGE_TEMPLATE);
  });
  afterAll(async () => {
    for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(started.map((w) => w.exited));
    await app?.close();
    await images?.stop();
  });

  /** A job whose render is in progress: its page waits for an image request the test answers. */
  const renderingJob = async (customer: string) => {
    const n = images.held.length + 1;
    const res = await app.request('POST', '/api/documents/generate', { token: p.apiKey, body: { templateId: p.templateId, format: 'pdf', variables: { customer, logo: `${images.url}/logo.png` } } });
    expect(res.status).toBe(201);
    return { jobId: res.body.jobId as string, image: await images.request(n), n };
  };
  const stored = (jobId: string) => app.services.storage.exists(artefactKey(p.projectId, jobId, 'pdf'));
  const jobStatus = async (jobId: string) => (await app.request('GET', `/api/documents/jobs/${jobId}`, { token: p.apiKey })).body.status as string;
  /** How the render activity ended: the worker identity (`<pid>@<host>`) and number of the attempt that ended it. */
  const renderAttempts = async (jobId: string) => {
    const events = (await app.services.temporal.workflow.getHandle(jobId).fetchHistory()).events ?? [];
    const event = (id: unknown) => events.find((e) => String(e.eventId) === String(id));
    const isRender = (scheduledId: unknown) => event(scheduledId)?.activityTaskScheduledEventAttributes?.activityType?.name === 'renderJob';
    return events.flatMap((e) => {
      const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
      if (!done || !isRender(done.scheduledEventId)) return [];
      const started = event(done.startedEventId)?.activityTaskStartedEventAttributes;
      return [{ outcome: e.activityTaskCompletedEventAttributes ? 'completed' : 'failed', by: started?.identity ?? '', attempt: started?.attempt }];
    });
  };
  /**
   * The render attempts once the completed one is in the history: the job's row says completed as soon as
   * the activity wrote it, a moment before the activity's answer reaches Temporal (on a loaded machine, seconds).
   */
  const completedAttempts = (jobId: string) =>
    waitFor(async () => {
      const attempts = await renderAttempts(jobId);
      return attempts.some((a) => a.outcome === 'completed') ? attempts : undefined;
    }, { what: 'the completed render in the workflow history' });

  it('within the grace time: the render in flight finishes and is stored by the stopping worker, which then exits 0', async () => {
    const w = renderWorker({ WORKER_SHUTDOWN_GRACE_SECONDS: '60' });
    await w.ready;
    const { jobId, image } = await renderingJob('Graceful Grete');
    w.child.kill('SIGTERM');
    await waitFor(() => w.output().includes('SIGTERM received'), { what: 'the worker to start shutting down' });
    // Still rendering: the page waits for its image, the process is up.
    expect(image.closed).toBe(false);
    expect(w.child.exitCode).toBeNull();
    image.release();

    const job = await waitForJob(app, p.apiKey, jobId, 30_000);
    expect(job.status).toBe('completed');
    expect(await stored(jobId)).toBe(true);
    expect((await w.exited).code).toBe(0);
    const attempts = await completedAttempts(jobId);
    expect(attempts).toEqual([{ outcome: 'completed', by: expect.stringMatching(new RegExp(`^${w.pid}@`)), attempt: 1 }]);
  });

  it('past the grace time: the render is cancelled (page closed, nothing stored) and completes on the next render worker', async () => {
    const first = renderWorker({ WORKER_SHUTDOWN_GRACE_SECONDS: '1' });
    await first.ready;
    const { jobId, image, n } = await renderingJob('Handed-over Hanna');
    first.child.kill('SIGTERM');
    // One second later the render is cancelled: its page closes and the process ends cleanly.
    await waitFor(() => image.closed, { timeoutMs: 15_000, what: 'the page to be closed after the grace time' });
    expect((await first.exited).code).toBe(0);
    expect(await jobStatus(jobId)).toBe('processing');
    expect(await stored(jobId)).toBe(false);

    // The next render worker takes the retried attempt.
    const second = renderWorker({});
    await second.ready;
    const again = await images.request(n + 1);
    again.release();
    const job = await waitForJob(app, p.apiKey, jobId, 30_000);
    expect(job.status).toBe('completed');
    expect(await stored(jobId)).toBe(true);
    const attempts = await completedAttempts(jobId);
    // The cancelled attempt ended as failed, and Temporal retried it: attempt 2.
    expect(attempts).toEqual([{ outcome: 'completed', by: expect.stringMatching(new RegExp(`^${second.pid}@`)), attempt: 2 }]);
    await second.stop();
  });
});
