import { type ChildProcess, spawn } from 'node:child_process';

/**
 * `npm start`'s child process roles (the render worker): started with the parent's environment and
 * an IPC channel, its output on the parent's terminal, stopped with SIGTERM (then SIGKILL after a
 * grace period), and restarted with a growing delay when it dies on its own, which is reported
 * loudly. The child sits in its own process group, so Ctrl-C reaches only the parent, which stops
 * it in order; the IPC channel makes the child stop itself if the parent dies without doing so.
 */
export interface ChildRoleOptions {
  /** Name in messages, e.g. `render-worker`. */
  name: string;
  /** The compiled entry point, e.g. dist/worker/render-main.js. */
  file: string;
  env: Record<string, string | undefined>;
  /** Node's own options before the file, e.g. `--max-old-space-size=512` (a heap limit). */
  nodeArgs?: string[];
  /** Waits before successive restarts; the last repeats. A run of a minute or more starts over. */
  restartDelaysMs?: number[];
  /** How long a stopping child may take before it is killed. */
  stopGraceMs?: number;
  /** Where the supervisor reports (default stderr). */
  report?: (line: string) => void;
}

export interface ChildRole {
  /** Resolves when the first child reports ready (it polls its task queue); rejects if it exits first. */
  ready: Promise<void>;
  /** The running child's process id, if one runs. */
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

const STABLE_RUN_MS = 60_000;

export function startChildRole(options: ChildRoleOptions): ChildRole {
  const delays = options.restartDelaysMs ?? [1000, 2000, 5000, 10_000, 30_000];
  const report = options.report ?? ((line: string) => process.stderr.write(`${line}\n`));
  let child: ChildProcess | undefined;
  let stopping = false;
  let restarts = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let exited: Promise<void> = Promise.resolve();
  let markReady: () => void = () => undefined;
  let failReady: (err: Error) => void = () => undefined;
  let isReady = false;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = () => {
      isReady = true;
      resolve();
    };
    failReady = reject;
  });

  const launch = () => {
    const started = Date.now();
    const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), options.file], {
      env: options.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    child = proc;
    proc.on('message', (message: { ready?: boolean }) => {
      if (message?.ready && !isReady) markReady();
    });
    exited = new Promise<void>((resolve) => {
      proc.once('exit', (code, signal) => {
        if (child === proc) child = undefined;
        resolve();
        if (stopping) return;
        const how = signal ? `signal ${signal}` : `code ${code}`;
        if (!isReady) {
          failReady(new Error(`${options.name} exited during start-up (${how})`));
          return;
        }
        if (Date.now() - started >= STABLE_RUN_MS) restarts = 0;
        const delay = delays[Math.min(restarts, delays.length - 1)];
        restarts += 1;
        report(
          [
            '',
            `!!! ${options.name} (pid ${proc.pid}) exited unexpectedly (${how}).`,
            `!!! Its work waits in Temporal; restarting it in ${Math.round(delay / 1000)} s (restart ${restarts}).`,
            '',
          ].join('\n'),
        );
        restartTimer = setTimeout(() => {
          restartTimer = undefined;
          if (!stopping) launch();
        }, delay);
      });
    });
    proc.once('error', (err) => report(`!!! ${options.name} could not be started: ${err.message}`));
  };

  launch();
  // Awaited by the caller at the right moment; a start-up failure before that is not unhandled.
  ready.catch(() => undefined);

  return {
    ready,
    get pid() {
      return child?.pid;
    },
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const grace = setTimeout(() => {
        report(`!!! ${options.name} did not stop within ${Math.round((options.stopGraceMs ?? 30_000) / 1000)} s: killing it`);
        proc.kill('SIGKILL');
      }, options.stopGraceMs ?? 30_000);
      await exited;
      clearTimeout(grace);
    },
  };
}
