import { startCpuBudget } from '../../domain/cpu-budget';

/**
 * The CPU time (ms, user + system, every thread of this process) that `run` used: how a test bounds
 * the cost of work on hostile input. Unlike the time that passes, it does not grow when other work
 * (the other Jest worker, Chromium, another test run) holds the machine's cores (docs/testing.md).
 */
export function cpuMsOf<T>(run: () => T): { result: T; cpuMs: number } {
  const budget = startCpuBudget(0);
  const result = run();
  return { result, cpuMs: budget.usedMs() };
}

/** The same for asynchronous work: CPU time of this whole process while the promise was pending. */
export async function cpuMsOfAsync<T>(run: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const budget = startCpuBudget(0);
  const result = await run();
  return { result, cpuMs: budget.usedMs() };
}
