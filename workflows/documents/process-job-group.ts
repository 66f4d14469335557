import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities, JobOutcome, RenderActivities } from '../../activities/documents';
import { RETRY } from '../shared/retry-policies';
import { deliverDocumentEvent } from '../webhooks/dispatch-deliveries';
import { failureMessage, type JobWorkflowOptions } from './process-job';

const bookkeeping = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

export interface ProcessedGroup {
  outcomes: JobOutcome[];
  /** The group's events on their way (deliverDocumentEvent): a batch lane does not wait for them. */
  announced: Promise<void>;
}

/**
 * A group of a batch's documents (generateBatchWorkflow, patch 'batch-render-groups'): one render
 * activity renders them `concurrency` at a time, heartbeating its progress, and one bookkeeping
 * activity prepares all their events, instead of two activities per document. The render activity
 * is idempotent per job, so a retry (its worker died: the heartbeat stops; a render threw) renders
 * only the jobs that have not ended. RETRY.documentRender: three attempts, then the group's open
 * jobs fail with the last error. Its time limit grows with the documents it has to render in turn.
 */
export async function processJobGroup(jobIds: string[], concurrency: number, opts: JobWorkflowOptions): Promise<ProcessedGroup> {
  const { renderJobs } = proxyActivities<RenderActivities>({
    taskQueue: opts.renderTaskQueue,
    startToCloseTimeout: `${3 * Math.ceil(jobIds.length / concurrency)} minutes`,
    heartbeatTimeout: '15 seconds',
    retry: RETRY.documentRender,
  });
  let outcomes: JobOutcome[];
  try {
    outcomes = await renderJobs({ jobIds, concurrency });
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => bookkeeping.markJobsCancelled({ jobIds }));
      throw err;
    }
    outcomes = await bookkeeping.markJobsFailed({ jobIds, message: failureMessage(err) });
  }
  const deliveryIds = await bookkeeping.prepareJobEvents({ jobIds });
  return { outcomes, announced: deliverDocumentEvent(deliveryIds, opts.webhookRetryDelaysMs) };
}
