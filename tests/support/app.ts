import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../api/server';
import type { AppOptions } from '../../api/app';
import { loadConfig } from '../../domain/config';
import { createLogger } from '../../domain/logger';
import { captureHistories } from './histories';
import { createWorkers, type QueueRole, type WorkerSet } from '../../worker/create-workers';
import { createServices, type Services } from '../../platform/services';
import { installTemporalLogging } from '../../platform/temporal';
import { createTestDatabase } from './database';
import { startSmtpServer, type SmtpTestServer } from './smtp-server';

export interface TestApp {
  url: string;
  services: Services;
  /** The environment the app was configured from: what another process role needs to join it. */
  env: Record<string, string>;
  smtp?: SmtpTestServer;
  dataDir: string;
  request: RequestFn;
  /**
   * Waits until the API has received every credential change committed so far. A test that changes
   * a key, member, account or project with SQL calls it before its next request: the API's
   * credential cache drops the old value when Postgres delivers the notification, not before.
   */
  syncCredentials(): Promise<void>;
  /** Stops the in-process Temporal workers (as a worker shutdown would); work waits in Temporal. */
  stopWorker(): Promise<void>;
  /** Starts a fresh set of workers, like a new worker process taking over. */
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export type RequestFn = <T = any>(
  method: string,
  path: string,
  opts?: { token?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> },
) => Promise<TestResponse<T>>;

export interface TestAppOptions {
  /** Extra environment, as an operator would set it. */
  env?: Record<string, string>;
  /** Start a real SMTP server and point SMTP_URL at it (default true). */
  smtp?: boolean;
  /** Run a Temporal worker in-process (default true). */
  worker?: boolean;
  /** The task queues the in-process worker polls (default all three; `['main']` when a render-worker process joins). */
  queues?: QueueRole[];
  appOptions?: AppOptions;
  /** Create the maintenance schedule (default false: tests run maintenance directly). */
  schedules?: boolean;
}

/**
 * The real service on a free port: its own Postgres database, the run's Temporal dev server (with
 * a task-queue prefix of its own so test files never take each other's tasks), local storage in
 * a temp dir, and a real SMTP server.
 */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  installTemporalLogging(process.env.TEST_LOG_LEVEL ?? 'warn');
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'formwork-test-'));
  const smtp = opts.smtp === false ? undefined : await startSmtpServer();
  // Bound now, served once the app is built: a port only looked up here could be taken by another
  // process (a second test run) before the API listens on it (EADDRINUSE under load).
  const listener = createServer();
  await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  // A start that fails below (a configuration a test expects to be refused) leaves nothing holding the process.
  listener.unref();
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '5',
    ...(process.env.TEST_TEMPORAL_ADDRESS ? { TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS } : {}),
    TEMPORAL_TASK_QUEUE_PREFIX: `t-${randomBytes(4).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Generous limits: rate-limit tests set their own.
    RATE_LIMIT_ANONYMOUS: '100000',
    RATE_LIMIT_JWT: '100000',
    RATE_LIMIT_API_KEY: '100000',
    ...(smtp ? { SMTP_URL: smtp.url } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const services = await createServices(config, createLogger(config.logLevel));
  let workers: WorkerSet | undefined;
  const startWorker = async () => {
    workers = await createWorkers(services, { queues: opts.queues, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, schedules: opts.schedules ?? false });
    void workers.run();
  };
  const stopWorker = async () => {
    await workers?.shutdown();
    workers = undefined;
  };
  if (opts.worker !== false) await startWorker();
  const api = await startApiServer(services, opts.appOptions, listener, '127.0.0.1');
  // The keep-alive race: the server closes a connection idle for keepAliveTimeout (Node's 5 s), the
  // test's fetch (undici) keeps one for that hint less a second, checked by a coarse timer, so a
  // request sent on a connection idle for about 5 s could meet the close (ECONNRESET, "fetch
  // failed"; png.test in CI). Past undici's own cap (600 s) the client always lets go first. Idle
  // connections are closed by close() (closeIdleConnections), not left behind.
  api.server.keepAliveTimeout = 15 * 60 * 1000;
  const request = makeRequest(api.url);
  return {
    url: api.url,
    services,
    env,
    smtp,
    dataDir,
    request,
    syncCredentials: api.syncCredentials,
    stopWorker,
    startWorker,
    async close() {
      // Which step a slow close is in, said once a minute (an afterAll that times out says nothing more).
      let step = 'the API server';
      const started = Date.now();
      const said = setInterval(() => console.warn(`closing the test app: still at ${step} after ${Math.round((Date.now() - started) / 1000)} s`), 60_000);
      said.unref();
      try {
        await api.close();
        step = 'the Temporal workers';
        await workers?.shutdown();
        step = 'capturing histories';
        await captureHistories(services.temporal, services.taskQueues.main);
        step = 'the services';
        await services.close();
        step = 'the SMTP server';
        await smtp?.stop();
        step = 'dropping the database';
        await database.drop();
        await rm(dataDir, { recursive: true, force: true });
      } finally {
        clearInterval(said);
      }
    },
  };
}

export function makeRequest(baseUrl: string): RequestFn {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Uint8Array | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };
}
