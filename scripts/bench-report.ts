import { performance } from 'node:perf_hooks';
import { withBench, type Bench } from './bench-harness';

/**
 * Report run benchmark: a query of N rows (default 100,000) from PostgreSQL run as a report through
 * the API and Temporal (query queue → gzip NDJSON in storage → render queue → output file), once
 * to CSV and once to Excel, from the run request to the moment the file is downloadable. The
 * baseline, measured in the same run, is the query alone as the run records it (the statement
 * streamed into storage): the ratio says what orchestration and rendering add.
 *
 *   npm run bench:report [-- --n 100000]
 * Needs Postgres (DATABASE_URL's server) and the Temporal CLI, like bench:generate.
 */

const N = Number(process.argv[process.argv.indexOf('--n') + 1]) || 100_000;

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
    await new Promise((r) => setTimeout(r, 100));
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
      text: `SELECT i AS id, 'Item ' || i AS label, (i % 1000)::numeric(10,2) AS amount FROM generate_series(1, ${N}) AS i`,
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

    // A first small run warms the workers (connections, Chromium is not used, ExcelJS threads).
    await timedRun(bench, key, report.id, 'csv');
    const csv = await timedRun(bench, key, report.id, 'csv');
    const excel = await timedRun(bench, key, report.id, 'excel');
    console.log(`bench:report  ${csv.rows} rows from PostgreSQL, one dataset, run request → downloadable file`);
    for (const [name, r] of [['CSV', csv], ['Excel', excel]] as const) {
      console.log(
        `  ${name.padEnd(5)}: ${r.seconds.toFixed(2)} s end to end (file ${(r.bytes / 1024 / 1024).toFixed(1)} MB); baseline query alone ${(r.queryMs / 1000).toFixed(2)} s; ratio ${(r.seconds / (r.queryMs / 1000)).toFixed(2)}x`,
      );
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
