import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestApp } from './app';

/**
 * The real main worker role (`node dist/worker/main.js`, as `npm run start:worker` runs it) as a
 * child process joining a test app (an API process, or a test app started with `worker: false`):
 * the app's database, Temporal server, task-queue prefix and storage directory. It polls the main
 * and query queues and bundles the workflows itself at start, as a deployed worker does.
 */
export interface MainWorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves when the role logged that it polls its queues ("worker started"). */
  ready: Promise<void>;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The end of what it printed (the last 256 KB), for failure messages. */
  output(): string;
  /** SIGTERM, and the wait for a clean exit. */
  stop(): Promise<void>;
}

const ENTRY = join(__dirname, '..', '..', 'dist', 'worker', 'main.js');
const KEPT_OUTPUT = 256 * 1024;

export function spawnMainWorker(app: TestApp, env: Record<string, string> = {}): MainWorkerProcess {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npm run build\` first`);
  // At info, the role's "worker started" line says when it polls; the role has no IPC `ready` message.
  const child = spawn(process.execPath, [ENTRY], {
    env: { ...process.env, ...app.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  let onLine: (() => void) | undefined;
  const keep = (d: Buffer) => {
    printed = (printed + d.toString()).slice(-KEPT_OUTPUT);
    onLine?.();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<void>((resolve, reject) => {
    onLine = () => {
      if (!printed.includes('"msg":"worker started"')) return;
      onLine = undefined;
      resolve();
    };
    void exited.then(({ code, signal }) => reject(new Error(`main worker exited before it was ready (${signal ?? code}):\n${printed}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    pid: child.pid!,
    ready,
    exited,
    output: () => printed,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
