import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestApp } from './app';
import { spawnRole, type RoleProcess } from './role-process';

/**
 * The real render-worker role (`node dist/worker/render-main.js`, as `npm run start:render-worker`
 * runs it) as a child process joining a test app: the app's database, Temporal server, task-queue
 * prefix and storage directory. Start the app with `queues: ['main', 'egress']` so only this process renders.
 */
export interface RenderWorkerProcess extends RoleProcess {
  /** Process ids below it (its Chromium, its evaluation processes), read from /proc. */
  descendants(): number[];
}

const ENTRY = join(__dirname, '..', '..', 'dist', 'worker', 'render-main.js');

/** Ready when the role reports that it polls the render queue (its IPC `ready` message). */
export function spawnRenderWorker(app: TestApp, env: Record<string, string> = {}): RenderWorkerProcess {
  const role = spawnRole('render worker', ENTRY, { ...app.env, ...env });
  return { ...role, descendants: () => descendantsOf(role.pid) };
}

/** Every process below `pid` (children, grandchildren…), from /proc. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // ended meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of parents.get(queue.shift()!) ?? []) {
      found.push(c);
      queue.push(c);
    }
  }
  return found;
}

/** Whether `pid` still runs (a zombie waiting for its parent to reap it has ended). */
/** When the process started (/proc/<pid>/stat field 22, clock ticks since boot); undefined once it is gone. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether the process runs (not a zombie). With `startTime` (startTimeOf, read while it surely ran), only
 * that same process counts: pids are reused (pid_max is 32,768 here, and a test run starts thousands of
 * processes), so a new process with an ended one's pid is not it.
 */
export function isAlive(pid: number, startTime?: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2);
    return fields[0] !== 'Z' && (startTime === undefined || fields.split(' ')[19] === startTime);
  } catch {
    return false;
  }
}
