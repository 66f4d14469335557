import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { BENCH_PAYLOAD, BENCH_RULES, benchSchema, benchEnv, benchDatabase } from './bench-gate';

/**
 * `npm run bench:hostile`: does one tenant's hostile input slow down another tenant's honest
 * traffic? In one run against the whole in-process service (fresh Postgres database, Temporal dev
 * server or TEMPORAL_ADDRESS, API on this process's event loop):
 *
 * - phase 1: project A's honest load alone: BENCH_CONCURRENCY (32) clients POST
 *   /api/flow/gates/:id/validate on the 20-field, 5-rule gate of bench-validate, BENCH_SECONDS (10) s;
 * - phase 2: the same honest load while BENCH_HOSTILE (4) clients of project B (its own user and
 *   API key) send, in a loop, dry runs (`/test`) of runaway JSONata (endless recursion, a sort of
 *   100,000 numbers with a JSONata comparator), a 200 MB string bomb, a 1 MB text against 40
 *   freetext patterns, and template checks (`/api/templates/validate-schema`) of a ~5 MB template
 *   and of text props of `{{` and 99,000 spaces.
 *
 * Per phase: honest requests/s, p50/p99 latency, answers other than 200/422, the hostile answers
 * by kind and status, and the API event loop's delay (monitorEventLoopDelay). Then the ratio of
 * the honest p99s against the goal of issue 10 (≤ 1.5×); a miss is printed, not an exit code.
 *
 * The clients run in two worker threads (one honest, one hostile), so the main thread's event loop
 * is the API's alone and its measured delay is the API's, and building and sending the hostile
 * bodies does not delay the honest clients. Validation of gates with nothing after it starts no
 * workflow, so no Temporal worker runs; Temporal is only there because the services connect to it.
 *
 * Postgres: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres); a
 * database is created for the run and dropped after.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const HOSTILE_CLIENTS = Number(process.env.BENCH_HOSTILE ?? 4);
/** No single request may hold a client longer than this (a hang is reported as `timeout`). */
const REQUEST_TIMEOUT_MS = 30_000;
/** Sampling interval of the event-loop delay histogram; the delay is what exceeds it. */
const ELD_RESOLUTION_MS = 10;
/** Longest wait for each teardown step (server, services, Temporal, database). */
const TEARDOWN_STEP_MS = 15_000;

const pct = (sorted: number[], p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const fmt = (n: number, d = 1) => n.toFixed(d);

// ---------------------------------------------------------------------------------------------
// Hostile requests (project B)
// ---------------------------------------------------------------------------------------------

/** The gates project B creates: one per kind of runaway work, and a freetext gate with 40 patterns. */
function hostileGates(): Record<'recursion' | 'sort' | 'memory' | 'freetext', Record<string, unknown>> {
  const schema = { type: 'object', properties: { n: { type: 'number' } } };
  const rule = (id: string, expression: string) => ({ id, expression, message: `${id} failed` });
  return {
    recursion: { name: 'Hostile recursion', schema, businessRules: [rule('recurse', '($f := function($n){ $f($n + 1) }; $f(0))')] },
    sort: { name: 'Hostile sort', schema, businessRules: [rule('sort', '$count($sort([1..100000], function($a, $b){ $a < $b })) > 0')] },
    memory: { name: 'Hostile memory', schema, businessRules: [rule('bomb', '$length($uppercase($pad("", 200000000))) > 0')] },
    freetext: {
      name: 'Hostile freetext',
      validationMode: 'freetext',
      freetextConfig: {
        // Required: each found only near the end of the text, so each scans all of it.
        requiredPatterns: Array.from({ length: 20 }, (_, i) => `needle${i}[ \\t]+[0-9]{3}\\b`),
        // Forbidden: never found, so each scans all of it, with classes and bounded repeats.
        forbiddenPatterns: Array.from({ length: 20 }, (_, i) => `(?:[a-z]+[ ,]){3}forbidden${i}[0-9]{2,4}|[A-Z]{4,}${i}x{2,}`),
      },
    },
  };
}

/** ~1 MB of lower-case words, the required needles at the end. */
function freetextBody(bytes = 1_000_000): string {
  const words = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'do', 'eiusmod', 'tempor'];
  const tail = Array.from({ length: 20 }, (_, i) => `needle${i} 123`).join('\n');
  const parts: string[] = [];
  let size = tail.length + 1;
  for (let i = 0; size < bytes; i += 1) {
    const w = words[(i * 7 + (i >> 3)) % words.length] + (i % 13 === 12 ? '\n' : ' ');
    parts.push(w);
    size += w.length;
  }
  return `${parts.join('').slice(0, bytes - tail.length - 1)}\n${tail}`;
}

