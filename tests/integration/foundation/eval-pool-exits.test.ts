import type { ChildProcess } from 'node:child_process';
import { pack, STARTED, unpack, type EvalProgress, type EvalResult, type EvalTask } from '../../../adapters/evaluation/eval-task';
import { processPool } from '../../../adapters/evaluation/process-pool';
import { threadFile } from '../../../adapters/threads';
import { waitFor } from '../../support/wait';

type Pool = ReturnType<typeof processPool>;

/** workerpool's WorkerHandler, read only to check that a test provoked the race: its child and the tasks it is cleaning up after. */
type Handler = { worker: ChildProcess | null; tracking: Record<string, unknown> };
const handlersOf = (pool: Pool) => (pool as unknown as { workers: Handler[] }).workers;

/**
 * Workers as the evaluation pool runs them (eval-worker.ts from dist/, through processPool), with a
 * cleanup window of 1 s rather than 100 ms: the window in which a worker dying on its own was waited
 * for forever is then wide enough for the child's 'exit' to arrive in it on a loaded machine too.
 * Each test checks that it did.
 */
const pools: Pool[] = [];
function workers(minWorkers: number, maxWorkers: number): Pool {
  const pool = processPool(threadFile('evaluation/eval-worker'), {
    minWorkers,
    maxWorkers,
    maxQueueSize: Infinity,
    workerTerminateTimeout: 1000,
    // As eval-pool.ts: packed values are Uint8Arrays.
    forkOpts: { serialization: 'advanced' },
  });
  pools.push(pool);
  return pool;
}
afterAll(() => Promise.all(pools.map((pool) => pool.terminate(true).catch(() => undefined))));

/** Billions of steps and a budget of ten minutes: it runs until it is stopped. */
const runaway: EvalTask = {
  kind: 'calculate',
  calculated: [{ name: 'spin', expression: '$sum([1..50000].($sum([1..50000])))' }],
  scope: pack({}),
  budgetMs: 600_000,
  clock: 'cpu',
};
const honest = (n: number): EvalTask => ({ kind: 'calculate', calculated: [{ name: 'double', expression: 'n * 2' }], scope: pack({ n }), budgetMs: 10_000, clock: 'cpu' });

/** The answer of a task; the wait fails (rather than hangs) when it never comes. */
async function answerOf(task: Promise<unknown>): Promise<unknown> {
  let result: EvalResult | undefined;
  let failure: Error | undefined;
  task.then(
    (r) => (result = r as EvalResult),
    (err: unknown) => (failure = err instanceof Error ? err : new Error(String(err))),
  );
  await waitFor(() => result ?? failure, { what: 'the task to settle' });
  if (failure) throw failure;
  if (!result?.ok || !('values' in result)) throw new Error(`unexpected result ${JSON.stringify(result)}`);
  return unpack(result.values);
}

/**
 * Starts the runaway task, then, in one turn of the event loop, kills its worker (as the kernel does
 * one out of heap) and cancels the task (as the pool's CPU watch does): workerpool asks the worker to
 * clean up, and the child's 'exit' arrives before the cleanup window ends. `then` runs in the same
 * turn, right after the cancel. Resolves once the child has exited, with whether that was inside the window.
 */
async function killDuringCleanup(pool: Pool, then?: () => void): Promise<boolean> {
  let pid: number | undefined;
  const task = pool.exec('evaluate', [runaway], {
    on: (p: EvalProgress) => {
      if (p.at === STARTED) pid = p.pid;
    },
  });
  await waitFor(() => pid, { what: 'the runaway task to start' });
  const handler = handlersOf(pool).find((h) => h.worker?.pid === pid);
  if (!handler?.worker) throw new Error(`no worker with pid ${pid}`);
  const inWindow = new Promise<boolean>((resolve) => handler.worker?.once('exit', () => resolve(Object.keys(handler.tracking).length > 0)));
  process.kill(pid as number, 'SIGKILL');
  task.cancel();
  then?.();
  await task.then(
    () => {
      throw new Error('the runaway task answered');
    },
    () => undefined,
  );
  return inWindow;
}

describe('evaluation workers: a worker that dies on its own while it is being ended is not waited for', () => {
  it('answers the next evaluation after both workers of a lane died in their cleanup window', async () => {
    // The interactive lane with EVAL_POOL_SIZE=1: two processes. Before the fix, two such deaths left no worker.
    const pool = workers(2, 2);
    expect(await answerOf(pool.exec('evaluate', [honest(1)]))).toEqual({ double: 2 });
    expect(await killDuringCleanup(pool)).toBe(true);
    expect(await killDuringCleanup(pool)).toBe(true);
    expect(await answerOf(pool.exec('evaluate', [honest(21)]))).toEqual({ double: 42 });
    expect(pool.stats()).toMatchObject({ totalWorkers: 2, pendingTasks: 0 });
  });

  it('starts the evaluation queued behind the dying worker of a one-worker lane', async () => {
    // The background lane, as one expensive tenant holds it: one process, started on demand.
    const pool = workers(0, 1);
    let queued: Promise<unknown> | undefined;
    // Sent while the worker is being ended, so workerpool queues it (its timeout() would start only when it starts).
    const sendNext = () => {
      queued = pool.exec('evaluate', [honest(4)]);
    };
    expect(await killDuringCleanup(pool, sendNext)).toBe(true);
    expect(await answerOf(queued as Promise<unknown>)).toEqual({ double: 8 });
  });

  it('answers the next evaluation after an idle worker died', async () => {
    const pool = workers(1, 1);
    expect(await answerOf(pool.exec('evaluate', [honest(1)]))).toEqual({ double: 2 });
    const [handler] = handlersOf(pool);
    const child = handler.worker as ChildProcess;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // Before, workerpool handed it this task, which failed ("Worker is terminated") without having run.
    expect(await answerOf(pool.exec('evaluate', [honest(5)]))).toEqual({ double: 10 });
  });
});
