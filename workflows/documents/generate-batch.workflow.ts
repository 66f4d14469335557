import { isCancellation, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { continueAsNewUpgrading } from '../shared/versioning';
import type { DocumentActivities } from '../../activities/documents';
import type { BatchArchiveActivities, BatchArchiveBookkeeping } from '../../activities/documents/batch-archive.activity';
import { RETRY } from '../shared/retry-policies';
import { FIRST_ATTEMPT_INLINE_PATCH, GROUP_DELIVERIES_PATCH, deliverDocumentEvent, deliverEventsAsGroup, dispatchDeliveries } from '../webhooks/dispatch-deliveries';
import { failureMessage, processJob, type JobWorkflowOptions } from './process-job';
import { processJobGroup } from './process-job-group';

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

/**
 * Documents of a run whose events may be on their way at once. Their first delivery attempts are
 * activities of this workflow, and Temporal refuses a workflow's 2,001st pending activity
 * (limit.numPendingActivities.error): 50 events × at most 25 subscriptions stay well below.
 */
const MAX_OPEN_EVENTS = 50;

const { pendingBatchArchive, failBatchArchive } = proxyActivities<BatchArchiveBookkeeping>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.documentBookkeeping,
});

/**
 * Runs that build the batch's archive (`output.archive`, docs/documents.md "Batch archives") once every
 * job has ended, before the batch completes and batch.completed is announced.
 */
const BATCH_ARCHIVE_PATCH = 'batch-archive';

/** Runs that list by keyset (batch_index) instead of OFFSET; see listBatchJobs. */
const KEYSET_PATCH = 'batch-keyset-cursor';

/** Runs that render their chunk in groups, one render activity per group (processJobGroup), not one per document. */
const RENDER_GROUPS_PATCH = 'batch-render-groups';
/**
 * Documents per render activity: large enough that Temporal's work per document (two activities,
 * their workflow tasks) becomes a tenth, small enough that a stopping worker, which finishes the
 * groups it has (WORKER_SHUTDOWN_GRACE_SECONDS), leaves the rest of the chunk to the next worker,
 * and that a group's events go out a few seconds after its first document.
 */
const GROUP_SIZE = 10;
/**
 * Documents of one group rendering at once: twice a two-page pool, so its pages stay busy while
 * the group's other documents build their HTML or store their file. BATCH_CONCURRENCY documents
 * of a batch at once are then BATCH_CONCURRENCY / 4 groups (lanes) at once.
 */
const GROUP_CONCURRENCY = 4;

/**
 * A batch; the workflow id is the batch id. Its documents are activities of this workflow (not
 * child workflows: the dev server starts only tens of workflows a second, while activities of a
 * running workflow dispatch at the workers' pace), fanned out with bounded concurrency, and so are
 * the first attempts of their webhook deliveries (deliverDocumentEvent). Every
 * chunk of documents is a fresh run (continue-as-new), so a batch of any size keeps a small
 * history; a restarted worker resumes the current chunk, and the idempotent render activity
 * never renders a finished document again.
 */
export async function generateBatchWorkflow(input: GenerateBatchInput): Promise<void> {
  // A run started before chunkSize was required carries none: it keeps the size it had then.
  const chunkSize = (input.chunkSize as number | undefined) ?? 250;
  let ids: string[];
  /** The chunk's batch_index values (keyset runs): where a run that stops early continues. */
  let indexes: number[] | undefined;
  let nextRun: Partial<GenerateBatchInput>;
  if (patched(KEYSET_PATCH)) {
    // The chunk after the last batch_index seen: jobs deleted meanwhile shift nothing.
    const afterIndex = input.afterIndex ?? (input.offset ? input.offset - 1 : -1);
    const chunk = await listBatchJobs({ batchId: input.batchId, afterIndex, limit: chunkSize });
    ids = chunk.map((j) => j.id);
    indexes = chunk.map((j) => j.batchIndex);
    nextRun = { afterIndex: chunk.length > 0 ? chunk[chunk.length - 1].batchIndex : afterIndex, offset: undefined };
  } else {
    // Replay of a run started before the keyset cursor (its history lists by OFFSET).
    const offset = input.offset ?? 0;
    ids = await listBatchJobIds({ batchId: input.batchId, offset, limit: chunkSize });
    nextRun = { offset: offset + chunkSize };
  }

  if (patched(RENDER_GROUPS_PATCH)) {
    // Runs that deliver by group also hand over early when the server suggests it (a safety net:
    // docs/architecture.md "Batch history" shows the largest chunk stays far below the suggestion).
    const mayStopEarly = indexes !== undefined && patched(GROUP_DELIVERIES_PATCH);
    const handled = await renderInGroups(ids, input, mayStopEarly);
    if (handled < ids.length) await continueAsNewUpgrading<typeof generateBatchWorkflow>({ ...input, afterIndex: indexes![handled - 1], offset: undefined });
  } else await renderOneByOne(ids, input);

  if (ids.length === chunkSize) await continueAsNewUpgrading<typeof generateBatchWorkflow>({ ...input, ...nextRun });
  if (patched(BATCH_ARCHIVE_PATCH)) await buildArchive(input);
  const deliveryIds = await completeBatch({ batchId: input.batchId });
  if (patched(GROUP_DELIVERIES_PATCH)) await deliverEventsAsGroup(deliveryIds, input.webhookRetryDelaysMs);
  else if (patched(FIRST_ATTEMPT_INLINE_PATCH)) await deliverDocumentEvent(deliveryIds, input.webhookRetryDelaysMs);
  else await dispatchDeliveries(deliveryIds, input.webhookRetryDelaysMs, { wait: false });
}

