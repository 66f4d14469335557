import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../../db/data-source';
import { workflowIds } from '../../../domain/temporal-names';
import { createWorkflowOutbox, type WorkflowOutbox } from '../../../platform/workflow-outbox';
import { startTestApp, type TestApp } from '../../support/app';

/**
 * Issue 30: the outbox sweep claims its rows (FOR UPDATE SKIP LOCKED). Two workers sweeping the same
 * stranded records at once start each one once (before, every worker started every row it read), and a
 * sweep on a pool of one connection (npm start's embedded database) finishes instead of waiting for a
 * second connection while it holds its claim. `npm run bench:outbox` measures the same at 1,000 records.
 */
describe('the workflow outbox claims what it sweeps', () => {
  let app: TestApp;
  const opened: Array<{ db: DataSource; connection: Connection; outbox: WorkflowOutbox }> = [];
  const calls = new Map<string, number>();
  const counting: WorkflowClientInterceptor = {
    async start(input, next) {
      calls.set(input.options.workflowId, (calls.get(input.options.workflowId) ?? 0) + 1);
      return next(input);
    },
  };

  beforeAll(async () => {
    // No worker: the e-mails' workflows are started, not run (the test counts starts).
    app = await startTestApp({ worker: false, smtp: false });
  });
  afterAll(async () => {
    for (const o of opened) {
      await o.outbox.stop();
      await o.connection.close();
      await o.db.destroy();
    }
    await app.close();
  });

  /** A worker's outbox: its own pool (of `poolSize`) and its own Temporal client, which counts its starts. */
  async function workerOutbox(poolSize: number): Promise<WorkflowOutbox> {
    const { config } = app.services;
    const db = await openDatabase(config.database.url!, poolSize);
    const connection = await Connection.connect({ address: config.temporal.address! });
    const client = new Client({ connection, namespace: config.temporal.namespace, interceptors: { workflow: [counting] } });
    const outbox = createWorkflowOutbox({ db, temporal: client, taskQueues: app.services.taskQueues, logger: app.services.logger, config });
    opened.push({ db, connection, outbox });
    return outbox;
  }

  /** `n` account e-mails an API replica committed an hour ago and never started. */
  async function stranded(n: number, tag: string): Promise<string[]> {
    const rows: Array<{ workflow_id: string }> = await app.services.db.query(
      `INSERT INTO account_email_starts (id, workflow_id, input, created_at)
       SELECT id, 'account-email-' || id, jsonb_build_object('email', $2 || '-' || n || '@example.com', 'purpose', 'reset_password'), now() - interval '1 hour'
         FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $1) AS n) AS r
       RETURNING workflow_id`,
      [n, tag],
    );
    return rows.map((r) => r.workflow_id);
  }

  it('two workers sweeping at once start each stranded record once and clear every mark', async () => {
    const [a, b] = [await workerOutbox(4), await workerOutbox(4)];
    const ids = await stranded(250, 'two-workers');
    const started = await Promise.all([a.sweep(0), b.sweep(0)]);
    expect(started[0] + started[1]).toBe(250);
    // Claims of 100: both took part.
    expect(Math.min(...started)).toBeGreaterThan(0);
    expect(ids.map((id) => calls.get(id))).toEqual(ids.map(() => 1));
    expect(ids.every((id) => id.startsWith(workflowIds.accountEmail('')))).toBe(true);
    const [{ left }] = await app.services.db.query(`SELECT count(*)::int AS left FROM account_email_starts WHERE workflow_id = ANY($1)`, [ids]);
    expect(left).toBe(0);
    // Temporal has each of them, once.
    const described = await Promise.all(ids.slice(0, 5).map((id) => app.services.temporal.workflow.getHandle(id).describe()));
    expect(described.map((d) => d.type)).toEqual(ids.slice(0, 5).map(() => 'sendAccountEmailWorkflow'));
  });

  it('a sweep on a pool of one connection finishes: what it starts comes from the rows it claimed', async () => {
    const solo = await workerOutbox(1);
    const ids = await stranded(30, 'pool-of-one');
    expect(await solo.sweep(0)).toBe(30);
    expect(ids.map((id) => calls.get(id))).toEqual(ids.map(() => 1));
  });
});
