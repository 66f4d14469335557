import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { addCpu, formatCpu, withCpu, type CpuUsage } from './bench-cpu';
import { withBench, type Bench } from './bench-harness';
import { median } from './bench-stats';

/**
 * Report run benchmark: a query of N rows (default 100,000) from PostgreSQL run as a report through
 * the API and Temporal (query queue → gzip NDJSON in storage → render queue → output file), once
 * to CSV and once to Excel, from the run request to the moment the file is downloadable. The
 * limit, measured in the same run on the same server: `psql -c "\copy (query) to file csv"` of the
 * same query (process start, connection, query, file written; median of 3, alternating with the
 * CSV runs). Goal (issue 17, 5):
 * CSV ≤ 3× the limit. Also printed: the query step as the run records it (the statement streamed
 * into storage as gzip NDJSON).
 *
 *   npm run bench:report [-- --n 100000]
 * Needs Postgres (DATABASE_URL's server) and the Temporal CLI, like bench:generate.
 */

const N = Number(process.argv[process.argv.indexOf('--n') + 1]) || 100_000;
const SQL = `SELECT i AS id, 'Item ' || i AS label, (i % 1000)::numeric(10,2) AS amount FROM generate_series(1, ${N}) AS i`;

const TEMPLATE = {
  name: 'Bench listing',
  outputFormats: ['excel'],
  schema: {
    pageSize: 'A4',
    sections: [
      {
        id: 'main',
        components: [{ id: 't', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Id', field: 'id' }, { header: 'Item', field: 'label' }, { header: 'Amount', field: 'amount', format: 'number' }] } }],
      },
    ],
  },
  variables: [
    {
      name: 'items',
      type: 'array',
      required: true,
      items: { type: 'object', properties: [{ name: 'id', type: 'number' }, { name: 'label', type: 'string' }, { name: 'amount', type: 'number' }] },
    },
  ],
};

async function timedRun({ call }: Bench, key: string, reportId: string, format: 'csv' | 'excel') {
  const started = performance.now();
  const { runId } = await call('POST', `/api/reporting/reports/${reportId}/runs`, key, { outputs: [format] });
  for (;;) {
    const run = await call('GET', `/api/reporting/runs/${runId}`, key);
    if (run.status === 'completed' && run.outputs[0]?.downloadUrl) {
      const seconds = (performance.now() - started) / 1000;
      return { seconds, queryMs: run.datasets[0].durationMs as number, rows: run.datasets[0].rowCount as number, bytes: run.outputs[0].bytes as number };
    }
    if (['failed', 'cancelled'].includes(run.status)) throw new Error(`run ${format} ${run.status}: ${JSON.stringify(run.error)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `psql \copy (query) to file csv`, the way an operator would export the rows, timed from the process start. */
function psqlCopy(dbName: string, sql: string): { seconds: number; bytes: number } {
  const dir = mkdtempSync(join(tmpdir(), 'formwork-bench-copy-'));
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${dbName}`;
  try {
    const file = join(dir, 'rows.csv');
    const started = performance.now();
    execFileSync('psql', [url.toString(), '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy (${sql}) to '${file}' csv header`], { stdio: ['ignore', 'ignore', 'inherit'] });
    return { seconds: (performance.now() - started) / 1000, bytes: statSync(file).size };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}


async function main(): Promise<void> {
  const env = { OUTBOUND_ALLOWLIST: '127.0.0.1', FREE_DOCUMENTS_PER_MONTH: '1000', EXCEL_MAX_ROWS: String(N + 10), REPORTING_MAX_ROWS: String(Math.max(N, 100_000)) };
  await withBench(env, async (bench) => {
    const { call, jwt, dbName } = bench;
    const template = await call('POST', '/api/templates', jwt, TEMPLATE);
    await call('POST', `/api/templates/${template.id}/publish`, jwt, {});
    const key = (await call('POST', '/api/api-keys', jwt, { name: 'bench', permissions: { read_reports: true, run_reports: true } })).plainKey;
    const ds = await call('POST', '/api/reporting/datasources', jwt, {
      name: 'bench',
      kind: 'postgres',
      config: { host: '127.0.0.1', port: 5432, database: dbName, user: 'postgres', ssl: 'disable' },
      secrets: { password: 'unused' },
    });
    const query = await call('POST', '/api/reporting/queries', jwt, {
      name: 'bench rows',
      datasourceId: ds.id,
      text: SQL,
      maxRows: Math.max(N, 1),
    });
    await call('POST', `/api/reporting/queries/${query.id}/publish`, jwt, {});
    const report = await call('POST', '/api/reporting/reports', jwt, {
      name: 'bench report',
      templateId: template.id,
      datasets: [{ name: 'items', queryId: query.id }],
      outputs: [{ format: 'excel' }, { format: 'csv' }],
    });
    await call('POST', `/api/reporting/reports/${report.id}/publish`, jwt, {});

    // A first run warms the workers (connections, ExcelJS threads; Chromium is not used).
    await timedRun(bench, key, report.id, 'csv');
    // The limit and the runs alternate, so both see the same load on a shared machine.
    const csvRuns: Array<Awaited<ReturnType<typeof timedRun>>> = [];
    const copies: Array<ReturnType<typeof psqlCopy>> = [];
    const cpu = { copy: [] as CpuUsage[], csv: [] as CpuUsage[] };
    for (let i = 0; i < 3; i++) {
      const copy = await withCpu(async () => psqlCopy(dbName, SQL));
      copies.push(copy.result);
      cpu.copy.push(copy.cpu);
      const run = await withCpu(() => timedRun(bench, key, report.id, 'csv'));
      csvRuns.push(run.result);
      cpu.csv.push(run.cpu);
    }
    const excel = await timedRun(bench, key, report.id, 'excel');
    const limit = median(copies.map((c) => c.seconds));
    const csv = csvRuns.find((r) => r.seconds === median(csvRuns.map((x) => x.seconds)))!;
    console.log(`bench:report  ${csv.rows} rows from PostgreSQL, one dataset, run request → downloadable file (CSV: median of 3)`);
    console.log(`  limit: psql \\copy (query) to file csv: ${limit.toFixed(3)} s (median of 3; file ${(copies[0].bytes / 1024 / 1024).toFixed(1)} MB)`);
    for (const [name, r] of [['CSV', csv], ['Excel', excel]] as const) {
      console.log(
        `  ${name.padEnd(5)}: ${r.seconds.toFixed(2)} s end to end (file ${(r.bytes / 1024 / 1024).toFixed(1)} MB; query step ${(r.queryMs / 1000).toFixed(2)} s); ${(r.seconds / limit).toFixed(2)}x the psql limit`,
      );
    }
    const ratio = csv.seconds / limit;
    console.log(`  goal: CSV ≤ 3x the psql limit: ${ratio.toFixed(2)}x, ${ratio <= 3 ? 'met' : 'NOT met'}`);
    // Where the cores went (/proc, every process on the machine; scripts/bench-cpu.ts), over the 3 runs of each.
    console.log(`  CSV runs:`);
    for (const l of formatCpu(addCpu(cpu.csv))) console.log(l);
    console.log(`  psql \\copy:`);
    for (const l of formatCpu(addCpu(cpu.copy))) console.log(l);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
