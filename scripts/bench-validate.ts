import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../api/server';
import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { compileGate, validatePayload } from '../domain/flow/engine';
import { createWorkers } from '../worker/create-workers';
import { createServices } from '../platform/services';
import { installTemporalLogging } from '../platform/temporal';
import { flowRunWorkflowInput, startFlowRun } from '../platform/workflow-starts';
import { BENCH_PAYLOAD as PAYLOAD, BENCH_RULES as RULES, benchSchema, benchEnv, benchDatabase } from './bench-gate';
import { freePort } from './embedded-postgres';
import { startEmbeddedTemporal } from './embedded-temporal';

/**
 * `npm run bench:validate`: POST /api/flow/gates/:id/validate under 32 concurrent clients for
 * BENCH_SECONDS (default 10) against the whole in-process service (fresh Postgres database,
 * Temporal dev server, worker), next to the bare validation function measured in the same run,
 * and what a Temporal workflow start costs (why run workflows start off the response path).
 *
 * Postgres: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres); a
 * database is created for the run and dropped after. Temporal: TEMPORAL_ADDRESS, else a dev server.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (n: number, d = 1) => n.toFixed(d);

async function bareValidation(ms: number): Promise<{ opsPerSec: number; usPerOp: number }> {
  const gate = compileGate({ validationMode: 'variables', schema: benchSchema(), businessRules: RULES, freetextConfig: null });
  const first = await validatePayload(gate, PAYLOAD);
  if (!first.valid) throw new Error(`bench payload is invalid: ${JSON.stringify(first.details)}`);
  for (let i = 0; i < 500; i += 1) await validatePayload(gate, PAYLOAD);
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 100; i += 1) await validatePayload(gate, PAYLOAD);
    n += 100;
  }
  const elapsed = performance.now() - start;
  return { opsPerSec: (n / elapsed) * 1000, usPerOp: (elapsed * 1000) / n };
}

async function load(url: string, key: string, seconds: number): Promise<{ rps: number; p50: number; p99: number; errors: number; count: number }> {
  const body = JSON.stringify(PAYLOAD);
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      await res.arrayBuffer();
      if (res.status !== 200) errors += 1;
      latencies.push(performance.now() - t);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: pct(latencies, 50), p99: pct(latencies, 99), errors, count: latencies.length };
}

async function main(): Promise<void> {
  installTemporalLogging('error');
  const database = await benchDatabase();

  const dataDir = await mkdtemp(join(tmpdir(), 'formwork-bench-'));
  const temporal = process.env.TEMPORAL_ADDRESS
    ? undefined
    : await startEmbeddedTemporal({ dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default' });
  const port = await freePort();
  const config = loadConfig(benchEnv({ dataDir, databaseUrl: database.url, port, temporalAddress: process.env.TEMPORAL_ADDRESS ?? temporal!.address }));
  const services = await createServices(config, createLogger('silent'));
  const workers = await createWorkers(services);
  void workers.run();
  const api = await startApiServer(services, {}, port, '127.0.0.1');
  let report: string[] = [];
  try {
    const call = async (method: string, path: string, token: string | undefined, body: unknown) => {
      const res = await fetch(api.url + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      const json = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const signup = await call('POST', '/api/auth/signup', undefined, { email: `bench-${randomBytes(3).toString('hex')}@example.com`, password: 'correct horse battery', name: 'Bench' });
    await services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [signup.user.id]);
    const key = await call('POST', '/api/api-keys', signup.accessToken, { name: 'bench' });
    // Scale: unlimited runs and a 500K content limit, so the plan never refuses the load.
    await services.db.query(`UPDATE projects SET plan = 'scale' WHERE id = $1`, [key.teamId]);
    const gate = await call('POST', '/api/flow/gates', key.plainKey, { name: 'Bench', schema: benchSchema(), businessRules: RULES });
    const delivering = await call('POST', '/api/flow/gates', key.plainKey, {
      name: 'Bench delivering',
      schema: benchSchema(),
      businessRules: RULES,
      deliveryChannels: [{ type: 'webhook', url: 'https://hooks.example.com/bench', secret: 'bench-secret-123' }],
    });

    const bare = await bareValidation(3000);
    await load(`${api.url}/api/flow/gates/${gate.id}/validate`, key.plainKey, 2); // warm-up
    const http = await load(`${api.url}/api/flow/gates/${gate.id}/validate`, key.plainKey, SECONDS);
    const withWorkflow = await load(`${api.url}/api/flow/gates/${delivering.id}/validate`, key.plainKey, Math.max(3, SECONDS / 2));
    const [{ started, pending }] = await services.db.query(
      `SELECT count(*) FILTER (WHERE NOT workflow_pending)::int AS started, count(*) FILTER (WHERE workflow_pending)::int AS pending FROM flow_runs WHERE gate_id = $1`,
      [delivering.id],
    );

    // The cost a synchronous start would add to every response: one start at a time, then 32 at once.
    const startOnce = async (i: number) => {
      const t = performance.now();
      // A queue nobody polls: only the start is measured. The run ids name no row.
      await startFlowRun(
        { temporal: services.temporal, taskQueue: `${services.taskQueues.main}-idle` },
        { id: `bench-start-${database.name}-${i}`, projectId: 'bench' },
        flowRunWorkflowInput(services),
      );
      return performance.now() - t;
    };
    const sequential: number[] = [];
    for (let i = 0; i < 50; i += 1) sequential.push(await startOnce(i));
    sequential.sort((a, b) => a - b);
    const burstStart = performance.now();
    const burst = await Promise.all(Array.from({ length: 64 }, (_, i) => startOnce(1000 + i)));
    const burstSecs = (performance.now() - burstStart) / 1000;
    burst.sort((a, b) => a - b);

    report = [
      `Flow validate benchmark: gate with 20 fields and 5 rules, ${CONCURRENCY} concurrent clients, ${SECONDS} s`,
      `  bare validation function : ${fmt(bare.opsPerSec, 0)} ops/s, ${fmt(bare.usPerOp)} µs/op (one core, same process)`,
      `  POST /validate           : ${fmt(http.rps, 0)} req/s, p50 ${fmt(http.p50)} ms, p99 ${fmt(http.p99)} ms (${http.count} requests, ${http.errors} non-200)`,
      `  POST /validate + workflow: ${fmt(withWorkflow.rps, 0)} req/s, p50 ${fmt(withWorkflow.p50)} ms, p99 ${fmt(withWorkflow.p99)} ms (${withWorkflow.errors} non-200); workflows started during the load ${started}, still pending ${pending} (started in the background / by the sweep)`,
      `  workflow start alone     : sequential p50 ${fmt(pct(sequential, 50))} ms, p99 ${fmt(pct(sequential, 99))} ms; 64 at once: ${fmt(64 / burstSecs, 0)} starts/s, p50 ${fmt(pct(burst, 50))} ms, p99 ${fmt(pct(burst, 99))} ms`,
    ];
  } finally {
    await api.close();
    await workers.shutdown();
    await services.close();
    await temporal?.stop();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
  // After teardown, so the dev server's shutdown chatter does not bury the figures.
  process.stdout.write(`${report.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
