import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { withBench, type Bench } from './bench-harness';
import { intArg as arg, median } from './bench-stats';

/**
 * Agent benchmark (docs/reporting.md "Agents"): what a `formwork-agent` adds per query. The same query
 * on the same PostgreSQL database through two datasources, one direct (the query task queue) and one
 * bound to a real agent process on this machine (long poll, lease, run, gzip NDJSON upload, the API
 * completing the waiting activity). Measured, interleaved in one run: query previews (the HTTP request
 * end to end) and report runs (API start to `completed`, one CSV output). The direct path is the
 * baseline; the figures are the medians, the difference and the ratio.
 *
 *   npm run bench:agent [-- --rounds 20 --rows 1000]
 * Needs Postgres (DATABASE_URL's server), the Temporal CLI and a build (npm run build runs first).
 */

const ROUNDS = arg('rounds', 20);
const ROWS = arg('rows', 1000);


async function runToEnd(bench: Bench, reportId: string): Promise<number> {
  const t0 = performance.now();
  const { runId } = await bench.call('POST', `/api/reporting/reports/${reportId}/runs`, bench.jwt, {});
  for (;;) {
    const [row] = await bench.services.db.query(`SELECT status FROM reporting_runs WHERE id = $1`, [runId]);
    if (row.status === 'completed') return performance.now() - t0;
    if (['failed', 'cancelled', 'skipped'].includes(row.status)) throw new Error(`run ${runId} ended ${row.status}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function main(): Promise<void> {
  await withBench({ OUTBOUND_ALLOWLIST: '127.0.0.1' }, async (bench) => {
    const { call, jwt, dbName } = bench;
    const config = { host: '127.0.0.1', port: 5432, database: dbName, user: 'postgres', ssl: 'disable' };
    const agent = await call('POST', '/api/agents', jwt, { name: 'bench agent' });
    const keyDir = await mkdtemp(join(tmpdir(), 'formwork-bench-agent-'));
    // The agent as its own package builds it (npm run build --workspace agent).
    const child = spawn(process.execPath, [join(__dirname, '..', '..', 'agent', 'dist', 'cli.js'), '--url', bench.url, '--key-file', join(keyDir, 'key.pem'), '--max-concurrency', '4'], {
      env: { PATH: process.env.PATH ?? '', HOME: keyDir, FORMWORK_AGENT_TOKEN: agent.token },
      stdio: 'ignore',
    });
    try {
      for (;;) {
        const a = await call('GET', `/api/agents/${agent.id}`, jwt);
        if (a.status === 'online') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const text = `SELECT i AS n, md5(i::text) AS h FROM generate_series(1, ${ROWS}) AS i`;
      const setUp = async (label: string, extra: Record<string, unknown>) => {
        const ds = await call('POST', '/api/reporting/datasources', jwt, { name: label, kind: 'postgres', config, secrets: { password: 'unused' }, ...extra });
        const query = await call('POST', '/api/reporting/queries', jwt, { name: `${label} rows`, datasourceId: ds.id, text });
        await call('POST', `/api/reporting/queries/${query.id}/publish`, jwt, {});
        const report = await call('POST', '/api/reporting/reports', jwt, { name: `${label} report`, datasets: [{ name: 'rows', queryId: query.id }], outputs: [{ format: 'csv' }] });
        await call('POST', `/api/reporting/reports/${report.id}/publish`, jwt, {});
        return { query, report };
      };
      const direct = await setUp('direct', {});
      const viaAgent = await setUp('agent', { connectionMode: 'agent', agentId: agent.id });
      const preview = async (queryId: string) => {
        const t0 = performance.now();
        const res = await call('POST', `/api/reporting/queries/${queryId}/preview`, jwt, { limit: 100, wait: 30 });
        if (res.rowCount !== 100) throw new Error(`preview answered ${JSON.stringify(res).slice(0, 200)}`);
        return performance.now() - t0;
      };

      // Warm-up: connections, the agent's first lease, the workflow bundle's first runs.
      await preview(direct.query.id);
      await preview(viaAgent.query.id);
      await runToEnd(bench, direct.report.id);
      await runToEnd(bench, viaAgent.report.id);

      const times = { previewDirect: [] as number[], previewAgent: [] as number[], runDirect: [] as number[], runAgent: [] as number[] };
      for (let i = 0; i < ROUNDS; i += 1) {
        times.previewDirect.push(await preview(direct.query.id));
        times.previewAgent.push(await preview(viaAgent.query.id));
        times.runDirect.push(await runToEnd(bench, direct.report.id));
        times.runAgent.push(await runToEnd(bench, viaAgent.report.id));
      }
      const line = (what: string, base: number[], agentTimes: number[]) => {
        const b = median(base);
        const a = median(agentTimes);
        console.log(`${what.padEnd(34)} direct ${b.toFixed(1).padStart(7)} ms   agent ${a.toFixed(1).padStart(7)} ms   added ${(a - b).toFixed(1).padStart(7)} ms   ratio ${(a / b).toFixed(2)}×`);
      };
      console.log(`bench:agent  ${ROUNDS} rounds, ${ROWS}-row query, medians (baseline: the same query on the direct path, same run)`);
      line('query preview (100 rows, HTTP)', times.previewDirect, times.previewAgent);
      line(`report run (${ROWS} rows to CSV)`, times.runDirect, times.runAgent);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await rm(keyDir, { recursive: true, force: true });
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
