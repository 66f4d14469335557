import { readFileSync } from 'node:fs';

/**
 * Linux reports a process's CPU time in /proc/<pid>/stat in clock ticks of USER_HZ, which is 100
 * on every Linux the service runs on (it is fixed by the kernel ABI, unlike CONFIG_HZ).
 */
const MS_PER_TICK = 10;

/** CPU milliseconds (user + system) process `pid` has used, or undefined where /proc cannot tell. */
function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces) start with field 3, `state`;
    // utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined;
  } catch {
    return undefined;
  }
}

/** How often a watched process's CPU time is read: the kill comes at most this late past the limit. */
const POLL_MS = 20;

export interface CpuWatch {
  /** CPU milliseconds the process used since the watch began (undefined without /proc). */
  usedMs(): number | undefined;
  stop(): void;
}

/**
 * Calls `onOver` once, when process `pid` has used `cpuLimitMs` of CPU time since `baseCpuMs`, or when
 * `wallLimitMs` have passed whatever it used (a process starved of CPU must still end some time).
 * `onUsage` hears the CPU time used so far at every reading.
 * Where /proc cannot be read, `cpuLimitMs` of wall-clock time stands in for the CPU limit.
 */
export function watchCpu(pid: number, baseCpuMs: number | undefined, cpuLimitMs: number, wallLimitMs: number, onOver: () => void, onUsage?: (cpuMs: number) => void): CpuWatch {
  // The process's own reading when it started the task (no /proc read for the many tasks that end
  // before the first poll); /proc counts in 10 ms ticks, so a difference below a tick reads as 0.
  const base = baseCpuMs ?? processCpuMs(pid);
  const started = performance.now();
  let last = 0;
  const used = () => {
    if (base === undefined) return undefined;
    const now = processCpuMs(pid);
    // Unreadable: no /proc (not Linux), or the process ended; the last reading stands for the latter.
    if (now === undefined) return last > 0 ? last : undefined;
    last = Math.max(last, now - base);
    return last;
  };
  const timer = setInterval(() => {
    const wall = performance.now() - started;
    const cpu = used();
    if (cpu !== undefined) onUsage?.(cpu);
    if (wall >= wallLimitMs || (cpu ?? wall) >= cpuLimitMs) {
      clearInterval(timer);
      onOver();
    }
  }, POLL_MS);
  timer.unref();
  return { usedMs: used, stop: () => clearInterval(timer) };
}
