import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { openDatabase } from '../db/data-source';
import { loadConfig } from '../domain/config';
import { createLogger } from '../domain/logger';
import { taskQueues, workflowIds } from '../domain/temporal-names';
import { createWorkflowOutbox } from '../platform/workflow-outbox';
import { benchScratch } from './bench-harness';

/**
 * Outbox benchmark (issue 30): N stranded records (default 1,000 account e-mails whose API replica
 * died before starting them) are started by two workers sweeping at the same time, each with its own
 * database pool and Temporal client, as two worker processes would. It reports the time, how many
 * start calls each workflow id got (a duplicate is a start another worker also made: the claim with
 * FOR UPDATE SKIP LOCKED must leave none), and the marks left. The baseline, measured in the same run,
 * is a plain loop of N starts, one after the other, from one client: the ratio says what the claims
 * and concurrent starts gain over it.
 *
 *   npm run bench:outbox [-- --records 1000]
 * Needs Postgres (DATABASE_URL's server) and the Temporal CLI. Takes under a minute.
 */

const argN = process.argv.indexOf('--records');
const N = (argN > 0 && Number(process.argv[argN + 1])) || 1000;
async function main(): Promise<void> {
  // In memory: the file-backed dev server syncs every write to disk and starts ~90 workflows a second however many clients ask.
  const scratch = await benchScratch({ inMemory: true });
  const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATA_DIR: scratch.dataDir, DATABASE_URL: scratch.dbUrl, TEMPORAL_ADDRESS: scratch.temporalAddress, LOG_LEVEL: 'error' });
  const logger = createLogger('error');
  // Nothing polls this queue: the benchmark measures starts, not the e-mails.
  const queues = taskQueues(`bench-outbox-${randomBytes(3).toString('hex')}`);
  const calls = new Map<string, number>();
  const counting: WorkflowClientInterceptor = {
    async start(input, next) {
      calls.set(input.options.workflowId, (calls.get(input.options.workflowId) ?? 0) + 1);
      return next(input);
    },
  };
  const workers = [];
  // One after the other: the first migrates the scratch database.
  for (let i = 0; i < 2; i += 1) {
    const db = await openDatabase(config.database.url!, config.database.poolSize);
    const connection = await Connection.connect({ address: scratch.temporalAddress });
    const client = new Client({ connection, namespace: 'default', interceptors: { workflow: [counting] } });
    workers.push({ db, connection, outbox: createWorkflowOutbox({ db, temporal: client, taskQueues: queues, logger, config }) });
  }
  const db = workers[0].db;
  try {
    // Baseline: a plain loop of N starts from one client, one after the other.
    const plain = new Client({ connection: workers[0].connection, namespace: 'default' });
    const t0 = performance.now();
    for (let i = 0; i < N; i += 1) {
      await plain.workflow.start('sendAccountEmailWorkflow', { taskQueue: queues.main, workflowId: `bench-plain-${randomUUID()}`, args: [{ email: `plain-${i}@example.com`, purpose: 'reset_password' }] });
    }
    const loopMs = performance.now() - t0;

    // N stranded records, as an API replica that died after committing them leaves them.
    await db.query(
      `INSERT INTO account_email_starts (id, workflow_id, input, created_at)
       SELECT id, 'account-email-' || id, jsonb_build_object('email', 'user-' || n || '@example.com', 'purpose', 'reset_password'), now() - interval '1 hour'
         FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $1) AS n) AS r`,
      [N],
    );
    const t1 = performance.now();
    const started = await Promise.all(workers.map((w) => w.outbox.sweep(0)));
    const sweepMs = performance.now() - t1;

    const [{ left }] = await db.query(`SELECT count(*)::int AS left FROM account_email_starts`);
    const swept = [...calls.entries()].filter(([id]) => id.startsWith(workflowIds.accountEmail('')));
    const duplicates = swept.filter(([, n]) => n > 1).length;
    console.log(`bench:outbox  ${N} stranded account e-mails, two workers sweeping together`);
    console.log(`  plain loop of ${N} starts (baseline)   ${Math.round(loopMs)} ms  (${Math.round((N / loopMs) * 1000)} starts/s)`);
    console.log(`  two sweeping workers                  ${Math.round(sweepMs)} ms  (${Math.round((N / sweepMs) * 1000)} starts/s)  started ${started.join(' + ')}`);
    console.log(`  ratio (baseline / sweep)              ${(loopMs / sweepMs).toFixed(2)}x`);
    console.log(`  workflow ids started                  ${swept.length}; started more than once: ${duplicates}; marks left: ${left}`);
    if (swept.length !== N || duplicates > 0 || left !== 0 || started[0] + started[1] !== N) {
      process.exitCode = 1;
      console.error('bench:outbox  FAILED: every record must be started exactly once and its mark cleared');
    }
  } finally {
    for (const w of workers) {
      await w.outbox.stop();
      await w.connection.close();
      await w.db.destroy();
    }
    await scratch.remove();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
