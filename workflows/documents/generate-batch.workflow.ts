import { continueAsNew, patched, proxyActivities } from '@temporalio/workflow';
import type { DocumentActivities } from '../../activities/documents';
import { RETRY } from '../shared/retry-policies';
import { dispatchDeliveries } from '../webhooks/dispatch-deliveries';
import { processJob, type JobWorkflowOptions } from './process-job';

export interface GenerateBatchInput extends JobWorkflowOptions {
  batchId: string;
  /** Documents of the batch rendering at once. */
  concurrency: number;
  /** Documents handled per workflow run before continuing as new (keeps history small; BATCH_CHUNK_SIZE). */
  chunkSize: number;
  /** Where the next run starts: after this `batch_index` (absent: from the start). */
  afterIndex?: number;
  /** Position of runs continued before the keyset cursor; read once, as `afterIndex = offset - 1`. */
  offset?: number;
}

const { listBatchJobs, listBatchJobIds, completeBatch } = proxyActivities<DocumentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

/** Runs that list by keyset (batch_index) instead of OFFSET; see listBatchJobs. */
const KEYSET_PATCH = 'batch-keyset-cursor';

/**
 * A batch; the workflow id is the batch id. Its documents are activities of this workflow (not
 * child workflows: the dev server starts only tens of workflows a second, while activities of a
 * running workflow dispatch at the workers' pace), fanned out with bounded concurrency. Every
 * chunk of documents is a fresh run (continue-as-new), so a batch of any size keeps a small
 * history; a restarted worker resumes the current chunk, and the idempotent render activity
 * never renders a finished document again.
 */
export async function generateBatchWorkflow(input: GenerateBatchInput): Promise<void> {
  // A run started before chunkSize was required carries none: it keeps the size it had then.
  const chunkSize = (input.chunkSize as number | undefined) ?? 250;
  let ids: string[];
  let nextRun: Partial<GenerateBatchInput>;
  if (patched(KEYSET_PATCH)) {
    // The chunk after the last batch_index seen: jobs deleted meanwhile shift nothing.
    const afterIndex = input.afterIndex ?? (input.offset ? input.offset - 1 : -1);
    const chunk = await listBatchJobs({ batchId: input.batchId, afterIndex, limit: chunkSize });
    ids = chunk.map((j) => j.id);
    nextRun = { afterIndex: chunk.length > 0 ? chunk[chunk.length - 1].batchIndex : afterIndex, offset: undefined };
  } else {
    // Replay of a run started before the keyset cursor (its history lists by OFFSET).
    const offset = input.offset ?? 0;
    ids = await listBatchJobIds({ batchId: input.batchId, offset, limit: chunkSize });
    nextRun = { offset: offset + chunkSize };
  }

  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const jobId = ids[next++];
      await processJob(jobId, input);
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.concurrency, ids.length) }, lane));

  if (ids.length === chunkSize) await continueAsNew<typeof generateBatchWorkflow>({ ...input, ...nextRun });
  const deliveryIds = await completeBatch({ batchId: input.batchId });
  await dispatchDeliveries(deliveryIds, input.webhookRetryDelaysMs, { wait: false });
}
