import { CancellationScope, isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities, JobOutcome, RenderActivities } from '../../activities/documents';
import { RETRY } from '../shared/retry-policies';
import { GROUP_DELIVERIES_PATCH, deliverDocumentEvent, deliverEventsAsGroup } from '../webhooks/dispatch-deliveries';
import { catalogued, failureMessage, type JobWorkflowOptions } from './process-job';

const bookkeeping = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

/** Priority key of a batch group's render (1 first … 5 last; Temporal's default is 3). */
const BATCH_GROUP_PRIORITY = 4;

export interface ProcessedGroup {
  outcomes: JobOutcome[];
  /** The group's events on their way (deliverEventsAsGroup): a batch lane does not wait for them. */
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
    // Below a single document's (the default, 3): someone waits on a single document, a batch group can wait its turn.
    priority: { priorityKey: BATCH_GROUP_PRIORITY },
  });
  let outcomes: JobOutcome[];
  try {
    outcomes = await renderJobs({ jobIds, concurrency });
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => bookkeeping.markJobsCancelled({ jobIds }));
      throw err;
    }
    outcomes = await bookkeeping.markJobsFailed({ jobIds, message: failureMessage(err), ...catalogued(err) });
  }
  const deliveryIds = await bookkeeping.prepareJobEvents({ jobIds });
  if (patched(GROUP_DELIVERIES_PATCH)) return { outcomes, announced: deliverEventsAsGroup(deliveryIds, opts.webhookRetryDelaysMs) };
  return { outcomes, announced: deliverDocumentEvent(deliveryIds, opts.webhookRetryDelaysMs) };
}
