import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Where the machine's cores went during a benchmark phase (issue 17: the ratios that are not met are
 * bounded by processes a `node --cpu-prof` profile of the benchmark cannot see). A snapshot reads
 * /proc: every process's user + system time, grouped by what it is (PostgreSQL, the Temporal dev
 * server, Chromium, the evaluation processes, ...), and inside the benchmark's own process its main
 * thread (the API and the workers' JavaScript) apart from the load generator's thread and the rest
 * (V8's GC and compiler threads, libuv's pool, the Temporal core SDK's Rust threads). The difference
 * of two snapshots is each group's CPU seconds; divided by the wall time, the cores it kept busy.
 *
 * Linux only. A process that ended between two snapshots is counted through the `cutime` of the
 * process that waited for it (a Chromium renderer through its zygote; a recycled browser through the
 * benchmark process; its zygote and renderers, orphaned when the browser ended, through PID 1):
 * see cpuBetween. Reading /proc costs a few milliseconds per snapshot, taken only at the phases' edges.
 */

let tickSeconds: number | undefined;
/** Seconds per clock tick, the unit of /proc's times. */
const tick = () => (tickSeconds ??= 1 / (Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100));

/** Threads of this process that generate load (bench-load registers its worker thread here). */
const loadThreads = new Set<number>();
/** CPU seconds of load threads that have ended (read just before they did). */
let endedLoadSeconds = 0;

interface Stat {
  comm: string;
  ppid: number;
  /** utime + stime, seconds. */
  own: number;
  /** cutime + cstime: ended children waited for, seconds. */
  children: number;
}

function readStat(path: string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined; // ended between listing and reading
  }
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  // After the command: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  return { comm, ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) * tick(), children: (Number(f[13]) + Number(f[14])) * tick() };
}

function threadSeconds(tid: number): number {
  return readStat(`/proc/self/task/${tid}/stat`)?.own ?? 0;
}

/** The threads of this process that exist now. */
export function currentThreads(): number[] {
  return readdirSync('/proc/self/task').map(Number);
}

/** Counts `tids` as load-generator threads from now on. */
export function registerLoadThreads(tids: number[]): void {
  for (const tid of tids) loadThreads.add(tid);
}

/** Called just before load threads end: their time so far stays counted as load. */
export function retireLoadThreads(tids: number[]): void {
  for (const tid of tids) {
    if (!loadThreads.delete(tid)) continue;
    endedLoadSeconds += threadSeconds(tid);
  }
}

function groupOf(pid: number, comm: string): string {
  let argv: string[] = [];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    // ended: grouped by its name alone
  }
  const exe = basename(argv[0] ?? comm);
  if (comm === 'postgres' || exe === 'postgres') return 'PostgreSQL';
  if (comm.startsWith('temporal') || exe === 'temporal') return 'Temporal dev server';
  if (/chrom/i.test(comm) || /chrom/i.test(exe)) return 'Chromium';
  if (comm === 'node' || exe === 'node') {
    const script = argv.find((a) => /\.(js|ts)$/.test(a));
    if (script && /eval-host-main/.test(script)) return 'evaluation processes';
    return `node ${script ? basename(script).replace(/\.(js|ts)$/, '') : '(other)'}`;
  }
  if (/redis/.test(comm)) return 'Redis';
  if (/mariadb|mysqld/.test(comm)) return 'MariaDB';
  return 'other processes';
}

interface ProcessTimes {
  ppid: number;
  /** utime + stime + cutime + cstime, seconds: its own time and that of the ended children it waited for. */
  total: number;
  /** The group its own time is counted in. */
  group: string;
  /** The group its ended children's time is charged to. */
  reaperGroup: string;
}

export interface CpuSnapshot {
  at: number;
  /** CPU seconds by group (cumulative since each process started). */
  seconds: Map<string, number>;
  processes: Map<number, ProcessTimes>;
  /** Busy and idle seconds of the whole machine, from /proc/stat. */
  busy: number;
  idle: number;
}

const SELF_MAIN = 'benchmark process: main thread (API, workers, renderer client)';
const SELF_LOAD = 'benchmark process: load generator thread';
const SELF_OTHER = 'benchmark process: other threads (GC, compiler, libuv pool, Temporal core)';
const SELF_ENDED = 'ended children of the benchmark process (recycled Chromium, psql, ...)';
/** Orphans are reparented to PID 1, which waits for them: a recycled browser's zygote and renderers end there. */
const INIT_ENDED = 'ended orphans, reaped by PID 1 (recycled Chromium)';

