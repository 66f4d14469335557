import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../scripts/free-port';
import type { TestApp } from './app';
import { makeRequest } from './app';
import { createTestDatabase } from './database';
import { loadConfig } from '../../domain/config';
import { createLogger } from '../../domain/logger';
import { createServices } from '../../platform/services';
import { installTemporalLogging } from '../../platform/temporal';
import { createWorkers, type QueueRole } from '../../worker/create-workers';
import { waitFor } from './wait';

/**
 * The real API role (`node dist/api/main.js`, as `npm run start:api` runs it) in a process of its
 * own, against a fresh database and the run's Temporal server: what a client of a deployed API sees,
 * measured without the test's own work on the same event loop. `app` offers what the flow and
 * identity helpers use (requests, and SQL for the few rows they set directly), and the role's `env`
 * and `dataDir`, so worker roles (spawnRenderWorker, spawnMainWorker) can join it.
 */
export interface ApiProcess {
  url: string;
  /** The role's process id (its main thread's task id too, for /proc/<pid>/task/<pid>/stat). */
  pid: number;
  app: TestApp;
  output(): string;
  /** Sends the process `signal` (SIGKILL: a crash, in the kill tests) and resolves once it exited; `close` still cleans up. */
  kill(signal: NodeJS.Signals): Promise<void>;
  close(): Promise<void>;
}

const ENTRY = join(__dirname, '..', '..', 'dist', 'api', 'main.js');

export async function startApiProcess(env: Record<string, string> = {}): Promise<ApiProcess> {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npm run build\` first`);
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'formwork-api-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The role's own configuration (without the inherited environment): what a worker role needs to join it.
  const roleEnv: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: url,
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '5',
    ...(process.env.TEST_TEMPORAL_ADDRESS ? { TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS } : {}),
    TEMPORAL_TASK_QUEUE_PREFIX: `t-${randomBytes(4).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'error',
    RATE_LIMIT_ANONYMOUS: '100000',
    RATE_LIMIT_JWT: '100000',
    RATE_LIMIT_API_KEY: '100000',
    ...env,
  };
  const child = spawn(process.execPath, [ENTRY], { env: { ...process.env, ...roleEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout!.on('data', (d: Buffer) => (printed += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (printed += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const sql = new Client({ connectionString: database.url });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await sql.end().catch(() => undefined);
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`the API process exited:\n${printed}`);
        return (await fetch(`${url}/api/health`).catch(() => undefined))?.ok;
      },
      { timeoutMs: 30_000, what: 'the API process to answer /api/health' },
    );
    await sql.connect();
  } catch (err) {
    await close();
    throw err;
  }
  const app = { url, env: roleEnv, dataDir, request: makeRequest(url), services: { db: { query: async (text: string, params?: unknown[]) => (await sql.query(text, params)).rows } } } as unknown as TestApp;
  const kill = async (signal: NodeJS.Signals) => {
    child.kill(signal);
    await exited;
  };
  return { url, pid: child.pid!, app, output: () => printed, kill, close };
}

/**
 * Temporal workers in the test's own process joining an API process (its database, Temporal server,
 * task-queue prefix and storage): the work they take is measured apart from the API's, and they
 * start in a second with the run's prebuilt workflow bundle (a spawned role bundles its own).
 */
export async function startWorkersFor(app: TestApp, queues: QueueRole[]): Promise<{ close(): Promise<void> }> {
  installTemporalLogging(process.env.TEST_LOG_LEVEL ?? 'warn');
  const config = loadConfig({ ...app.env, LOG_LEVEL: 'error' });
  const services = await createServices(config, createLogger(config.logLevel));
  const workers = await createWorkers(services, { queues, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, schedules: false });
  const running = workers.run();
  return {
    async close() {
      await workers.shutdown();
      await running;
      await services.close();
    },
  };
}
