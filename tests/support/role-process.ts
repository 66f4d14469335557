import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** A worker role (`node dist/worker/...`) as a child process of a test: its readiness, output and end. */
export interface RoleProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves when the role is ready (see `readyLine`); rejects if it exits first. */
  ready: Promise<void>;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The end of what it printed (the last 256 KB), for failure messages. */
  output(): string;
  /** SIGTERM, and the wait for a clean exit. */
  stop(): Promise<void>;
}

const KEPT_OUTPUT = 256 * 1024;

/**
 * Starts `entry` with `env` (added to this process's environment). Ready is the role's IPC
 * `{ ready: true }` message, or, for a role that sends none, the first output containing `readyLine`.
 */
export function spawnRole(what: string, entry: string, env: Record<string, string>, readyLine?: string): RoleProcess {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, ...env },
    stdio: readyLine === undefined ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  let onOutput: (() => void) | undefined;
  const keep = (d: Buffer) => {
    printed = (printed + d.toString()).slice(-KEPT_OUTPUT);
    onOutput?.();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<void>((resolve, reject) => {
    if (readyLine === undefined) child.on('message', (m: { ready?: boolean }) => m?.ready && resolve());
    else
      onOutput = () => {
        if (!printed.includes(readyLine)) return;
        onOutput = undefined;
        resolve();
      };
    void exited.then(({ code, signal }) => reject(new Error(`${what} exited before it was ready (${signal ?? code}):\n${printed}`)));
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
