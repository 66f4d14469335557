import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities, JobOutcome, RenderActivities } from '../../activities/documents';
import { RETRY } from '../shared/retry-policies';
import { FIRST_ATTEMPT_INLINE_PATCH, deliverDocumentEvent, dispatchDeliveries } from '../webhooks/dispatch-deliveries';

export interface JobWorkflowOptions {
  renderTaskQueue: string;
  /** Webhook retry delays in ms (spec: 30 s, 2 min, 10 min; shorter in tests). */
  webhookRetryDelaysMs: number[];
}

const bookkeeping = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

interface ProcessedJob {
  outcome: JobOutcome;
  /**
   * The job's event on its way: settles once the first attempt of each of its deliveries has ended
   * and the retries' workflows have started (deliverDocumentEvent). A batch lane does not wait for
   * it before its next document: a slow receiver may take an attempt's whole 10 s.
   */
  announced: Promise<void>;
}

/**
 * One document: render on the render queue, then announce the outcome. The render activity
 * heartbeats, so a worker that dies mid-render is noticed within seconds and the job is retried
 * on another worker (the activity is idempotent). RETRY.documentRender: three attempts for a
 * crashing renderer, then the job fails with the last error.
 */
export async function processJob(jobId: string, opts: JobWorkflowOptions): Promise<ProcessedJob> {
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
    outcome = await bookkeeping.markJobFailed({ jobId, message: failureMessage(err), ...catalogued(err) });
  }
  const deliveryIds = await bookkeeping.prepareJobEvent({ jobId });
  if (patched(FIRST_ATTEMPT_INLINE_PATCH)) return { outcome, announced: deliverDocumentEvent(deliveryIds, opts.webhookRetryDelaysMs) };
  // Runs from before the patch: a delivery workflow per delivery, started before the job moves on.
  await dispatchDeliveries(deliveryIds, opts.webhookRetryDelaysMs, { wait: false });
  return { outcome, announced: Promise.resolve() };
}

/**
 * The catalogued code and words of a failure that carries one (an AppError the activity threw, typed
 * by its code: activities/failure.ts), so the job keeps it rather than ERR_RENDER_001, which is for
 * what the renderer gave up on. Nothing for any other failure.
 */
export function catalogued(err: unknown): { code: string; detail: string } | Record<string, never> {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && typeof cause.type === 'string' && /^ERR_[A-Z]+_\d{3}$/.test(cause.type)) return { code: cause.type, detail: cause.message };
  return {};
}

/** What a job that its render gave up on says: the last error. */
export function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return `Rendering failed: ${cause.message}`;
  return 'Rendering failed';
}
