import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Router from '@koa/router';
import Koa from 'koa';
import { startApiServer } from '../api/server';
import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { compileGate, validatePayload } from '../domain/flow/engine';
import { createWorkers } from '../worker/create-workers';
import { createServices } from '../platform/services';
import { installTemporalLogging } from '../platform/temporal';
import { flowRunWorkflowInput, startFlowRun } from '../platform/workflow-starts';
import { BENCH_PAYLOAD as PAYLOAD, BENCH_RULES as RULES, benchSchema, benchEnv, benchDatabase } from './bench-gate';
import { addCpu, formatCpu, withCpu, type CpuUsage } from './bench-cpu';
import { mergeLoads, runLoad, type LoadResult, type LoadSpec } from './bench-load';
import { freePort } from './free-port';
import { startEmbeddedTemporal } from './embedded-temporal';

/**
 * `npm run bench:validate` (issue 17, goal 3; docs/performance.md, "Request path"): the whole
 * in-process service (fresh Postgres database, Temporal dev server, worker) under CONCURRENCY
 * clients (default 32) for BENCH_SECONDS (default 10) per phase, every figure next to the baseline
 * it is judged against, measured in the same run:
 * - (b) POST /api/flow/gates/:id/validate against a baseline route mounted by this script on the
 *   same app, behind the same middleware (request id, metrics, security headers, error renderer,
 *   credentials, rate limit, body parser) and the same Flow guard, that inserts one row per request:
 *   throughput >= 60 % of it, p99 <= 2x its p99;
 * - (c) the same with a gate whose runs start a workflow: throughput >= 80 % of (b);
 * - (d) an authenticated GET /api/flow/gates/:id against a bare Koa route answering the same JSON
 *   from the same process: >= 50 % of its throughput;
 * - (a) the bare engine against a hand-written validator (scripts/bench-validate-engine.ts, when present).
 * The load runs on a worker thread (scripts/bench-load.ts), not on the API's event loop.
 *
 * Postgres: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres); a
 * database is created for the run and dropped after. Temporal: TEMPORAL_ADDRESS, else a dev server.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WARM_SECONDS = Math.min(2, SECONDS);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (n: number, d = 1) => n.toFixed(d);
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

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

interface EngineFigures {
  engineUs: number;
  handWrittenUs: number;
  ratio: number;
}

/** Goal 3(a), from scripts/bench-validate-engine.ts when that benchmark exists in this checkout. */
async function engineFigures(): Promise<EngineFigures | undefined> {
  // A path the compiler does not resolve: this benchmark runs whether or not that file exists.
  const path = './bench-validate-engine';
  let mod: { measureEngine?: () => Promise<EngineFigures> };
  try {
    mod = (await import(path)) as typeof mod;
  } catch {
    return undefined;
  }
  return mod.measureEngine?.();
}

type Phase = Omit<LoadSpec, 'clients' | 'seconds'>;

/**
 * Each phase warmed up, then all measured in ROUNDS interleaved slices (a, b, c, a, b, c, ...): on a
 * shared machine the load of other work comes and goes, and this way it falls on every phase alike,
 * so the ratios hold although the absolute figures move.
 */
async function measureInterleaved<K extends string>(phases: Record<K, Phase>): Promise<{ loads: Record<K, LoadResult>; cpu: Record<K, CpuUsage> }> {
  const names = Object.keys(phases) as K[];
  for (const name of names) await runLoad({ ...phases[name], clients: CONCURRENCY, seconds: WARM_SECONDS });
  const slices = Object.fromEntries(names.map((n) => [n, [] as LoadResult[]])) as unknown as Record<K, LoadResult[]>;
  const cpuSlices = Object.fromEntries(names.map((n) => [n, [] as CpuUsage[]])) as unknown as Record<K, CpuUsage[]>;
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const name of names) {
      const { result, cpu } = await withCpu(() => runLoad({ ...phases[name], clients: CONCURRENCY, seconds: SECONDS / ROUNDS }));
      slices[name].push(result);
      cpuSlices[name].push(cpu);
    }
  }
  return {
    loads: Object.fromEntries(names.map((n) => [n, mergeLoads(slices[n])])) as unknown as Record<K, LoadResult>,
    cpu: Object.fromEntries(names.map((n) => [n, addCpu(cpuSlices[n])])) as unknown as Record<K, CpuUsage>,
  };
}

