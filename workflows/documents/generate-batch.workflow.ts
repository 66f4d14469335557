import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities } from '../../activities/documents';
import { dispatchDeliveries } from '../webhooks/dispatch-deliveries';
import { processJob, type JobWorkflowOptions } from './process-job';

export interface GenerateBatchInput extends JobWorkflowOptions {
  batchId: string;
  /** Documents of the batch rendering at once. */
  concurrency: number;
  /** Documents handled per workflow run before continuing as new (keeps history small). */
  chunkSize?: number;
  offset?: number;
}

const { listBatchJobIds, completeBatch } = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * A batch; the workflow id is the batch id. Its documents are activities of this workflow (not
 * child workflows: the dev server starts only tens of workflows a second, while activities of a
 * running workflow dispatch at the workers' pace), fanned out with bounded concurrency. Every
 * chunk of documents is a fresh run (continue-as-new), so a batch of any size keeps a small
 * history; a restarted worker resumes the current chunk, and the idempotent render activity
 * never renders a finished document again.
 */
export async function generateBatchWorkflow(input: GenerateBatchInput): Promise<void> {
  const chunkSize = input.chunkSize ?? 250;
  const offset = input.offset ?? 0;
  const ids = await listBatchJobIds({ batchId: input.batchId, offset, limit: chunkSize });

  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const jobId = ids[next++];
      await processJob(jobId, input);
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.concurrency, ids.length) }, lane));

  if (ids.length === chunkSize) await continueAsNew<typeof generateBatchWorkflow>({ ...input, offset: offset + chunkSize });
  const deliveryIds = await completeBatch({ batchId: input.batchId });
  await dispatchDeliveries(deliveryIds, input.webhookRetryDelaysMs, { wait: false });
}
