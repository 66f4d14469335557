import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestApp } from './app';

/**
 * The real render-worker role (`node dist/worker/render-main.js`, as `npm run start:render-worker`
 * runs it) as a child process joining a test app: the app's database, Temporal server, task-queue
 * prefix and storage directory. Start the app with `queues: ['main']` so only this process renders.
 */
export interface RenderWorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves when the role reports that it polls the render queue (its IPC `ready` message). */
  ready: Promise<void>;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it printed, for failure messages. */
  output(): string;
  /** Process ids below it (its Chromium, its evaluation processes), read from /proc. */
  descendants(): number[];
  /** SIGTERM, and the wait for a clean exit. */
  stop(): Promise<void>;
}

const ENTRY = join(__dirname, '..', '..', 'dist', 'worker', 'render-main.js');

export function spawnRenderWorker(app: TestApp, env: Record<string, string> = {}): RenderWorkerProcess {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npm run build\` first`);
  const child = spawn(process.execPath, [ENTRY], {
    env: { ...process.env, ...app.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let printed = '';
  child.stdout!.on('data', (d: Buffer) => (printed += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (printed += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean }) => m?.ready && resolve());
    void exited.then(({ code, signal }) => reject(new Error(`render worker exited before it was ready (${signal ?? code}):\n${printed}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    pid: child.pid!,
    ready,
    exited,
    output: () => printed,
    descendants: () => descendantsOf(child.pid!),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
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
