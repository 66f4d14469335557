import { readFileSync } from 'node:fs';

/**
 * An event-loop probe: a timer every `intervalMs` on this thread, recording the longest gap
 * between two ticks. On a machine that other work saturates (two cores, two Jest workers,
 * Chromium, another engineer's tests) a gap can also mean the thread waited for a CPU while it
 * had nothing to do, so each gap is paired with the CPU time this process's main thread spent in
 * it (Linux: /proc/self/task/<pid>/stat, in clock ticks of 10 ms). `maxBusyMs` is the longest the
 * loop was held by work on this thread; `maxGapMs` the longest wall-clock gap, and `maxGapBusyMs`
 * the main thread's CPU time within that gap.
 */
export interface LoopProbeResult {
  ticks: number;
  maxGapMs: number;
  maxGapBusyMs: number;
  maxBusyMs: number;
  /** Gaps over 50 ms: [wall ms, main-thread CPU ms]. */
  longGaps: Array<[number, number]>;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) of proc(5), counted from the state field (3).
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

export function startLoopProbe(intervalMs = 10): { stop(): LoopProbeResult } {
  const result: LoopProbeResult = { ticks: 0, maxGapMs: 0, maxGapBusyMs: 0, maxBusyMs: 0, longGaps: [] };
  let last = performance.now();
  let lastCpu = mainThreadCpuMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = mainThreadCpuMs();
    const gap = now - last;
    const busy = cpu - lastCpu;
    result.ticks += 1;
    if (gap > result.maxGapMs) {
      result.maxGapMs = gap;
      result.maxGapBusyMs = busy;
    }
    result.maxBusyMs = Math.max(result.maxBusyMs, busy);
    if (gap > 50) result.longGaps.push([Math.round(gap), busy]);
    last = now;
    lastCpu = cpu;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return result;
    },
  };
}