const line = (r: LoadResult) => {
  const odd = Object.entries(r.unexpected);
  return `${fmt(r.rps, 0)} req/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms (${r.count} requests${odd.length ? `, unexpected: ${odd.map(([s, n]) => `${n}x ${s}`).join(', ')}` : ''})`;
};

const listen = async (server: Server) => {
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
};

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

  // The product's app, plus the baseline route (goal 3b) that exists only here: mounted after every
  // product router, so it passes all of the app's middleware, behind the guard of Flow submissions.
  await services.db.query(`CREATE TABLE bench_baseline_rows (id uuid PRIMARY KEY, project_id uuid NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
  let gateJson = '{}';
  const extraRouters = ({ flowWrite }: { flowWrite: Koa.Middleware }) => {
    const baseline = new Router();
    // The request stack alone (a diagnostic of 3d): every middleware and the Flow guard, then the gate's JSON from memory.
    baseline.get('/bench/stack', flowWrite, (ctx) => {
      ctx.type = 'application/json';
      ctx.body = gateJson;
    });
    baseline.post('/bench/baseline', flowWrite, async (ctx) => {
      const id = randomUUID();
      const { projectId } = ctx.state.scope as { projectId: string };
      await services.db.query(`INSERT INTO bench_baseline_rows (id, project_id, payload) VALUES ($1, $2, $3)`, [id, projectId, JSON.stringify(ctx.request.body)]);
      ctx.body = { id, stored: true };
    });
    return [baseline];
  };
  const api = await startApiServer(services, { extraRouters }, port, '127.0.0.1');
  const apiUrl = api.url;

  // The bare route (goal 3d): Koa with nothing but a handler, in the same process, answering the gate's JSON.
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.type = 'application/json';
    ctx.body = gateJson;
  });
  const bareServer = bare.listen(0, '127.0.0.1');
  const bareUrl = await listen(bareServer);

  try {
    const call = async (method: string, path: string, token: string | undefined, body: unknown) => {
      const res = await fetch(apiUrl + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      const json = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const signup = await call('POST', '/api/auth/signup', undefined, { email: `bench-${randomBytes(3).toString('hex')}@example.com`, password: 'correct horse battery', name: 'Bench' });
    await services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [signup.user.id]);
    const key = await call('POST', '/api/api-keys', signup.accessToken, { name: 'bench', permissions: { manage_gates: true } });
    // Scale: unlimited runs and a 500K content limit, so the plan never refuses the load.
    await services.db.query(`UPDATE projects SET plan = 'scale' WHERE id = $1`, [key.teamId]);
    const gate = await call('POST', '/api/flow/gates', key.plainKey, { name: 'Bench', schema: benchSchema(), businessRules: RULES });
    const delivering = await call('POST', '/api/flow/gates', key.plainKey, {
      name: 'Bench delivering',
      schema: benchSchema(),
      businessRules: RULES,
      deliveryChannels: [{ type: 'webhook', url: 'https://hooks.example.com/bench', secret: 'bench-secret-123' }],
    });
    gateJson = JSON.stringify(await (await fetch(`${apiUrl}/api/flow/gates/${gate.id}`, { headers: { authorization: `Bearer ${key.plainKey}` } })).json());

    const engine = await engineFigures();
    const bareFn = await bareValidation(3000);
    const auth = { authorization: `Bearer ${key.plainKey}` };
    const post = { method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(PAYLOAD) };

    // Two groups. The runs of the delivering gate leave Temporal a backlog (each run's workflow and its
    // webhook retries) that would load every phase measured after them, the bare route included: so
    // (b) and (d) are measured first, without it, then (c) against /validate measured again beside it.
    const measured = await measureInterleaved({
      bareRoute: { origin: bareUrl, path: '/', method: 'GET' },
      stack: { origin: apiUrl, path: '/bench/stack', method: 'GET', headers: auth },
      getGate: { origin: apiUrl, path: `/api/flow/gates/${gate.id}`, method: 'GET', headers: auth },
      baselineRoute: { origin: apiUrl, path: '/bench/baseline', ...post },
      validate: { origin: apiUrl, path: `/api/flow/gates/${gate.id}/validate`, ...post },
    });
    const { bareRoute, stack, getGate, baselineRoute, validate } = measured.loads;

    // The cost a synchronous start would add to every response, on a quiet Temporal: one start at a
    // time, then 64 at once.
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

    const withStarts = await measureInterleaved({
      validateAgain: { origin: apiUrl, path: `/api/flow/gates/${gate.id}/validate`, ...post },
      withWorkflow: { origin: apiUrl, path: `/api/flow/gates/${delivering.id}/validate`, ...post },
    });
    const { validateAgain, withWorkflow } = withStarts.loads;
    const [{ started, pending }] = await services.db.query(
      `SELECT count(*) FILTER (WHERE NOT workflow_pending)::int AS started, count(*) FILTER (WHERE workflow_pending)::int AS pending FROM flow_runs WHERE gate_id = $1`,
      [delivering.id],
    );

    const b = validate.rps / baselineRoute.rps;
    const bP99 = validate.p99 / baselineRoute.p99;
    const c = withWorkflow.rps / validateAgain.rps;
    const d = getGate.rps / bareRoute.rps;
    const report = [
      `Flow validate benchmark: gate with 20 fields and 5 rules, ${CONCURRENCY} concurrent clients, ${SECONDS} s per phase in ${ROUNDS} interleaved slices (after ${WARM_SECONDS} s warm-up each), load on its own thread`,
      engine
        ? `  (a) engine                : ${fmt(engine.engineUs)} µs against hand-written ${fmt(engine.handWrittenUs)} µs: ${fmt(engine.ratio, 2)}x (goal <= 3x: ${verdict(engine.ratio <= 3)})`
        : `  (a) engine                : scripts/bench-validate-engine.ts is not in this checkout (npm run bench:validate-engine)`,
      `  bare validation function : ${fmt(bareFn.opsPerSec, 0)} ops/s, ${fmt(bareFn.usPerOp)} µs/op (one core, same process)`,
      `  bare Koa route (GET)     : ${line(bareRoute)}`,
      `  stack only (GET, no DB)  : ${line(stack)}`,
      `  GET /api/flow/gates/:id  : ${line(getGate)}`,
      `  baseline POST (1 insert) : ${line(baselineRoute)}`,
      `  POST /validate           : ${line(validate)}`,
      `  then, without the backlog of workflows before them:`,
      `  POST /validate (again)   : ${line(validateAgain)}`,
      `  POST /validate + workflow: ${line(withWorkflow)}; workflows started during the load ${started}, still pending ${pending} (started in the background / by the sweep)`,
      `  workflow start alone     : sequential p50 ${fmt(pct(sequential, 50))} ms, p99 ${fmt(pct(sequential, 99))} ms; 64 at once: ${fmt(64 / burstSecs, 0)} starts/s, p50 ${fmt(pct(burst, 50))} ms, p99 ${fmt(pct(burst, 99))} ms`,
      `  (b) validate / baseline  : throughput ${fmt(b * 100, 0)} % (goal >= 60 %: ${verdict(b >= 0.6)}), p99 ${fmt(bP99, 2)}x (goal <= 2x: ${verdict(bP99 <= 2)})`,
      `  (c) + workflow / validate: throughput ${fmt(c * 100, 0)} % (goal >= 80 %: ${verdict(c >= 0.8)})`,
      `  (d) GET gate / bare route: throughput ${fmt(d * 100, 0)} % (goal >= 50 %: ${verdict(d >= 0.5)}); the stack alone (every middleware, credentials ${config.apiKeys.credentialCacheTtlMs > 0 ? 'from the cache' : 'read from the database (CREDENTIAL_CACHE_TTL_MS=0)'}, no route work): ${fmt((stack.rps / bareRoute.rps) * 100, 0)} %`,
      `  Where the cores went in each phase (/proc, every process on the machine; scripts/bench-cpu.ts):`,
      ...(['bareRoute', 'stack', 'getGate', 'baselineRoute', 'validate'] as const).flatMap((phase) => [`    ${phase}:`, ...formatCpu(measured.cpu[phase])]),
      ...(['validateAgain', 'withWorkflow'] as const).flatMap((phase) => [`    ${phase}:`, ...formatCpu(withStarts.cpu[phase])]),
    ];
    // Before teardown: the figures stand even if stopping the service under its workflow backlog fails.
    process.stdout.write(`${report.join('\n')}\n`);
  } finally {
    await api.close();
    await new Promise<void>((resolve) => bareServer.close(() => resolve()));
    await workers.shutdown();
    await services.close();
    await temporal?.stop();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
