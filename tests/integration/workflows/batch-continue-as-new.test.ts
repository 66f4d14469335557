import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { AttemptDeliveryInput } from '../../../activities/webhooks/attempt-delivery.activity';
import type { generateBatchWorkflow } from '../../../workflows/documents/generate-batch.workflow';
import { waitFor } from '../../support/wait';
import { runChain, startWorkflowHarness, type WorkflowHarness, jobBookkeepingStubs } from './harness';

/**
 * A document batch as the real batch workflow runs it, with its activities stubbed: the batch's
 * jobs live in memory (listed in `batch_index` order, as the keyset query lists them) and the
 * render activity (one per group of documents, renderJobs) records which documents it rendered.
 * `chunkSize` (BATCH_CHUNK_SIZE) is small, so a batch of a few documents continues as new several times.
 */
describe('document batch continue-as-new (stubbed activities)', () => {
  let h: WorkflowHarness;
  const batches = new Map<string, Array<{ id: string; batchIndex: number }>>();
  /** Jobs whose renderer fails in a way retrying cannot help (ERR_JOB_001). */
  const broken = new Set<string>();
  const batchDeliveries = new Map<string, string>();
  /** Jobs whose document event goes to 25 subscriptions (the largest case). */
  const fannedOut = new Set<string>();
  /** Batches that asked for an archive, and what building it does. */
  const archives = new Map<string, 'built' | 'broken'>();

  beforeAll(async () => {
    h = await startWorkflowHarness('batch', {
      async listBatchJobs({ batchId, afterIndex, limit }: { batchId: string; afterIndex: number; limit: number }) {
        return batches.get(batchId)!.filter((j) => j.batchIndex > afterIndex).slice(0, limit);
      },
      // A group with a broken job gives up as a render activity does after its last attempt.
      async renderJobs({ jobIds }: { jobIds: string[]; concurrency: number }) {
        if (jobIds.some((id) => broken.has(id))) throw ApplicationFailure.nonRetryable('Chromium crashed', 'Error');
        return jobIds.map((jobId) => ({ jobId, status: 'completed' }));
      },
      ...jobBookkeepingStubs,
      async prepareJobEvents({ jobIds }: { jobIds: string[] }) {
        return jobIds.flatMap((id) => (fannedOut.has(id) ? Array.from({ length: 25 }, () => randomUUID()) : []));
      },
      async pendingBatchArchive({ batchId }: { batchId: string }) {
        return archives.has(batchId);
      },
      async buildBatchArchive({ batchId }: { batchId: string }) {
        if (archives.get(batchId) === 'broken') throw ApplicationFailure.nonRetryable('the archive store refused the upload', 'Error');
        return undefined;
      },
      async completeBatch({ batchId }: { batchId: string }) {
        const deliveryId = randomUUID();
        batchDeliveries.set(deliveryId, batchId);
        return [deliveryId];
      },
      async attemptDelivery(_input: AttemptDeliveryInput) {
        return { outcome: 'delivered', statusCode: 200 };
      },
      // A batch's events go out as one activity per group (batch-group-deliveries): every one delivered.
      async attemptEventDeliveries({ deliveryIds }: { deliveryIds: string[] }) {
        return { delivered: deliveryIds.length, retrying: 0, failed: 0 };
      },
      async abandonWebhookDelivery(_input: { deliveryId: string }) {
        return undefined;
      },
    });
  });
  afterAll(() => h?.close());

  it('a batch of 5 in chunks of 2 runs as 3 chained runs, renders every document exactly once and announces batch.completed once', async () => {
    const batchId = randomUUID();
    const jobs = Array.from({ length: 5 }, (_, batchIndex) => ({ id: randomUUID(), batchIndex }));
    batches.set(batchId, jobs);
    broken.add(jobs[3].id);

    const handle = await h.client.workflow.start<typeof generateBatchWorkflow>('generateBatchWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: batchId,
      args: [{ batchId, concurrency: 2, chunkSize: 2, renderTaskQueue: h.taskQueue, webhookRetryDelaysMs: [100, 100, 100] }],
    });
    await handle.result(); // follows the chain to its last run

    const chain = await runChain(h.client, batchId, handle.firstExecutionRunId);
    expect(chain).toHaveLength(3);
    expect(new Set(chain).size).toBe(3);
    const latest = await h.client.workflow.getHandle(batchId).describe();
    expect(latest.runId).toBe(chain[2]);
    expect(latest.runId).not.toBe(handle.firstExecutionRunId);
    expect(latest.status.name).toBe('COMPLETED');
    // Each run starts after the last batch_index the previous one saw.
    expect(h.log.about('batchId', batchId).filter((c) => c.name === 'listBatchJobs').map((c) => (c.input as { afterIndex: number }).afterIndex)).toEqual([-1, 1, 3]);

    const ids = new Set<string>(jobs.map((j) => j.id));
    // Groups of up to two documents (the chunk, split between the lanes): each rendered by one activity.
    const rendered = h.log.inputsOf<{ jobIds: string[] }>('renderJobs').filter((i) => ids.has(i.jobIds[0]));
    expect(rendered.map((i) => i.jobIds)).toEqual([[jobs[0].id, jobs[1].id], [jobs[2].id, jobs[3].id], [jobs[4].id]]);
    const announced = h.log.inputsOf<{ jobIds: string[] }>('prepareJobEvents').flatMap((i) => i.jobIds).filter((id) => ids.has(id));
    expect(announced.sort()).toEqual(jobs.map((j) => j.id).sort());
    // The group whose render gave up is failed once, with the renderer's reason, and the batch goes on.
    expect(h.log.inputsOf('markJobsFailed').filter((i) => (i.jobIds as string[]).some((id) => ids.has(id)))).toEqual([
      { jobIds: [jobs[2].id, jobs[3].id], message: 'Rendering failed: Chromium crashed' },
    ]);
    expect(h.log.inputsOf('renderJob').filter((i) => ids.has(i.jobId as string))).toEqual([]);

    expect(h.log.about('batchId', batchId).filter((c) => c.name === 'completeBatch')).toHaveLength(1);
    const [deliveryId] = [...batchDeliveries].find(([, b]) => b === batchId)!;
    const attempts = () => h.log.inputsOf<{ deliveryIds: string[] }>('attemptEventDeliveries').filter((i) => i.deliveryIds.includes(deliveryId));
    await waitFor(() => attempts().length > 0, { what: 'the batch.completed delivery' });
    expect(attempts()).toEqual([{ deliveryIds: [deliveryId], retryDelaysMs: [100, 100, 100], projectId: null }]);
  });

  it('a batch whose size is a multiple of the chunk ends in a last run that finds nothing left and completes it', async () => {
    const batchId = randomUUID();
    const jobs = Array.from({ length: 4 }, (_, batchIndex) => ({ id: randomUUID(), batchIndex }));
    batches.set(batchId, jobs);

    const handle = await h.client.workflow.start<typeof generateBatchWorkflow>('generateBatchWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: batchId,
      args: [{ batchId, concurrency: 3, chunkSize: 2, renderTaskQueue: h.taskQueue, webhookRetryDelaysMs: [100, 100, 100] }],
    });
    await handle.result();

    expect(await runChain(h.client, batchId, handle.firstExecutionRunId)).toHaveLength(3);
    const ids = new Set<string>(jobs.map((j) => j.id));
    const rendered = h.log.inputsOf<{ jobIds: string[] }>('renderJobs').flatMap((i) => i.jobIds).filter((id) => ids.has(id));
    expect(rendered.sort()).toEqual([...ids].sort());
    expect(h.log.about('batchId', batchId).filter((c) => c.name === 'completeBatch')).toHaveLength(1);
  });

  it('a batch that asked for an archive builds it once after the last chunk; an archive that gives up is recorded failed and the batch still completes', async () => {
    const run = async (outcome: 'built' | 'broken') => {
      const batchId = randomUUID();
      batches.set(batchId, Array.from({ length: 3 }, (_, batchIndex) => ({ id: randomUUID(), batchIndex })));
      archives.set(batchId, outcome);
      const handle = await h.client.workflow.start<typeof generateBatchWorkflow>('generateBatchWorkflow', {
        taskQueue: h.taskQueue,
        workflowId: batchId,
        args: [{ batchId, concurrency: 2, chunkSize: 2, renderTaskQueue: h.taskQueue, webhookRetryDelaysMs: [100] }],
      });
      await handle.result();
      return h.log.about('batchId', batchId).map((c) => c.name).filter((n) => /Archive|completeBatch/.test(n));
    };
    // Two runs (chunks of two): only the last one, which finds the batch done, builds the archive, before batch.completed.
    expect(await run('built')).toEqual(['pendingBatchArchive', 'buildBatchArchive', 'completeBatch']);
    expect(await run('broken')).toEqual(['pendingBatchArchive', 'buildBatchArchive', 'failBatchArchive', 'completeBatch']);
    const failed = h.log.inputsOf<{ batchId: string; message: string }>('failBatchArchive');
    expect(failed.at(-1)!.message).toBe('Building the archive failed: the archive store refused the upload');
  });

  it("the largest chunk (1,000 documents) with 25 subscriptions each stays far below Temporal's history limits", async () => {
    const batchId = randomUUID();
    const jobs = Array.from({ length: 1000 }, (_, batchIndex) => ({ id: randomUUID(), batchIndex }));
    batches.set(batchId, jobs);
    for (const j of jobs) fannedOut.add(j.id);

    const handle = await h.client.workflow.start<typeof generateBatchWorkflow>('generateBatchWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: batchId,
      args: [{ batchId, concurrency: 10, chunkSize: 1000, renderTaskQueue: h.taskQueue, webhookRetryDelaysMs: [100, 100, 100] }],
    });
    await handle.result();

    // 25,000 first attempts, all made by group activities (one per group of 10 documents), none by a
    // workflow of its own; and batch.completed's one.
    const ids = new Set<string>(jobs.map((j) => j.id));
    const groups = h.log.inputsOf<{ jobIds: string[] }>('renderJobs').filter((i) => ids.has(i.jobIds[0]));
    expect(groups).toHaveLength(100);
    const deliveries = h.log.calls.filter((c) => c.name === 'attemptEventDeliveries' && c.at >= h.log.about('batchId', batchId)[0].at);
    expect(deliveries.flatMap((c) => (c.input as { deliveryIds: string[] }).deliveryIds)).toHaveLength(25_001);
    // The chunk's run: its history is bounded by the groups, not the subscriptions (docs/architecture.md "Batch history").
    const history = await h.client.workflow.getHandle(batchId, handle.firstExecutionRunId).fetchHistory();
    const events = history.events?.length ?? 0;
    const bytes = temporal.api.history.v1.History.encode(history).finish().length;
    console.log(`largest chunk: ${events} events, ${(bytes / 1e6).toFixed(2)} MB (limits 51,200 events, 50 MB)`);
    expect(events).toBeLessThan(2_500);
    expect(bytes).toBeLessThan(4_000_000);
  });
});
