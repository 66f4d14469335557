import { join } from 'node:path';
import type { TestApp } from './app';
import { spawnRole, type RoleProcess } from './role-process';

/**
 * The real main worker role (`node dist/worker/main.js`, as `npm run start:worker` runs it) as a
 * child process joining a test app (an API process, or a test app started with `worker: false`):
 * the app's database, Temporal server, task-queue prefix and storage directory. It polls the main
 * queue and bundles the workflows itself at start, as a deployed worker does.
 */
export type MainWorkerProcess = RoleProcess;

const ENTRY = join(__dirname, '..', '..', 'dist', 'worker', 'main.js');

/** Ready when the role logs that it polls its queues ("worker started"); it has no IPC `ready` message, so it runs at info. */
export function spawnMainWorker(app: TestApp, env: Record<string, string> = {}): MainWorkerProcess {
  return spawnRole('main worker', ENTRY, { ...app.env, LOG_LEVEL: 'info', ...env }, '"msg":"worker started"');
}
