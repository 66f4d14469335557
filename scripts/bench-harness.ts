import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { startApiServer } from '../api/server';
import { loadConfig, type Config } from '../domain/config';
import { createLogger } from '../domain/logger';
import { createWorkers } from '../worker/create-workers';
import { createServices, type Services } from '../platform/services';
import { installTemporalLogging } from '../platform/temporal';
import { freePort } from './free-port';
import { startEmbeddedTemporal } from './embedded-temporal';

/**
 * What the end-to-end benchmarks share: a scratch database on DATABASE_URL's server (default
 * postgres://postgres@127.0.0.1:5432), a Temporal dev server, the services with every worker in
 * this process, the API, and a verified user with a JWT. Everything is removed afterwards.
 */

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(sql: string): Promise<void> {
  const c = new PgClient({ connectionString: ADMIN_URL });
  await c.connect();
  await c.query(sql).finally(() => c.end());
}

export interface Bench {
  config: Config;
  services: Services;
  /** The scratch database's name (on DATABASE_URL's server). */
  dbName: string;
  /** The API's base URL (for processes the benchmark starts, like an agent). */
  url: string;
  jwt: string;
  call(method: string, path: string, token: string | undefined, body?: unknown): Promise<any>;
}

/** A benchmark's scratch database, data directory and Temporal dev server; `remove` drops them all. */
export interface BenchScratch {
  dbName: string;
  dbUrl: string;
  dataDir: string;
  temporalAddress: string;
  remove(): Promise<void>;
}

/** `inMemory`: a dev server that keeps nothing on disk (no fsync per write: bench:outbox measures starts). */
export async function benchScratch(opts: { inMemory?: boolean } = {}): Promise<BenchScratch> {
  const dbName = `formwork_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  installTemporalLogging('error');
  const dataDir = await mkdtemp(join(tmpdir(), 'formwork-bench-'));
  const temporal = await startEmbeddedTemporal({ dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default', inMemory: opts.inMemory });
  return {
    dbName,
    dbUrl: dbUrl.toString(),
    dataDir,
    temporalAddress: temporal.address,
    async remove() {
      await temporal.stop();
      await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function withBench(env: Record<string, string>, run: (bench: Bench) => Promise<void>): Promise<void> {
  const scratch = await benchScratch();
  const { dbName, dataDir } = scratch;
  const port = await freePort();
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: scratch.dbUrl,
    TEMPORAL_ADDRESS: scratch.temporalAddress,
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'error',
    RATE_LIMIT_JWT: '100000',
    RATE_LIMIT_API_KEY: '100000',
    ...env,
  });
  const services = await createServices(config, createLogger('error'));
  const workers = await createWorkers(services, { schedules: false });
  const running = workers.run();
  const api = await startApiServer(services);
  const call = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const res = await fetch(api.url + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const json = await res.json();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const signup = await call('POST', '/api/auth/signup', undefined, { email: `bench-${dbName}@example.com`, password: 'benchmark password', name: 'Bench' });
    await services.db.query(`UPDATE users SET email_verified_at = now()`);
    await run({ config, services, dbName, url: api.url, jwt: signup.accessToken, call });
  } finally {
    await api.close();
    await workers.shutdown();
    await running;
    await services.close();
    await scratch.remove();
  }
}
