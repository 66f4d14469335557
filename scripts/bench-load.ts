import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { currentThreads, registerLoadThreads, retireLoadThreads } from './bench-cpu';

/**
 * The HTTP load of the request-path benchmarks (bench-validate): `clients` connections, each sending
 * its next request as soon as the last answer is read, for `seconds`. It runs on a worker thread of
 * its own, so the clients' work does not share the event loop of the API it measures (which runs on
 * the main thread of the same process): what each side is measured with is the same client.
 */
export interface LoadSpec {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  clients: number;
  seconds: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  count: number;
  /** Answers with another status than `expect` (200 unless said otherwise), by status. */
  unexpected: Record<string, number>;
  /** Seconds the load ran, and every request's latency (ms): slices of one phase are merged with `mergeLoads`. */
  seconds: number;
  latencies: number[];
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function generate(spec: LoadSpec & { expect: number }): Promise<LoadResult> {
  const pool = new Pool(spec.origin, { connections: spec.clients, pipelining: 1 });
  const latencies: number[] = [];
  const unexpected: Record<string, number> = {};
  const deadline = performance.now() + spec.seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const res = await pool.request({ origin: spec.origin, path: spec.path, method: spec.method, headers: spec.headers, body: spec.body });
      await res.body.arrayBuffer();
      if (res.statusCode !== spec.expect) unexpected[res.statusCode] = (unexpected[res.statusCode] ?? 0) + 1;
      latencies.push(performance.now() - t);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: spec.clients }, client));
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  return summarize([{ latencies, seconds: elapsed, unexpected }]);
}

function summarize(parts: Array<Pick<LoadResult, 'latencies' | 'seconds' | 'unexpected'>>): LoadResult {
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const seconds = parts.reduce((sum, p) => sum + p.seconds, 0);
  const unexpected: Record<string, number> = {};
  for (const p of parts) for (const [status, n] of Object.entries(p.unexpected)) unexpected[status] = (unexpected[status] ?? 0) + n;
  return { rps: latencies.length / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), count: latencies.length, unexpected, seconds, latencies };
}

/** One phase measured in several slices (interleaved with other phases): figures over all of them. */
export const mergeLoads = (parts: LoadResult[]): LoadResult => summarize(parts);

/**
 * Runs the load on a fresh worker thread and resolves with what it measured. The threads that appear
 * with the worker are counted as the load generator's in the CPU accounting (bench-cpu).
 */
export function runLoad(spec: LoadSpec, expect = 200): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const before = new Set(currentThreads());
    let mine: number[] = [];
    const worker = new Worker(__filename, { workerData: { ...spec, expect } });
    worker.once('online', () => {
      mine = currentThreads().filter((tid) => !before.has(tid));
      registerLoadThreads(mine);
    });
    worker.once('message', (result: LoadResult) => {
      retireLoadThreads(mine);
      resolve(result);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
  });
}

if (!isMainThread && workerData) {
  generate(workerData as LoadSpec & { expect: number }).then(
    (result) => parentPort!.postMessage(result),
    (err) => {
      throw err;
    },
  );
}
