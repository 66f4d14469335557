import { performance } from 'node:perf_hooks';
import { withBench, type Bench } from './bench-harness';
import { percentile } from './bench-stats';

/**
 * Schedule benchmark: S report schedules (default 100) with the cron `* * * * *` fire together on
 * the Temporal dev server; for the next minute boundary it reports how late Temporal fired them
 * (each run's record created − its scheduled time) and how long the one worker in this process
 * took to finish all S runs, as scheduled runs per minute. The baseline, measured in the same run,
 * is S runs of the same report started at once through the API: the ratio says what the Temporal
 * Schedule path (the schedule's workflow, the occurrence record, the child run) adds.
 *
 *   npm run bench:schedule [-- --schedules 100]
 * Needs Postgres (DATABASE_URL's server) and the Temporal CLI, like bench:report. Takes 1–2 minutes.
 */

const argN = process.argv.indexOf('--schedules');
const S = (argN > 0 && Number(process.argv[argN + 1])) || 100;

const ENDED = ['completed', 'failed', 'cancelled', 'skipped'];

async function rows(bench: Bench, sql: string, params: unknown[] = []): Promise<any[]> {
  return bench.services.db.query(sql, params);
}

/** Waits until `n` runs matching `where` ended; answers their records. */
async function runsEnded(bench: Bench, where: string, params: unknown[], n: number, timeoutMs: number): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = await rows(bench, `SELECT status, scheduled_for, created_at, completed_at FROM reporting_runs WHERE ${where} AND status = ANY($${params.length + 1}::text[])`, [...params, ENDED]);
    if (done.length >= n) return done;
    if (Date.now() > deadline) throw new Error(`only ${done.length} of ${n} runs ended within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const perMinute = (n: number, ms: number) => (n / ms) * 60_000;

async function main(): Promise<void> {
  const env = { OUTBOUND_ALLOWLIST: '127.0.0.1', REPORTING_SCHEDULE_MIN_INTERVAL_MINUTES: '0', REPORTING_SCHEDULES_PER_PROJECT: String(S + 10) };
  await withBench(env, async (bench) => {
    const { call, jwt, dbName } = bench;
    const key = (await call('POST', '/api/api-keys', jwt, { name: 'bench', permissions: { read_reports: true, run_reports: true } })).plainKey;
    const ds = await call('POST', '/api/reporting/datasources', jwt, {
      name: 'bench',
      kind: 'postgres',
      config: { host: '127.0.0.1', port: 5432, database: dbName, user: 'postgres', ssl: 'disable' },
      secrets: { password: 'unused' },
    });
    const query = await call('POST', '/api/reporting/queries', jwt, { name: 'bench rows', datasourceId: ds.id, text: 'SELECT i AS n FROM generate_series(1, 100) AS i' });
    await call('POST', `/api/reporting/queries/${query.id}/publish`, jwt, {});
    const report = await call('POST', '/api/reporting/reports', jwt, { name: 'bench report', datasets: [{ name: 'items', queryId: query.id }], outputs: [{ format: 'csv' }] });
    await call('POST', `/api/reporting/reports/${report.id}/publish`, jwt, {});

    // Baseline: S runs started at once through the API.
    await call('POST', `/api/reporting/reports/${report.id}/runs`, key, {});
    await runsEnded(bench, `trigger = 'api'`, [], 1, 60_000);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: S }, () => call('POST', `/api/reporting/reports/${report.id}/runs`, key, {})));
    await runsEnded(bench, `trigger = 'api'`, [], S + 1, 600_000);
    const manualMs = performance.now() - t0;

    // Scheduled: S schedules firing every minute; measure the first whole minute after they exist.
    for (let i = 0; i < S; i += 1) await call('POST', '/api/reporting/schedules', jwt, { name: `bench ${i}`, target: { type: 'report', id: report.id }, cron: '* * * * *', timezone: 'UTC' });
    const fire = new Date(Math.ceil((Date.now() + 1000) / 60_000) * 60_000);
    console.log(`bench:schedule  ${S} schedules created; waiting for the fire at ${fire.toISOString()}`);
    const fired = await runsEnded(bench, `trigger = 'schedule' AND scheduled_for = $1`, [fire], S, 600_000);
    const lateMs = fired.map((r) => new Date(r.created_at).getTime() - new Date(r.scheduled_for).getTime());
    // Temporal's side: when each fire's workflow started (its own record of the start), against the fire time.
    const startedMs: number[] = [];
    for await (const wf of bench.services.temporal.workflow.list({ query: `WorkflowType = 'scheduledReportWorkflow'` })) {
      const lag = wf.startTime.getTime() - fire.getTime();
      if (lag >= 0 && lag < 600_000) startedMs.push(lag);
    }
    const lastEnd = Math.max(...fired.map((r) => new Date(r.completed_at).getTime()));
    const scheduledMs = lastEnd - fire.getTime();
    const failed = fired.filter((r) => r.status !== 'completed').length;

    const manualRate = perMinute(S, manualMs);
    const scheduledRate = perMinute(S, scheduledMs);
    console.log(`  Temporal start latency (fire workflow started − scheduled time): median ${percentile(startedMs, 50)} ms, p95 ${percentile(startedMs, 95)} ms, max ${Math.max(...startedMs)} ms (${startedMs.length} fires)`);
    console.log(`  fire latency (run recorded − scheduled time): median ${percentile(lateMs, 50)} ms, p95 ${percentile(lateMs, 95)} ms, max ${Math.max(...lateMs)} ms`);
    console.log(`  scheduled: ${S} runs (${failed} not completed) done ${(scheduledMs / 1000).toFixed(1)} s after the fire: ${scheduledRate.toFixed(0)} runs/min`);
    console.log(`  baseline: ${S} API runs at once done in ${(manualMs / 1000).toFixed(1)} s: ${manualRate.toFixed(0)} runs/min`);
    console.log(`  ratio (scheduled time / baseline time): ${(scheduledMs / manualMs).toFixed(2)}x`);
    await rows(bench, `UPDATE reporting_schedules SET deleted_at = now()`);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