export function snapshotCpu(): CpuSnapshot {
  const seconds = new Map<string, number>();
  const processes = new Map<number, ProcessTimes>();
  const add = (group: string, s: number) => seconds.set(group, (seconds.get(group) ?? 0) + s);
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(`/proc/${pid}/stat`);
    if (!stat) continue;
    if (pid === process.pid) {
      const main = threadSeconds(pid);
      let load = endedLoadSeconds;
      for (const tid of loadThreads) load += threadSeconds(tid);
      add(SELF_MAIN, main);
      add(SELF_LOAD, load);
      add(SELF_OTHER, Math.max(0, stat.own - main - load));
      add(SELF_ENDED, stat.children);
      processes.set(pid, { ppid: stat.ppid, total: stat.own + stat.children, group: SELF_MAIN, reaperGroup: SELF_ENDED });
      continue;
    }
    const group = groupOf(pid, stat.comm);
    if (pid === 1) {
      add('other processes', stat.own);
      add(INIT_ENDED, stat.children);
    } else add(group, stat.own + stat.children);
    processes.set(pid, { ppid: stat.ppid, total: stat.own + stat.children, group, reaperGroup: pid === 1 ? INIT_ENDED : group });
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const idle = (cpu[3] + cpu[4]) * tick();
  const busy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) * tick() - idle;
  return { at: performance.now(), seconds, processes, busy, idle };
}

export interface CpuUsage {
  wallSeconds: number;
  /** CPU seconds by group within the interval. */
  seconds: Map<string, number>;
  busy: number;
  idle: number;
}

/**
 * Each group's CPU seconds between two snapshots. A process that ended in between left its whole
 * lifetime in its reaper's `cutime` (its parent, or PID 1 when the parent ended first): what it had
 * used before the first snapshot is moved from the reaper's group back to its own, so that each group
 * keeps only the interval (a recycled browser's time during the interval shows under its reaper).
 */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUsage {
  const seconds = new Map<string, number>();
  const add = (group: string, s: number) => seconds.set(group, (seconds.get(group) ?? 0) + s);
  for (const [group, s] of b.seconds) add(group, s - (a.seconds.get(group) ?? 0));
  for (const [pid, before] of a.processes) {
    if (b.processes.has(pid)) continue;
    const reaper = b.processes.get(before.ppid) ?? b.processes.get(1);
    // Its group's total at b lacks `before.total`, which its reaper's cutime now holds: move it back.
    add(before.group, before.total);
    if (reaper) add(reaper.reaperGroup, -before.total);
  }
  for (const [group, s] of seconds) if (s <= 0) seconds.delete(group);
  return { wallSeconds: (b.at - a.at) / 1000, seconds, busy: b.busy - a.busy, idle: b.idle - a.idle };
}

/** Sums usages of one phase measured in several slices. */
export function addCpu(parts: CpuUsage[]): CpuUsage {
  const seconds = new Map<string, number>();
  for (const p of parts) for (const [g, s] of p.seconds) seconds.set(g, (seconds.get(g) ?? 0) + s);
  return {
    wallSeconds: parts.reduce((n, p) => n + p.wallSeconds, 0),
    seconds,
    busy: parts.reduce((n, p) => n + p.busy, 0),
    idle: parts.reduce((n, p) => n + p.idle, 0),
  };
}

/** Measures `run` and returns its result with the CPU it used, machine-wide. */
export async function withCpu<T>(run: () => Promise<T>): Promise<{ result: T; cpu: CpuUsage }> {
  const before = snapshotCpu();
  const result = await run();
  return { result, cpu: cpuBetween(before, snapshotCpu()) };
}

/**
 * Lines for a report: the machine's busy share, then each group that kept at least 0.02 of a core
 * busy, as cores (CPU seconds / wall seconds) and as a share of all the busy time, largest first.
 */
export function formatCpu(usage: CpuUsage, indent = '      '): string[] {
  const wall = usage.wallSeconds || 1;
  const total = usage.busy + usage.idle || 1;
  const cores = total / wall;
  const busyShare = usage.busy || 1;
  const lines = [`${indent}CPU: ${((usage.busy / total) * 100).toFixed(0)} % of ${cores.toFixed(1)} cores busy over ${usage.wallSeconds.toFixed(1)} s`];
  const groups = [...usage.seconds].filter(([, s]) => s / wall >= 0.02).sort((x, y) => y[1] - x[1]);
  for (const [group, s] of groups) {
    lines.push(`${indent}  ${(s / wall).toFixed(2)} cores  ${((s / busyShare) * 100).toFixed(0).padStart(3)} % of busy  ${group}`);
  }
  return lines;
}
