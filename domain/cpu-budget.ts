/**
 * Evaluation budgets (EVAL_TIMEOUT_MS) count the CPU time an evaluation uses, not the time that
 * passes: on a busy machine (a batch rendering on every core, a deploy) an honest calculation that
 * needs 5 ms of CPU may take a second to be scheduled, and must not fail for it; a runaway
 * expression burns its budget in CPU whatever the load. Time spent waiting is bounded elsewhere
 * (the pool's wall-clock backstop, adapters/evaluation/eval-pool.ts).
 */
export interface CpuBudget {
  /** The budget, in milliseconds of CPU time. */
  readonly budgetMs: number;
  /** Milliseconds of CPU time this process used since the budget started. */
  usedMs(): number;
}

/** A budget that starts now, measured on this process's CPU clock (user + system, every thread). */
export function startCpuBudget(budgetMs: number): CpuBudget {
  const start = process.cpuUsage();
  return {
    budgetMs,
    usedMs() {
      const { user, system } = process.cpuUsage(start);
      return (user + system) / 1000;
    },
  };
}

/**
 * The same budget counted in wall-clock time: for the evaluation pool's background lane, where the
 * work of projects known to be expensive waits for idle CPU. There the wait counts, so such work
 * ends at its budget however little CPU it got, and does not burn a whole budget of CPU out of the
 * gaps an honest load leaves (on a machine whose cores share caches and memory bandwidth, that
 * slowed the honest requests: bench:hostile).
 */
export function startWallBudget(budgetMs: number): CpuBudget {
  const start = performance.now();
  return { budgetMs, usedMs: () => performance.now() - start };
}

export const cpuLeftMs = (budget: CpuBudget) => budget.budgetMs - budget.usedMs();

/**
 * JSONata's `timeout` option, driven by a CPU budget. JSONata checks `Date.now() - start > timeout`
 * at every evaluation step, reading `timeout` each time; this getter answers "no limit" while the
 * budget has CPU time left and the smallest positive number once it is spent, so JSONata stops
 * with D1012 when the CPU time runs out and never because the process waited for a core. The CPU
 * clock is read at most once per wall-clock millisecond, so the check costs JSONata nothing.
 * One evaluation at a time per options object (a worker evaluates one task at a time).
 */
export function cpuTimedJsonataOptions<T extends object>(base: T): { options: T & { readonly timeout: number }; use(budget: CpuBudget): void } {
  let budget: CpuBudget | undefined;
  let checkedAt = -1;
  let spent = false;
  const options = Object.defineProperty({ ...base }, 'timeout', {
    enumerable: true,
    get() {
      if (!budget) return 0;
      const now = Date.now();
      if (now !== checkedAt) {
        checkedAt = now;
        spent = budget.usedMs() >= budget.budgetMs;
      }
      return spent ? Number.MIN_VALUE : Number.MAX_SAFE_INTEGER;
    },
  }) as T & { readonly timeout: number };
  return {
    options,
    use(next) {
      budget = next;
      checkedAt = -1;
      spent = false;
    },
  };
}
