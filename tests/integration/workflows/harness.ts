import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { activityInterceptors } from '../../../activities/failure';

/**
 * Workflow tests with stubbed activities: the real workflow code (the bundle of workflows/index.ts
 * that tests/support/global-setup.ts builds once) on the run's real Temporal dev server, served by a
 * worker of the test's own task queue whose activities are functions the test writes. No Postgres,
 * HTTP or Chromium. The dev server has no time skipping, so durations come short through the
 * workflows' inputs (or the activities' answers), and tests wait for conditions, never for time.
 * The worker registers the product workers' activity interceptors (activities/failure.ts), so a
 * stub's error reaches the workflow as a real activity's would: an AppError typed by its code.
 */

/** One activity call as the stub saw it, in call order. */
export interface ActivityCall {
  name: string;
  input: unknown;
  /** Date.now() when the call reached the stub. */
  at: number;
}

export class ActivityLog {
  readonly calls: ActivityCall[] = [];

  /** The inputs of every call of `name`, in call order (typed as the test's activity takes them). */
  inputsOf<T = Record<string, unknown>>(name: string): T[] {
    return this.calls.filter((c) => c.name === name).map((c) => c.input as T);
  }

  count(name: string): number {
    return this.calls.filter((c) => c.name === name).length;
  }

  /** The calls whose first argument has `key` equal to `value` (e.g. every call about one run). */
  about(key: string, value: unknown): ActivityCall[] {
    return this.calls.filter((c) => (c.input as Record<string, unknown> | undefined)?.[key] === value);
  }
}

/** A stub: any one-argument async function (`never` lets each stub declare its own input type). */
export type ActivityStub = (input: never) => Promise<unknown>;

export interface WorkflowHarness {
  client: Client;
  /** The task queue of this harness's worker: start workflows (and route activities) here. */
  taskQueue: string;
  /** Every stubbed activity call, recorded before the stub runs. */
  log: ActivityLog;
  close(): Promise<void>;
}

let runtimeInstalled = false;

/**
 * Starts a worker of a task queue of its own with `activities` (each call recorded in `log` first) and
 * a client, both on the test run's dev server. `name` only makes the queue readable in the Web UI.
 */
/**
 * The document job's bookkeeping activities, recorded and answering as the real ones do for a job
 * that exists: the workflow tests of jobs and batches stub only the render.
 */
export const jobBookkeepingStubs: Record<string, ActivityStub> = {
  async markJobFailed({ jobId, message }: { jobId: string; message: string }) {
    return { jobId, status: 'failed', errorMessage: message };
  },
  async markJobCancelled({ jobId }: { jobId: string }) {
    return { jobId, status: 'cancelled' };
  },
  async prepareJobEvent(_input: { jobId: string }) {
    return [];
  },
  async markJobsFailed({ jobIds, message }: { jobIds: string[]; message: string }) {
    return jobIds.map((jobId) => ({ jobId, status: 'failed', errorMessage: message }));
  },
  async markJobsCancelled(_input: { jobIds: string[] }) {
    return undefined;
  },
  async prepareJobEvents(_input: { jobIds: string[] }) {
    return [];
  },
  // A batch asked for no archive (output.archive) unless a test says otherwise.
  async pendingBatchArchive(_input: { batchId: string }) {
    return false;
  },
  async failBatchArchive(_input: { batchId: string; message: string }) {
    return undefined;
  },
};

export async function startWorkflowHarness(name: string, activities: Record<string, ActivityStub>): Promise<WorkflowHarness> {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE;
  if (!address || !bundlePath) throw new Error('run with the integration project (its globalSetup starts Temporal and bundles the workflows)');
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    try {
      // The SDK narrates every worker state change at INFO, and every activity a test makes fail at WARN.
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed already by another harness of this process
    }
  }

  const log = new ActivityLog();
  const recorded: Record<string, ActivityStub> = {};
  for (const [activity, fn] of Object.entries(activities)) {
    recorded[activity] = async (input: unknown) => {
      log.calls.push({ name: activity, input, at: Date.now() });
      return fn(input as never);
    };
  }

  const taskQueue = `wf-test-${name}-${randomUUID()}`;
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities: recorded,
    interceptors: activityInterceptors(),
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  return {
    client,
    taskQueue,
    log,
    async close() {
      worker.shutdown();
      await running;
      await Promise.all([nativeConnection.close(), connection.close()]);
    },
  };
}

/** The durations of the workflow's timers (`sleep`, `condition` with a timeout), in the order they started. */
export async function timerDurationsMs(handle: WorkflowHandle): Promise<number[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
}

/** The run ids of a workflow's continue-as-new chain, first to last, read from each run's history. */
export async function runChain(client: Client, workflowId: string, firstRunId: string): Promise<string[]> {
  const chain = [firstRunId];
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, chain[chain.length - 1]).fetchHistory();
    const next = history.events?.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return chain;
    chain.push(next);
  }
}
