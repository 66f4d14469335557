import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestApp } from './app';
import { spawnRole, type RoleProcess } from './role-process';

/**
 * The real render-worker role (`node dist/worker/render-main.js`, as `npm run start:render-worker`
 * runs it) as a child process joining a test app: the app's database, Temporal server, task-queue
 * prefix and storage directory. Start the app with `queues: ['main']` so only this process renders.
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
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