/** A ~5 MB template: 4 sections of 1,000 text components, each `{{` and 1,248 spaces. */
function bigTemplateBody(): unknown {
  const text = `{{${' '.repeat(1248)}`;
  return {
    templateType: 'pdf',
    schema: {
      pageSize: 'A4',
      sections: Array.from({ length: 4 }, (_, s) => ({
        id: `s${s}`,
        title: 'Big',
        components: Array.from({ length: 1000 }, (_, i) => ({ id: `t${s}_${i}`, type: 'text', props: { text } })),
      })),
    },
  };
}

/** Ten text props of `{{` and 99,000 spaces (within the 100,000-character prop limit), a header too. */
function spacesTemplateBody(): unknown {
  return {
    templateType: 'pdf',
    schema: {
      pageSize: 'A4',
      header: { left: `{{${' '.repeat(998)}` },
      sections: [{ id: 'main', title: 'Letter', components: Array.from({ length: 10 }, (_, i) => ({ id: `t${i}`, type: 'text', props: { text: `{{${' '.repeat(99_000)}` } })) }],
    },
  };
}

interface HostileRequest {
  kind: string;
  path: string;
  contentType: string;
  body: Uint8Array<ArrayBuffer>;
}

/** Every hostile request, body encoded once. `gates` maps the hostileGates() names to gate ids. */
function hostileRequests(gates: Record<string, string>): HostileRequest[] {
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  return [
    { kind: 'test: endless recursion', path: `/api/flow/gates/${gates.recursion}/test`, contentType: 'application/json', body: json({ n: 1 }) },
    { kind: 'test: sort 100k, JSONata comparator', path: `/api/flow/gates/${gates.sort}/test`, contentType: 'application/json', body: json({ n: 1 }) },
    { kind: 'test: $pad 200 MB bomb', path: `/api/flow/gates/${gates.memory}/test`, contentType: 'application/json', body: json({ n: 1 }) },
    { kind: 'test: 1 MB text, 40 patterns', path: `/api/flow/gates/${gates.freetext}/test`, contentType: 'text/plain', body: new TextEncoder().encode(freetextBody()) },
    { kind: 'validate-schema: 5 MB template', path: '/api/templates/validate-schema', contentType: 'application/json', body: json(bigTemplateBody()) },
    { kind: 'validate-schema: {{ + 99k spaces', path: '/api/templates/validate-schema', contentType: 'application/json', body: json(spacesTemplateBody()) },
  ];
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What a hostile answer was: status, error code, and for 200s what the check said. */
function describeAnswer(status: number, body: any): string {
  if (status >= 300) return `${status} ${body?.code ?? ''}`.trim();
  if (Array.isArray(body?.steps)) {
    const error = body.steps.find((s: any) => s.status === 'error');
    if (error) {
      // "<rule message> (rule could not be evaluated: <reason>)": the reason is what tells kinds apart.
      const message = String(error.errors?.[0]?.message ?? '');
      const rule = message.match(/\(rule could not be evaluated: (.*)\)$/);
      return `${status} step error: ${(rule ? rule[1] : message.replace(/^could not be checked: /, '')).slice(0, 90)}`;
    }
    return `${status} ${body.valid ? 'valid' : 'invalid'}`;
  }
  if (typeof body?.valid === 'boolean') return `${status} ${body.valid ? 'valid' : 'invalid'}`;
  return String(status);
}

// ---------------------------------------------------------------------------------------------
// Client threads
// ---------------------------------------------------------------------------------------------

interface HonestResult {
  latencies: number[];
  errors: number;
  statuses: Record<string, number>;
  elapsedMs: number;
}

interface HostileResult {
  byKind: Record<string, { latencies: number[]; answers: Record<string, number> }>;
}

type ThreadParams =
  | { role: 'honest'; url: string; key: string; seconds: number; concurrency: number }
  | { role: 'hostile'; baseUrl: string; key: string; gates: Record<string, string>; seconds: number; concurrency: number };

async function honestClients(p: Extract<ThreadParams, { role: 'honest' }>, go: Promise<void>): Promise<HonestResult> {
  const body = JSON.stringify(BENCH_PAYLOAD);
  const headers = { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' };
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  await go;
  const start = performance.now();
  const deadline = start + p.seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      let status: string;
      try {
        const res = await fetch(p.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        await res.arrayBuffer();
        status = String(res.status);
      } catch (err) {
        status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'network error';
      }
      latencies.push(performance.now() - t);
      statuses[status] = (statuses[status] ?? 0) + 1;
      // validate answers 200 (valid) or 422 (invalid): both are answers; anything else is an error.
      if (status !== '200' && status !== '422') errors += 1;
    }
  };
  await Promise.all(Array.from({ length: p.concurrency }, client));
  return { latencies, errors, statuses, elapsedMs: performance.now() - start };
}

async function hostileClients(p: Extract<ThreadParams, { role: 'hostile' }>, go: Promise<void>): Promise<HostileResult> {
  const requests = hostileRequests(p.gates);
  const byKind: HostileResult['byKind'] = {};
  for (const r of requests) byKind[r.kind] = { latencies: [], answers: {} };
  await go;
  const deadline = performance.now() + p.seconds * 1000;
  const client = async (c: number) => {
    for (let n = c; performance.now() < deadline; n += 1) {
      const r = requests[n % requests.length];
      const t = performance.now();
      let answer: string;
      try {
        const res = await fetch(p.baseUrl + r.path, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.key}`, 'content-type': r.contentType },
          body: r.body,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        answer = describeAnswer(res.status, jsonOrUndefined(await res.text()));
      } catch (err) {
        answer = (err as Error).name === 'TimeoutError' ? `timeout (${REQUEST_TIMEOUT_MS} ms)` : `network error: ${(err as Error).message}`;
      }
      byKind[r.kind].latencies.push(performance.now() - t);
      byKind[r.kind].answers[answer] = (byKind[r.kind].answers[answer] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: p.concurrency }, (_, c) => client(c)));
  return { byKind };
}

/** Thread side: prepare, say `ready`, wait for `go`, run until the phase ends, post the result. */
function threadMain(): void {
  const params = workerData as ThreadParams;
  const port = parentPort!;
  const go = new Promise<void>((resolve) => port.once('message', () => resolve()));
  const run = params.role === 'honest' ? honestClients(params, go) : hostileClients(params, go);
  port.postMessage({ ready: true });
  run.then(
    (result) => port.postMessage({ result }),
    (err) => port.postMessage({ error: String((err as Error)?.stack ?? err) }),
  );
}

/** Main side: a client thread, started and prepared; `go()` starts its clients and resolves to their result. */
async function clientThread<R>(params: ThreadParams): Promise<{ go(): Promise<R> }> {
  const worker = new Worker(__filename, { workerData: params });
  const result = new Promise<R>((resolve, reject) => {
    worker.on('message', (m: { ready?: boolean; result?: R; error?: string }) => {
      if (m.result) resolve(m.result);
      else if (m.error) reject(new Error(`${params.role} clients failed: ${m.error}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`${params.role} client thread exited (${code}) before its result`)));
  });
  result.catch(() => undefined); // awaited by go(); a failure before that surfaces below
  await new Promise<void>((resolve, reject) => {
    result.catch(reject);
    worker.on('message', (m: { ready?: boolean }) => m.ready && resolve());
    worker.once('error', reject);
  });
  return {
    go: async () => {
      worker.postMessage('go');
      try {
        return await result;
      } finally {
        await worker.terminate();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

interface EventLoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/** Records the event-loop delay of this (the API's) thread until `window` settles. */
async function measured<T>(window: () => Promise<T>): Promise<{ result: T; loop: EventLoopDelay }> {
  const h = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  h.enable();
  try {
    const result = await window();
    h.disable();
    // The histogram holds the interval between samples: the delay is what exceeds the resolution.
    const ms = (ns: number) => Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS);
    return { result, loop: { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) } };
  } finally {
    h.disable();
  }
}

function honestLine(r: HonestResult): { text: string; p99: number } {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const rps = r.latencies.length / (r.elapsedMs / 1000);
  const statuses = Object.entries(r.statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(', ');
  return {
    p99: pct(sorted, 99),
    text: `  honest POST /validate : ${fmt(rps, 0)} req/s, p50 ${fmt(pct(sorted, 50))} ms, p99 ${fmt(pct(sorted, 99))} ms (${r.latencies.length} requests, ${r.errors} errors: not 200/422; statuses ${statuses})`,
  };
}

const loopLine = (l: EventLoopDelay) => `  API event-loop delay  : p50 ${fmt(l.p50)} ms, p99 ${fmt(l.p99)} ms, max ${fmt(l.max)} ms`;

async function main(): Promise<void> {
  // The service's modules are loaded here, not at the top: the client threads run this file too
  // and need none of them.
  const { startApiServer } = await import('../api/server');
  const { loadConfig } = await import('../domain/config');
  const { createLogger } = await import('../domain/logger');
  const { createServices } = await import('../platform/services');
  const { installTemporalLogging } = await import('../platform/temporal');
  const { freePort } = await import('./free-port');
  const { startEmbeddedTemporal } = await import('./embedded-temporal');

  installTemporalLogging('error');
  const database = await benchDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'formwork-bench-'));
  let temporal: Awaited<ReturnType<typeof startEmbeddedTemporal>> | undefined;
  let services: Awaited<ReturnType<typeof createServices>> | undefined;
  let api: Awaited<ReturnType<typeof startApiServer>> | undefined;
  let report: string[] = [];
  try {
    temporal = process.env.TEMPORAL_ADDRESS
      ? undefined
      : await startEmbeddedTemporal({ dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default' });
    const port = await freePort();
    const config = loadConfig(benchEnv({ dataDir, databaseUrl: database.url, port, temporalAddress: process.env.TEMPORAL_ADDRESS ?? temporal!.address }));
    services = await createServices(config, createLogger('silent'));
    api = await startApiServer(services, {}, port, '127.0.0.1');
    const { url } = api;
    const db = services.db;

    const call = async (method: string, path: string, token: string | undefined, body: unknown) => {
      const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      const json = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    /** A verified user, their personal project, and an API key of it that may create gates (manage_gates is off unless asked for); plan Scale so no plan limit refuses the load. */
    const project = async (label: string) => {
      const signup = await call('POST', '/api/auth/signup', undefined, { email: `bench-${label}-${randomBytes(3).toString('hex')}@example.com`, password: 'correct horse battery', name: `Bench ${label}` });
      await db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [signup.user.id]);
      const key = await call('POST', '/api/api-keys', signup.accessToken, {
        name: `bench ${label}`,
        permissions: { generate_documents: true, read_documents: true, read_templates: true, manage_gates: true },
      });
      await db.query(`UPDATE projects SET plan = 'scale' WHERE id = $1`, [key.teamId]);
      return { projectId: key.teamId as string, key: key.plainKey as string };
    };
    const honest = await project('honest');
    const hostile = await project('hostile');
    if (honest.projectId === hostile.projectId) throw new Error('the honest and hostile keys belong to the same project');

    const gate = await call('POST', '/api/flow/gates', honest.key, { name: 'Bench', schema: benchSchema(), businessRules: BENCH_RULES });
    const validateUrl = `${url}/api/flow/gates/${gate.id}/validate`;
    const hostileGateIds: Record<string, string> = {};
    for (const [name, body] of Object.entries(hostileGates())) hostileGateIds[name] = (await call('POST', '/api/flow/gates', hostile.key, body)).id;

    // Each hostile request once, alone, so the report shows what each one is answered on its own.
    const alone: string[] = [];
    for (const r of hostileRequests(hostileGateIds)) {
      const t = performance.now();
      const res = await fetch(url + r.path, { method: 'POST', headers: { authorization: `Bearer ${hostile.key}`, 'content-type': r.contentType }, body: r.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      alone.push(`    ${r.kind.padEnd(36)}: ${describeAnswer(res.status, jsonOrUndefined(await res.text()))} in ${fmt(performance.now() - t, 0)} ms (${fmt(r.body.byteLength / 1e6, 2)} MB body)`);
    }

    const honestParams = (seconds: number): ThreadParams => ({ role: 'honest', url: validateUrl, key: honest.key, seconds, concurrency: CONCURRENCY });
    const hostileParams: ThreadParams = { role: 'hostile', baseUrl: url, key: hostile.key, gates: hostileGateIds, seconds: SECONDS, concurrency: HOSTILE_CLIENTS };

    // Warm-up (not reported): connections, JIT, the gate compiled in the evaluation workers.
    await (await clientThread<HonestResult>(honestParams(2))).go();

    // Phase 1: honest load alone.
    const honestOnly = await clientThread<HonestResult>(honestParams(SECONDS));
    const phase1 = await measured(() => honestOnly.go());

    // Phase 2: the same honest load, and the hostile clients of the other project.
    const honestUnderAttack = await clientThread<HonestResult>(honestParams(SECONDS));
    const attackers = await clientThread<HostileResult>(hostileParams);
    // The phase is the honest clients' window; hostile requests still in flight then are awaited
    // after it (their clients send nothing new past the same deadline), outside the measurement.
    let hostileDone: Promise<HostileResult> | undefined;
    const phase2 = await measured(() => {
      hostileDone = attackers.go();
      hostileDone.catch(() => undefined); // awaited below
      return honestUnderAttack.go();
    });
    const hostileResult = await hostileDone!;

    const h1 = honestLine(phase1.result);
    const h2 = honestLine(phase2.result);
    const hostileLines: string[] = [];
    let hostileTotal = 0;
    for (const [kind, { latencies, answers }] of Object.entries(hostileResult.byKind)) {
      hostileTotal += latencies.length;
      const sorted = [...latencies].sort((a, b) => a - b);
      const answerText = Object.entries(answers)
        .map(([a, n]) => `${a} ×${n}`)
        .join(', ');
      hostileLines.push(`    ${kind.padEnd(36)}: ${String(latencies.length).padStart(3)} done, ${answerText || '-'}; p50 ${fmt(pct(sorted, 50), 0)} ms, max ${fmt(sorted[sorted.length - 1] ?? NaN, 0)} ms`);
    }
    const ratio = h2.p99 / h1.p99;
    const ev = config.evaluation;
    report = [
      `Hostile-input benchmark: ${CONCURRENCY} honest clients (project A) POST /validate on a 20-field, 5-rule gate; ${SECONDS} s per phase`,
      `  settings: EVAL_POOL_SIZE=${ev.poolSize}, EVAL_TIMEOUT_MS=${ev.timeoutMs}, EVAL_MAX_HEAP_MB=${ev.maxHeapMb}, cores=${availableParallelism()} (load average at the end: ${loadavg().map((l) => fmt(l, 2)).join(' ')})`,
      `  each hostile request alone (project B, before the phases):`,
      ...alone,
      `Phase 1: honest load alone`,
      h1.text,
      loopLine(phase1.loop),
      `Phase 2: honest load + ${HOSTILE_CLIENTS} hostile clients (project B)`,
      h2.text,
      `  hostile requests completed: ${hostileTotal}`,
      ...hostileLines,
      loopLine(phase2.loop),
      `Honest p99 phase 2 / phase 1: ${fmt(ratio, 2)}× (${fmt(h2.p99)} ms / ${fmt(h1.p99)} ms); goal ≤ 1.5×: ${ratio <= 1.5 ? 'PASS' : 'MISS'}`,
    ];
  } finally {
    // Each step is bounded: a close that never settles would otherwise let the process run out of
    // work and exit 0 before the figures are printed and the database dropped.
    const teardown: string[] = [];
    const bounded = async (what: string, step: () => Promise<unknown>) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), TEARDOWN_STEP_MS)));
      try {
        if ((await Promise.race([step(), late])) === 'late') teardown.push(`${what} did not finish within ${TEARDOWN_STEP_MS / 1000} s (left behind)`);
      } catch (err) {
        teardown.push(`${what} failed: ${(err as Error)?.message ?? err}`);
      } finally {
        clearTimeout(timer);
      }
    };
    await bounded('API server close', async () => api?.close());
    await bounded('services.close()', async () => services?.close());
    await bounded('Temporal dev server stop', async () => temporal?.stop());
    await bounded('DROP DATABASE', () => database.drop());
    await rm(dataDir, { recursive: true, force: true });
    if (teardown.length > 0) report.push(`  teardown: ${teardown.join('; ')}`);
  }
  // After teardown, so the dev server's shutdown chatter does not bury the figures.
  process.stdout.write(`${report.join('\n')}\n`);
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
} else {
  threadMain();
}
