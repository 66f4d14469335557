import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { AppError, type ErrorCode } from '../../../domain/errors';
import type { generateDocumentWorkflow } from '../../../workflows/documents/generate-document.workflow';
import { startWorkflowHarness, type WorkflowHarness, jobBookkeepingStubs } from './harness';

/**
 * An AppError that escapes an activity reaches the workflow through the failure mapper
 * (activities/failure.ts, registered on every Worker): typed by its code, and retried by the
 * workflow's policy only when the catalogue says retrying can help. Shown on the document job's
 * real workflow (RETRY.documentRender: 3 attempts, 2 s apart) with its render activity stubbed.
 */
describe('activity errors through the failure mapper (stubbed activities)', () => {
  let h: WorkflowHarness;
  /** What each job's render attempts throw, in order; past the list the render succeeds. */
  const failures = new Map<string, AppError[]>();

  beforeAll(async () => {
    h = await startWorkflowHarness('failures', {
      async renderJob({ jobId }: { jobId: string }) {
        const attempt = h.log.about('jobId', jobId).filter((c) => c.name === 'renderJob').length;
        const err = failures.get(jobId)?.[attempt - 1];
        if (err) throw err;
        return { jobId, status: 'completed' };
      },
      ...jobBookkeepingStubs,
    });
  });
  afterAll(() => h?.close());

  const generate = (jobId: string) =>
    h.client.workflow.start<typeof generateDocumentWorkflow>('generateDocumentWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `failures-${jobId}`,
      args: [{ jobId, renderTaskQueue: h.taskQueue, webhookRetryDelaysMs: [100] }],
    });

  /** The render failures the workflow was handed (ActivityTaskFailed: the last attempt's failure). */
  async function renderFailures(handle: WorkflowHandle) {
    const history = await handle.fetchHistory();
    return (history.events ?? [])
      .filter((e) => e.activityTaskFailedEventAttributes)
      .map((e) => {
        const f = e.activityTaskFailedEventAttributes!.failure!;
        return { type: f.applicationFailureInfo?.type, nonRetryable: f.applicationFailureInfo?.nonRetryable ?? false, message: f.message };
      });
  }
  const renderAttempts = (jobId: string) => h.log.about('jobId', jobId).filter((c) => c.name === 'renderJob').length;

  it.each<[ErrorCode, string]>([
    ['ERR_JOB_001', 'the policy lists it as non-retryable'],
    ['ERR_TMPL_013', 'the catalogue says retrying cannot help'],
  ])('a render that throws %s (%s) is attempted once, and the workflow sees the code as the failure type', async (code) => {
    const jobId = randomUUID();
    failures.set(jobId, [new AppError(code, `job ${jobId} cannot render`)]);
    const handle = await generate(jobId);

    expect(await handle.result()).toEqual({ jobId, status: 'failed', errorMessage: `Rendering failed: job ${jobId} cannot render` });
    expect(renderAttempts(jobId)).toBe(1);
    expect(await renderFailures(handle)).toEqual([{ type: code, nonRetryable: true, message: `job ${jobId} cannot render` }]);
  });

  it('a render that throws a retryable code (ERR_INTERNAL_002, a 503) is attempted again, and the job completes', async () => {
    const jobId = randomUUID();
    failures.set(jobId, [new AppError('ERR_INTERNAL_002', 'storage is down')]);
    const handle = await generate(jobId);

    expect(await handle.result()).toEqual({ jobId, status: 'completed' });
    expect(renderAttempts(jobId)).toBe(2);
    expect(h.log.inputsOf('markJobFailed').filter((i) => i.jobId === jobId)).toEqual([]);
    // Retried by the policy, after its initial interval, not failed into the workflow.
    const [first, second] = h.log.about('jobId', jobId).filter((c) => c.name === 'renderJob');
    expect(second.at - first.at).toBeGreaterThanOrEqual(1500);
    expect(await renderFailures(handle)).toEqual([]);
  });

  it('a retryable code that keeps failing fails the job after the policy’s three attempts, typed by its code', async () => {
    const jobId = randomUUID();
    failures.set(jobId, Array.from({ length: 3 }, () => new AppError('ERR_INTERNAL_002', 'storage is down')));
    const handle = await generate(jobId);

    expect(await handle.result()).toEqual({ jobId, status: 'failed', errorMessage: 'Rendering failed: storage is down' });
    expect(renderAttempts(jobId)).toBe(3);
    expect(await renderFailures(handle)).toEqual([{ type: 'ERR_INTERNAL_002', nonRetryable: false, message: 'storage is down' }]);
  });
});
