import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client as PgClient } from 'pg';
import { renderDocument } from '../activities/rendering/render-document';
import { startApiServer } from '../api/server';
import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import type { TemplateDefinition } from '../domain/templates/template.types';
import { createWorkers } from '../worker/create-workers';
import { createServices } from '../platform/services';
import { installTemporalLogging } from '../platform/temporal';
import { freePort } from './embedded-postgres';
import { startEmbeddedTemporal } from './embedded-temporal';

/**
 * End-to-end generation benchmark: a batch of N PDF documents through the HTTP API, Temporal and
 * the renderer, next to the pure rendering rate of the same template through the same warm pool,
 * measured in the same run, so the orchestration overhead shows as a ratio.
 *
 *   npm run bench:generate [-- --n 500]
 * Needs Postgres (DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432) and the
 * Temporal CLI (a dev server is started); a scratch database is created and dropped.
 */

const N = Number(process.argv[process.argv.indexOf('--n') + 1]) || 500;
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const TEMPLATE = {
  name: 'Bench invoice',
  outputFormats: ['pdf'],
  schema: {
    pageSize: 'A4',
    footer: { right: 'Page {page} of {pages}' },
    sections: [
      {
        id: 'main',
        components: [
          { id: 'h', type: 'heading', props: { text: 'Invoice {{number}}', level: 1 } },
          { id: 'c', type: 'text', props: { text: 'Customer: {{customer}}' } },
          { id: 't', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Item', field: 'label' }, { header: 'Amount', field: 'amount', format: 'currency' }] } },
        ],
      },
    ],
  },
  variables: [
    { name: 'number', type: 'string', required: true },
    { name: 'customer', type: 'string', required: true },
    { name: 'items', type: 'array', required: true, items: { type: 'object', properties: [{ name: 'label', type: 'string' }, { name: 'amount', type: 'number' }] } },
  ],
};
const variables = (i: number) => ({ number: `INV-${i}`, customer: `Customer ${i}`, items: [{ label: 'Consulting', amount: 1200 + i }, { label: 'Travel', amount: 80 }] });

async function admin(sql: string): Promise<void> {
  const c = new PgClient({ connectionString: ADMIN_URL });
  await c.connect();
  await c.query(sql).finally(() => c.end());
}

async function main(): Promise<void> {
  const dbName = `formwork_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  installTemporalLogging('error');
  const dataDir = await mkdtemp(join(tmpdir(), 'formwork-bench-'));
  const port = await freePort();
  const temporal = await startEmbeddedTemporal({ dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default' });
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: dbUrl.toString(),
    TEMPORAL_ADDRESS: temporal.address,
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'error',
    FREE_DOCUMENTS_PER_MONTH: '1000000',
    BATCH_MAX_DOCUMENTS: String(Math.max(N, 1000)),
    RATE_LIMIT_JWT: '100000',
    RATE_LIMIT_API_KEY: '100000',
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
    const jwt = signup.accessToken;
    const template = await call('POST', '/api/templates', jwt, TEMPLATE);
    await call('POST', `/api/templates/${template.id}/publish`, jwt, {});
    const key = (await call('POST', '/api/api-keys', jwt, { name: 'bench' })).plainKey;

    // Baseline: the renderer alone, same template, same warm pool, at the pool's concurrency.
    const definition = TEMPLATE as unknown as TemplateDefinition;
    await renderDocument({ pdfRenderer: services.pdfRenderer, evaluator: services.evaluator }, { tenant: 'bench', template: definition, variables: variables(0), format: 'pdf' });
    const baseN = Math.min(N, 100);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: config.rendering.poolSize }, async () => {
        while (next < baseN) await renderDocument({ pdfRenderer: services.pdfRenderer, evaluator: services.evaluator }, { tenant: 'bench', template: definition, variables: variables(next++), format: 'pdf' });
      }),
    );
    const renderRate = baseN / ((performance.now() - t0) / 1000);

    // End to end: one batch request through the API, Temporal, the render workers and storage.
    const started = Date.now();
    const batch = await call('POST', '/api/documents/generate/batch', key, { templateId: template.id, format: 'pdf', documents: Array.from({ length: N }, (_, i) => ({ variables: variables(i) })) });
    for (;;) {
      const status = await call('GET', `/api/documents/batches/${batch.batchId}`, key);
      if (status.status === 'completed') {
        if (status.completedJobs !== N) throw new Error(`only ${status.completedJobs} of ${N} completed`);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const [{ last }] = await services.db.query(`SELECT max(completed_at) AS last FROM document_jobs WHERE batch_id = $1`, [batch.batchId]);
    const seconds = (new Date(last).getTime() - started) / 1000;
    const e2eRate = N / seconds;

    console.log(`bench:generate  ${N} PDF documents in one batch, render pool ${config.rendering.poolSize}, batch concurrency ${config.documents.batchConcurrency}`);
    console.log(`  renderer alone (warm pool, ${baseN} docs): ${renderRate.toFixed(2)} docs/s`);
    console.log(`  end to end (API → Temporal → render → storage): ${e2eRate.toFixed(2)} docs/s, request to last completed ${seconds.toFixed(1)} s`);
    console.log(`  orchestration overhead: end-to-end rate is ${((e2eRate / renderRate) * 100).toFixed(0)}% of the pure rendering rate (ratio ${(renderRate / e2eRate).toFixed(2)}x)`);
  } finally {
    await api.close();
    await workers.shutdown();
    await running;
    await services.close();
    await temporal.stop();
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
