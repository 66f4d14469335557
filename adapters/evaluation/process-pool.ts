import type { ChildProcess } from 'node:child_process';
import workerpool from 'workerpool';

type Pool = ReturnType<typeof workerpool.pool>;
type PoolOptions = NonNullable<Parameters<typeof workerpool.pool>[1]>;

/** What of workerpool's internals this file uses: the pool's handlers (WorkerHandler), each one's child process, and how the pool drops one. */
type Handler = { worker: ChildProcess | null; busy(): boolean };
type PoolInternals = { workers: Handler[]; _removeWorker(handler: Handler): Promise<unknown> };

/**
 * A workerpool pool of worker *processes* (the evaluation pool, eval-pool.ts, and the import pool,
 * import-pool.ts) in which a worker that dies on its own can never hold its slot for good.
 *
 * workerpool 10 ends the worker of a cancelled or timed-out task in two steps: it asks the worker to
 * clean up, and `workerTerminateTimeout` later (100 ms here) it calls WorkerHandler.terminate(),
 * which marks the worker as cleaning (busy) and waits for the child's 'exit' event, unless the child
 * is already `killed` (src/WorkerHandler.js, terminate). A child that died on its own in between
 * (out of heap, or killed from outside) has sent its one 'exit' already; `killed` is only set by our
 * own kill(), so terminate() waits for an event that never comes again. That worker then stays busy
 * forever: tasks queued behind it never start, and a queued task's timeout() only starts when a
 * worker takes it, so they never settle either. Two such deaths took down the interactive lane (two
 * workers with EVAL_POOL_SIZE=1), one the background lane of one worker.
 *
 * The remedy: every child, once it has exited, is marked `killed`. terminate() then completes at
 * once (its "worker already killed" branch) and the pool removes the worker, starts its replacement
 * where minWorkers asks for one, and hands the queued tasks on. A worker that dies while idle is
 * removed (and replaced) at once, as workerpool does with one that dies under a task: left in the
 * pool, it would be handed the next task, which then fails ("Worker is terminated") without ever
 * having run.
 *
 * workerpool's `onCreateWorker` runs just before a worker's process is forked, and the handler is
 * added to the pool's list in the same call: the new child is found there at the next microtask,
 * before any of its events can arrive.
 */
export function processPool(script: string, options: PoolOptions): Pool {
  const watched = new WeakSet<ChildProcess>();
  const watchNewWorkers = () => {
    const internals = pool as unknown as PoolInternals;
    for (const handler of internals.workers) {
      const child = handler.worker;
      if (!child || watched.has(child)) continue;
      watched.add(child);
      // workerpool's own 'exit' listener (added when the handler was made) has run: the handler is
      // `terminated` and the task it was running, if any, rejected.
      child.once('exit', () => {
        (child as { killed: boolean }).killed = true;
        // Its removal ends in an error ("worker already killed"): nothing to report, the pool goes on.
        if (!handler.busy() && internals.workers.includes(handler)) void internals._removeWorker(handler).catch(() => undefined);
      });
    }
  };
  const pool = workerpool.pool(script, {
    ...options,
    workerType: 'process',
    onCreateWorker: (arg) => {
      queueMicrotask(watchNewWorkers);
      return options.onCreateWorker?.(arg);
    },
  });
  return pool;
}