/**
 * The batch's archive, when it asked for one: built on the render queue (the PDF tools' processes
 * are there), heartbeating its progress, so a worker that dies mid-archive is replaced within
 * seconds and the archive is built again (its key is the batch's). Limits passed fail the archive
 * inside the activity; when its attempts run out on anything else, the archive is recorded failed
 * here, and the batch completes either way.
 */
async function buildArchive(input: GenerateBatchInput): Promise<void> {
  if (!(await pendingBatchArchive({ batchId: input.batchId }))) return;
  const { buildBatchArchive } = proxyActivities<BatchArchiveActivities>({
    taskQueue: input.renderTaskQueue,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '30 seconds',
    retry: RETRY.batchArchive,
  });
  try {
    await buildBatchArchive({ batchId: input.batchId });
  } catch (err) {
    if (isCancellation(err)) throw err;
    await failBatchArchive({ batchId: input.batchId, message: failureMessage(err).replace(/^Rendering failed/, 'Building the archive failed') });
  }
}

/**
 * The chunk in groups of up to GROUP_SIZE documents, as many groups at once as BATCH_CONCURRENCY
 * asks for (lanes), each rendering GROUP_CONCURRENCY of its documents at once. A chunk smaller
 * than the lanes' groups is split evenly between them. With `mayStopEarly`, no group is begun once
 * the server suggests continue-as-new (after the first); resolves to how many of `ids` were handled,
 * a prefix of them.
 */
async function renderInGroups(ids: string[], input: GenerateBatchInput, mayStopEarly: boolean): Promise<number> {
  const perGroup = Math.min(GROUP_CONCURRENCY, input.concurrency);
  const lanes = Math.ceil(input.concurrency / perGroup);
  const size = Math.max(1, Math.min(GROUP_SIZE, Math.ceil(ids.length / lanes)));
  const groups: string[][] = [];
  for (let i = 0; i < ids.length; i += size) groups.push(ids.slice(i, i + size));
  let next = 0;
  // As renderOneByOne: events go out beside the lanes, at most MAX_OPEN_EVENTS documents' worth (one group at least).
  const open = new Map<Promise<void>, number>();
  let openDocuments = 0;
  const stop = () => mayStopEarly && next > 0 && workflowInfo().continueAsNewSuggested;
  const lane = async () => {
    while (next < groups.length && !stop()) {
      const group = groups[next++];
      const { announced } = await processJobGroup(group, perGroup, input);
      const settled: Promise<void> = announced.finally(() => {
        openDocuments -= open.get(settled) ?? 0;
        open.delete(settled);
      });
      open.set(settled, group.length);
      openDocuments += group.length;
      while (open.size > 1 && openDocuments > MAX_OPEN_EVENTS) await Promise.race(open.keys());
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, groups.length) }, lane));
  await Promise.all(open.keys());
  return Math.min(ids.length, next * size);
}

/** Runs from before the groups: a render activity per document, `concurrency` at once. */
async function renderOneByOne(ids: string[], input: GenerateBatchInput): Promise<void> {
  let next = 0;
  // Each document's event goes out beside the lanes, which move on to the next render at once: a
  // slow receiver (up to 10 s an attempt) holds no render, unless MAX_OPEN_EVENTS are on their way.
  const open = new Set<Promise<void>>();
  const lane = async () => {
    while (next < ids.length) {
      const jobId = ids[next++];
      const { announced } = await processJob(jobId, input);
      const settled: Promise<void> = announced.finally(() => open.delete(settled));
      open.add(settled);
      while (open.size > MAX_OPEN_EVENTS) await Promise.race(open);
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.concurrency, ids.length) }, lane));
  // Before the run continues or ends: an attempt still open would lose its answer (and its retries).
  await Promise.all(open);
}
