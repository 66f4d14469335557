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

/**
 * The CPU time of `run` beside that of `baseline`, each the least of three rounds taken in turn, with
 * `run`'s first result: a stretch of load or a collection slows both sides of a round alike, and the
 * least of three leaves a single slow sample out, so a bound of a few times the baseline holds on a
 * busy machine while a check that is slow by itself is slow every round.
 */
export function cpuMsBeside<T>(run: () => T, baseline: () => unknown): { result: T; cpuMs: number; baselineMs: number } {
  let result: T | undefined;
  let cpuMs = Infinity;
  let baselineMs = Infinity;
  for (let round = 0; round < 3; round += 1) {
    baselineMs = Math.min(baselineMs, cpuMsOf(baseline).cpuMs);
    const measured = cpuMsOf(run);
    if (round === 0) result = measured.result;
    cpuMs = Math.min(cpuMs, measured.cpuMs);
  }
  return { result: result as T, cpuMs, baselineMs };
}

/** cpuMsBeside for asynchronous work: rounds in turn, the least of three of each side. */
export async function cpuMsBesideAsync<T>(run: () => Promise<T>, baseline: () => Promise<unknown>): Promise<{ result: T; cpuMs: number; baselineMs: number }> {
  let result: T | undefined;
  let cpuMs = Infinity;
  let baselineMs = Infinity;
  for (let round = 0; round < 3; round += 1) {
    baselineMs = Math.min(baselineMs, (await cpuMsOfAsync(baseline)).cpuMs);
    const measured = await cpuMsOfAsync(run);
    if (round === 0) result = measured.result;
    cpuMs = Math.min(cpuMs, measured.cpuMs);
  }
  return { result: result as T, cpuMs, baselineMs };
}
