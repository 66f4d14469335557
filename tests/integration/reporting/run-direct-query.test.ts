import { randomBytes } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing/lib/mocking-activity-environment';
import { activityInterceptors } from '../../../activities/failure';
import { createQueryActivities, datasetResultKey, type RunDirectQueryInput, type RunDirectQueryResult } from '../../../activities/reporting/run-direct-query.activity';
import type { QueryLimits } from '../../../domain/reporting/query-runner';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';

/**
 * runDirectQuery (docs/reporting.md "Query execution on workers") against the machine's
 * PostgreSQL: the result lands in storage as gzip NDJSON, limits and errors reach Temporal typed
 * by their code, and the input never holds the datasource's password.
 */

/** The input names the datasource by id; a secret-bearing field would be a compile error here. */
type SecretFields = Extract<keyof RunDirectQueryInput, 'secrets' | 'password' | 'config' | 'connection'>;
const inputHasNoSecrets: [SecretFields] extends [never] ? true : false = true;

const LIMITS: QueryLimits = { timeoutMs: 10_000, maxRows: 1_000, maxBytes: 1_000_000, onRowLimit: 'fail' };
const PASSWORD = `pg-${randomBytes(8).toString('hex')}`;

describe('runDirectQuery activity (query task queue)', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let projectId: string;
  let datasourceId: string;
  let bobsDatasourceId: string;
  let activities: ReturnType<typeof createQueryActivities>;
  const env = () => new MockActivityEnvironment(undefined, { interceptors: activityInterceptors().activity });

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    const database = new URL(app.env.DATABASE_URL).pathname.slice(1);
    await app.services.db.query(`CREATE TABLE sales_rdq (id integer PRIMARY KEY, region text NOT NULL, units integer, amount numeric(10,2))`);
    await app.services.db.query(`INSERT INTO sales_rdq SELECT i, 'region ' || (i % 3), i * 10, i * 1.25 FROM generate_series(1, 25) AS i`);
    const body = (name: string) => ({
      name,
      kind: 'postgres',
      config: { host: '127.0.0.1', port: 5432, database, user: 'postgres', ssl: 'disable' },
      secrets: { password: PASSWORD },
    });
    const mine = await app.request('POST', '/api/reporting/datasources', { token: alice.accessToken, body: body('Sales') });
    expect(mine.status).toBe(201);
    datasourceId = mine.body.id;
    const theirs = await app.request('POST', '/api/reporting/datasources', { token: bob.accessToken, body: body('Bob sales') });
    expect(theirs.status).toBe(201);
    bobsDatasourceId = theirs.body.id;
    [{ project_id: projectId }] = await app.services.db.query(`SELECT project_id FROM reporting_datasources WHERE id = $1`, [datasourceId]);
    const { config } = app.services;
    activities = createQueryActivities({ db: app.services.db, storage: app.services.storage, outboundAllowlist: config.outbound.allowlist, limits: config.reporting });
  });

  afterAll(async () => {
    await app?.close();
  });

  const input = (overrides: Partial<RunDirectQueryInput> = {}): RunDirectQueryInput => ({
    projectId,
    runId: `run-${randomBytes(4).toString('hex')}`,
    datasetName: 'sales',
    datasourceId,
    compiled: { text: 'SELECT id, region, units, amount FROM sales_rdq WHERE id <= $1 ORDER BY id', values: [10] },
    limits: LIMITS,
    ...overrides,
  });

  const run = (i: RunDirectQueryInput, a = activities) => env().run(a.runDirectQuery, i) as Promise<RunDirectQueryResult>;

  async function failure(i: RunDirectQueryInput): Promise<ApplicationFailure> {
    const err = await env().run(activities.runDirectQuery, i).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  async function storedLines(key: string): Promise<string[]> {
    const { body } = await app.services.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of body.pipe(createGunzip())) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  }

  it('the worker polls the query task queue', async () => {
    const { temporal, taskQueues, config } = app.services;
    const pollers = await waitFor(
      async () => {
        const res = await temporal.workflowService.describeTaskQueue({ namespace: config.temporal.namespace, taskQueue: { name: taskQueues.query }, taskQueueType: 2 });
        return res.pollers?.length ? res.pollers : undefined;
      },
      { what: 'a poller on the query task queue' },
    );
    expect(taskQueues.query).toBe(`${config.temporal.taskQueuePrefix}-query`);
    expect(pollers.length).toBeGreaterThan(0);
  });

  it('streams the rows into storage as gzip NDJSON and answers key, counts and columns; the input holds no secret', async () => {
    expect(inputHasNoSecrets).toBe(true);
    const i = input();
    expect(JSON.stringify(i)).not.toContain(PASSWORD);
    const result = await run(i);
    expect(result).toMatchObject({
      key: `reporting/${projectId}/runs/${i.runId}/datasets/sales.ndjson.gz`,
      rowCount: 10,
      truncated: false,
      columns: [
        { name: 'id', dataType: 'int4' },
        { name: 'region', dataType: 'text' },
        { name: 'units', dataType: 'int4' },
        { name: 'amount', dataType: 'numeric' },
      ],
    });
    expect(result.key).toBe(datasetResultKey(projectId, i.runId, 'sales'));
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const lines = await storedLines(result.key);
    expect(lines).toHaveLength(10);
    expect(result.bytes).toBe(lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
    // Numbers stay numbers; numeric stays an exact string.
    expect(JSON.parse(lines[0])).toEqual({ id: 1, region: 'region 1', units: 10, amount: '1.25' });
    expect(JSON.parse(lines[9])).toEqual({ id: 10, region: 'region 1', units: 100, amount: '12.50' });
  });

  it('maxRows with truncate keeps maxRows rows; with fail the run fails ERR_QRY_008 and leaves no file', async () => {
    const cut = input({ compiled: { text: 'SELECT id FROM sales_rdq ORDER BY id', values: [] }, limits: { ...LIMITS, maxRows: 7, onRowLimit: 'truncate' } });
    const result = await run(cut);
    expect(result).toMatchObject({ rowCount: 7, truncated: true });
    expect((await storedLines(result.key)).map((l) => JSON.parse(l).id)).toEqual([1, 2, 3, 4, 5, 6, 7]);

    const failing = input({ compiled: cut.compiled, limits: { ...LIMITS, maxRows: 7, onRowLimit: 'fail' } });
    expect(await failure(failing)).toMatchObject({ type: 'ERR_QRY_008', nonRetryable: true });
    expect(await app.services.storage.exists(datasetResultKey(projectId, failing.runId, 'sales'))).toBe(false);
  });

  it('a result past the byte cap fails ERR_QRY_010; the system maximum caps what the input asks for', async () => {
    const big = input({ compiled: { text: 'SELECT id, region FROM sales_rdq', values: [] }, limits: { ...LIMITS, maxBytes: 200 } });
    expect(await failure(big)).toMatchObject({ type: 'ERR_QRY_010', nonRetryable: true });
    const capped = createQueryActivities({ db: app.services.db, storage: app.services.storage, outboundAllowlist: ['127.0.0.1'], limits: { queryTimeoutSeconds: 300, maxRows: 3, resultMaxBytes: 1_000_000 } });
    const result = await run(input({ limits: { ...LIMITS, maxRows: 1_000, onRowLimit: 'truncate' } }), capped);
    expect(result).toMatchObject({ rowCount: 3, truncated: true });
  });

  it('a statement past its timeout fails ERR_QRY_007, not retried', async () => {
    // A statement of 30 s: ended by the timeout, the failure comes long before it could have finished.
    const slow = input({ compiled: { text: 'SELECT pg_sleep(30)', values: [] }, limits: { ...LIMITS, timeoutMs: 300 } });
    const started = Date.now();
    expect(await failure(slow)).toMatchObject({ type: 'ERR_QRY_007', nonRetryable: true });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a parameter value stays a value: an injection attempt matches no row', async () => {
    const result = await run(input({ compiled: { text: 'SELECT id FROM sales_rdq WHERE region = $1', values: ["x' OR '1'='1"] } }));
    expect(result.rowCount).toBe(0);
    expect(await storedLines(result.key)).toEqual([]);
  });

  it("another project's datasource id answers ERR_DS_001, as does an unknown one", async () => {
    expect(await failure(input({ datasourceId: bobsDatasourceId }))).toMatchObject({ type: 'ERR_DS_001', nonRetryable: true });
    expect(await failure(input({ datasourceId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ type: 'ERR_DS_001', nonRetryable: true });
    expect(await failure(input({ datasourceId: 'ds_notauuid' }))).toMatchObject({ type: 'ERR_DS_001', nonRetryable: true });
  });

  it('a refused connection is retryable (ERR_QRY_006 with the driver code); SQL errors are not', async () => {
    await app.services.db.query(`UPDATE reporting_datasources SET config = jsonb_set(config, '{port}', '1') WHERE id = $1`, [bobsDatasourceId]);
    const [{ project_id: bobsProject }] = await app.services.db.query(`SELECT project_id FROM reporting_datasources WHERE id = $1`, [bobsDatasourceId]);
    const refused = await failure(input({ projectId: bobsProject, datasourceId: bobsDatasourceId }));
    expect(refused).toMatchObject({ type: 'ERR_QRY_006', nonRetryable: false });
    expect(refused.details).toEqual([{ dbCode: 'ECONNREFUSED' }]);
    expect(refused.message).not.toContain(PASSWORD);

    const bad = await failure(input({ compiled: { text: 'SELECT no_such_column FROM sales_rdq', values: [] } }));
    expect(bad).toMatchObject({ type: 'ERR_QRY_006', nonRetryable: true, details: [{ dbCode: '42703' }] });
  });
});
