import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities, JobOutcome, RenderActivities } from '../../activities/documents';
import { RETRY } from '../shared/retry-policies';
import { dispatchDeliveries } from '../webhooks/dispatch-deliveries';

export interface JobWorkflowOptions {
  renderTaskQueue: string;
  /** Webhook retry delays in ms (spec: 30 s, 2 min, 10 min; shorter in tests). */
  webhookRetryDelaysMs: number[];
}

const bookkeeping = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

/**
 * One document: render on the render queue, then announce the outcome. The render activity
 * heartbeats, so a worker that dies mid-render is noticed within seconds and the job is retried
 * on another worker (the activity is idempotent). RETRY.documentRender: three attempts for a
 * crashing renderer, then the job fails with the last error.
 */
export async function processJob(jobId: string, opts: JobWorkflowOptions): Promise<JobOutcome> {
  const { renderJob } = proxyActivities<RenderActivities>({
    taskQueue: opts.renderTaskQueue,
    startToCloseTimeout: '3 minutes',
    heartbeatTimeout: '15 seconds',
    retry: RETRY.documentRender,
  });
  let outcome: JobOutcome;
  try {
    outcome = await renderJob({ jobId });
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => bookkeeping.markJobCancelled({ jobId }));
      throw err;
    }
    outcome = await bookkeeping.markJobFailed({ jobId, message: failureMessage(err) });
  }
  const deliveryIds = await bookkeeping.prepareJobEvent({ jobId });
  await dispatchDeliveries(deliveryIds, opts.webhookRetryDelaysMs, { wait: false });
  return outcome;
}

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return `Rendering failed: ${cause.message}`;
  return 'Rendering failed';
}
