import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Logger } from '../domain/logger';
import type { FlowRunInput } from '../workflows/flow/flow-run.workflow';
import { startFlowRun } from './workflow-starts';

/**
 * Starts the workflows of accepted Flow runs without putting Temporal on the validate response
 * path, and without ever losing one (docs/flow.md, "Starting run workflows"):
 *
 * - the run row is committed first with `workflow_pending = true` (a transactional outbox);
 * - the API then starts the workflow in the background (`start`), retrying a few times, with
 *   bounded concurrency so a burst queues here instead of flooding the Temporal frontend;
 * - every worker sweeps (`sweep`) at start-up and every SWEEP_INTERVAL_MS for runs still pending
 *   after SWEEP_GRACE_MS: whatever a crashed or partitioned API replica left behind.
 *
 * The workflow id is the run id with REJECT_DUPLICATE, so starting twice (API and sweep racing)
 * is harmless: the second start fails as already started, which counts as success. Used by the
 * API and the worker alike, so it lives in platform/.
 */

export interface FlowRunStarterDeps {
  db: DataSource;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  /**
   * What every run workflow gets in its input (FlowRunInput): WEBHOOK_RETRY_DELAYS and the render
   * queue; `flowRunWorkflowInput(services)` (platform/workflow-starts.ts) builds it.
   */
  workflowInput: Omit<FlowRunInput, 'runId'>;
}

export interface PendingRun {
  id: string;
  projectId: string;
}

const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_GRACE_MS = 30_000;
const RETRY_DELAYS_MS = [250, 1000, 4000];
const MAX_IN_FLIGHT = 8;
/** Past this many queued starts the rest are left to the sweep (the rows are safe in Postgres). */
const MAX_QUEUED = 10_000;

export interface FlowRunStarter {
  /** Starts a committed run's workflow in the background. */
  start(run: PendingRun): void;
  /** Starts every run pending for longer than `graceMs`; resolves to how many were started. */
  sweep(graceMs?: number): Promise<number>;
  /** Resolves once nothing is queued or in flight (tests, shutdown). */
  idle(): Promise<void>;
  stop(): void;
}

export function createFlowRunStarter(deps: FlowRunStarterDeps): FlowRunStarter {
  const queue: Array<{ run: PendingRun; attempt: number }> = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  async function startOne(run: PendingRun): Promise<void> {
    try {
      await startFlowRun(deps, run, deps.workflowInput);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    await deps.db.query(`UPDATE flow_runs SET workflow_pending = false, workflow_started_at = coalesce(workflow_started_at, now()) WHERE id = $1`, [run.id]);
  }

  function settleIdle(): void {
    if (inFlight === 0 && queue.length === 0 && timers.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  function pump(): void {
    while (!stopped && inFlight < MAX_IN_FLIGHT && queue.length > 0) {
      const item = queue.shift()!;
      inFlight += 1;
      startOne(item.run)
        .catch((err) => {
          const delay = RETRY_DELAYS_MS[item.attempt];
          if (delay === undefined || stopped) {
            deps.logger.warn('flow run workflow not started; the sweep will retry', { runId: item.run.id, err });
            return;
          }
          const timer = setTimeout(() => {
            timers.delete(timer);
            enqueue(item.run, item.attempt + 1);
          }, delay);
          timer.unref();
          timers.add(timer);
        })
        .finally(() => {
          inFlight -= 1;
          pump();
          settleIdle();
        });
    }
  }

  function enqueue(run: PendingRun, attempt: number): void {
    if (stopped || queue.length >= MAX_QUEUED) return settleIdle();
    queue.push({ run, attempt });
    pump();
  }

  return {
    start: (run) => enqueue(run, 0),

    async sweep(graceMs = SWEEP_GRACE_MS) {
      const rows: Array<{ id: string; project_id: string }> = await deps.db.query(
        `SELECT id, project_id FROM flow_runs WHERE workflow_pending AND created_at <= now() - $1 * interval '1 millisecond' ORDER BY created_at LIMIT 500`,
        [graceMs],
      );
      let started = 0;
      for (const row of rows) {
        try {
          await startOne({ id: row.id, projectId: row.project_id });
          started += 1;
        } catch (err) {
          deps.logger.warn('flow run sweep could not start a workflow', { runId: row.id, err });
        }
      }
      return started;
    },

    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      }),

    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      queue.length = 0;
      settleIdle();
    },
  };
}

/** The worker's periodic sweep: once at start-up, then every SWEEP_INTERVAL_MS until stopped. */
export function startFlowRunSweeper(starter: FlowRunStarter, logger: Logger, intervalMs = SWEEP_INTERVAL_MS): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      const n = await starter.sweep();
      if (n > 0) logger.info('flow run sweep started pending workflows', { started: n });
    } catch (err) {
      logger.warn('flow run sweep failed', { err });
    }
    if (!stopped) {
      timer = setTimeout(() => void tick(), intervalMs);
      timer.unref();
    }
  };
  void tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
