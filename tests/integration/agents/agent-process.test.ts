import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { confirmAgentKey, startAgentProcess, type AgentProcess } from '../../support/agent-process';
import { startApiProcess, type ApiProcess } from '../../support/api-process';
import { startTestApp, type TestApp } from '../../support/app';
import { download } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { testDatabaseConfig } from '../../support/reporting';
import { waitFor } from '../../support/wait';

/**
 * The real `formwork-agent` process against the running API and workers (docs/reporting.md "Agents",
 * "Report runs through an agent"): report runs whose PostgreSQL and SQLite datasets the agent runs, an agent killed in
 * the middle of a query and started again, a cancelled run whose statement the agent stops, and a sealed password that
 * neither the service's database nor any log holds in clear.
 */
describe('formwork-agent runs report queries', () => {
  let app: TestApp;
  let admin: SignedUpUser;
  let dir: string;
  const agents: AgentProcess[] = [];
  const suffix = randomBytes(4).toString('hex');
  const table = `agent_e2e_${suffix}`;
  /** How long the slow query sleeps: the test changes it while an attempt runs. */
  const control = `agent_e2e_sleep_${suffix}`;

  beforeAll(async () => {
    app = await startTestApp({ env: { REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: '4', REPORTING_AGENT_RETRY_DELAY_SECONDS: '1' } });
    admin = await signUp(app, { verified: true });
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, region text, total numeric(10,2))`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'North', 12.50), (2, 'South', 3.25)`);
    await app.services.db.query(`CREATE TABLE ${control} (seconds float8 NOT NULL)`);
    await app.services.db.query(`INSERT INTO ${control} VALUES (0)`);
    dir = await mkdtemp(join(tmpdir(), 'formwork-agent-e2e-'));
  });

  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}, ${control}`);
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;
  const as = () => ({ token: admin.accessToken });

  async function post(path: string, body: unknown, status = 201) {
    const res = await app.request('POST', path, { ...as(), body });
    expect([res.status, res.body.code ?? null, res.body.relatedInfo ?? null]).toEqual([status, null, null]);
    return res.body;
  }

  async function runningAgent(url = app.url, extra: { env?: Record<string, string> } = {}): Promise<{ id: string; token: string; process: AgentProcess }> {
    const agent = await post('/api/agents', { name: name('Agent') });
    const process = await startAgentProcess({ url, token: agent.token, env: extra.env, args: ['--shutdown-grace', '2'] });
    agents.push(process);
    await waitFor(async () => ((await app.request('GET', `/api/agents/${agent.id}`, as())).body.status === 'online' ? true : undefined), { timeoutMs: 20_000, what: 'the agent online' });
    await confirmAgentKey(app.request, as(), agent.id);
    return { id: agent.id, token: agent.token, process };
  }

  /** A published report with one CSV output per dataset: `[name, datasourceId, sql]`. */
  async function csvReport(datasets: Array<[string, string, string]>) {
    const refs = [];
    for (const [dataset, datasourceId, text] of datasets) {
      const q = await post('/api/reporting/queries', { name: name('Q'), datasourceId, text });
      await post(`/api/reporting/queries/${q.id}/publish`, {});
      refs.push({ name: dataset, queryId: q.id });
    }
    const report = await post('/api/reporting/reports', { name: name('Report'), datasets: refs, outputs: [{ format: 'csv', datasets: refs.map((r) => r.name) }] });
    await post(`/api/reporting/reports/${report.id}/publish`, {});
    return report;
  }

  const startRun = async (reportId: string) => (await post(`/api/reporting/reports/${reportId}/runs`, {}, 201)).runId as string;
  const getRun = async (runId: string) => (await app.request('GET', `/api/reporting/runs/${runId}`, as())).body;
  const runEnded = (runId: string, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const run = await getRun(runId);
        return ['completed', 'failed', 'cancelled', 'skipped'].includes(run.status) ? run : undefined;
      },
      { timeoutMs, what: `run ${runId} to end` },
    );
  const csvOf = async (run: any, dataset: string) => {
    const output = run.outputs.find((o: any) => o.dataset === dataset);
    return (await download(output.downloadUrl)).body.toString('utf8').replace(/^\uFEFF/, '').trim().split(/\r?\n/);
  };
  /** The agent's statement on the server, while it runs (the runners name their connections formwork-reporting). */
  const sleeping = async () =>
    (await app.services.db.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'formwork-reporting' AND query LIKE '%pg_sleep%' AND state = 'active'`)) as Array<{ pid: number }>;

  it('runs a PostgreSQL dataset and a SQLite dataset on the agent host into CSV files', async () => {
    const agent = await runningAgent(app.url, { env: { FORMWORK_TEST_PGPASSWORD: 'trust-auth-ignores-it' } });
    const pg = await post('/api/reporting/datasources', {
      name: name('Warehouse'),
      kind: 'postgres',
      connectionMode: 'agent',
      agentId: agent.id,
      secretMode: 'agent_local',
      config: { ...testDatabaseConfig(app), secretEnv: 'FORMWORK_TEST_PGPASSWORD' },
    });
    const file = join(dir, `shop-${suffix}.db`);
    const lite = new Database(file);
    lite.exec(`CREATE TABLE items (sku TEXT, qty INTEGER); INSERT INTO items VALUES ('A-1', 3), ('B-2', 5);`);
    lite.close();
    const sqlite = await post('/api/reporting/datasources', { name: name('Shop'), kind: 'sqlite', connectionMode: 'agent', agentId: agent.id, config: { path: file } });

    const report = await csvReport([
      ['regions', pg.id, `SELECT region, total FROM ${table} ORDER BY id`],
      ['items', sqlite.id, 'SELECT sku, qty FROM items ORDER BY sku'],
    ]);
    const run = await runEnded(await startRun(report.id));
    expect(run).toMatchObject({
      status: 'completed',
      datasets: [
        { name: 'regions', status: 'completed', rowCount: 2, executedBy: 'agent', agentId: agent.id },
        { name: 'items', status: 'completed', rowCount: 2, executedBy: 'agent', agentId: agent.id },
      ],
    });
    expect(await csvOf(run, 'regions')).toEqual(['region,total', 'North,12.50', 'South,3.25']);
    expect(await csvOf(run, 'items')).toEqual(['sku,qty', 'A-1,3', 'B-2,5']);

    // The agent's health shows its pools; the datasource's health is the agent's view of it.
    const health = await app.request('GET', `/api/reporting/datasources/${pg.id}/health`, as());
    expect(health.body).toMatchObject({ executedBy: 'agent' });
  });

  it('times out the attempt of a killed agent; a restarted agent completes the run', async () => {
    const agent = await runningAgent();
    const ds = await post('/api/reporting/datasources', { name: name('Warehouse'), kind: 'postgres', connectionMode: 'agent', agentId: agent.id, config: testDatabaseConfig(app) });
    const report = await csvReport([['slow', ds.id, `SELECT pg_sleep((SELECT seconds FROM ${control})) IS NULL AS slept, 7 AS n`]]);
    await app.services.db.query(`UPDATE ${control} SET seconds = 60`);
    const runId = await startRun(report.id);
    await waitFor(async () => ((await sleeping()).length > 0 ? true : undefined), { timeoutMs: 30_000, what: 'the query running on the agent' });

    agent.process.kill('SIGKILL');
    await agent.process.exited();
    // The statement the dead agent left behind would end with its sleep; ended now, and the next attempt sleeps no more.
    await app.services.db.query(`UPDATE ${control} SET seconds = 0`);
    for (const { pid } of await sleeping()) await app.services.db.query(`SELECT pg_terminate_backend($1)`, [pid]);
    const retried = await waitFor(
      async () => {
        const rows: Array<{ attempt: number; status: string }> = await app.services.db.query(`SELECT attempt, status FROM reporting_agent_tasks WHERE run_id = $1 ORDER BY attempt`, [runId]);
        return rows.some((r) => r.attempt === 2) ? rows : undefined;
      },
      { timeoutMs: 30_000, what: 'a second attempt after the heartbeat timeout' },
    );
    expect(retried[0]).toEqual({ attempt: 1, status: 'expired' });
    expect((await getRun(runId)).status).toBe('running');

    const restarted = await startAgentProcess({ url: app.url, token: agent.token, keyFile: agent.process.keyFile });
    agents.push(restarted);
    const run = await runEnded(runId);
    expect(run).toMatchObject({ status: 'completed', datasets: [{ name: 'slow', rowCount: 1, executedBy: 'agent' }] });
    expect(await csvOf(run, 'slow')).toEqual(['slept,n', 'false,7']);
  });

  it("cancelling a run stops the agent's statement and leaves the agent serving", async () => {
    const agent = await runningAgent();
    const ds = await post('/api/reporting/datasources', { name: name('Warehouse'), kind: 'postgres', connectionMode: 'agent', agentId: agent.id, config: testDatabaseConfig(app) });
    const report = await csvReport([['slow', ds.id, `SELECT pg_sleep((SELECT seconds FROM ${control})) IS NULL AS slept`]]);
    await app.services.db.query(`UPDATE ${control} SET seconds = 120`);
    const runId = await startRun(report.id);
    await waitFor(async () => ((await sleeping()).length > 0 ? true : undefined), { timeoutMs: 30_000, what: 'the query running on the agent' });

    expect((await app.request('POST', `/api/reporting/runs/${runId}/cancel`, { ...as(), body: {} })).status).toBe(200);
    expect((await runEnded(runId)).status).toBe('cancelled');
    await waitFor(async () => ((await sleeping()).length === 0 ? true : undefined), { timeoutMs: 30_000, what: "the agent's statement to stop" });
    const task = await waitFor(
      async () => {
        const [row] = await app.services.db.query(`SELECT status FROM reporting_agent_tasks WHERE run_id = $1`, [runId]);
        return row?.status === 'cancelled' ? row : undefined;
      },
      { timeoutMs: 30_000, what: 'the task cancelled' },
    );
    expect(task.status).toBe('cancelled');

    await app.services.db.query(`UPDATE ${control} SET seconds = 0`);
    expect((await runEnded(await startRun(report.id))).status).toBe('completed');
  });

  describe('a sealed password, through the API process with debug logs', () => {
    let api: ApiProcess;

    beforeAll(async () => {
      api = await startApiProcess({ LOG_LEVEL: 'debug' });
    });

    afterAll(async () => {
      await api?.close();
    });

    it('is opened only by the agent: the database, the API log and the agent log never hold it in clear', async () => {
      const user = await signUp(api.app);
      await api.app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
      const call = async (method: string, path: string, body?: unknown) => api.app.request(method, path, { token: user.accessToken, ...(body !== undefined ? { body } : {}) });
      const created = await call('POST', '/api/agents', { name: name('Sealed') });
      const agentProc = await startAgentProcess({ url: api.url, token: created.body.token });
      agents.push(agentProc);
      await confirmAgentKey(api.app.request, { token: user.accessToken }, created.body.id);

      const password = `sealed-${randomBytes(8).toString('hex')}`;
      const ds = await call('POST', '/api/reporting/datasources', {
        name: name('Sealed DS'),
        kind: 'postgres',
        connectionMode: 'agent',
        agentId: created.body.id,
        secretMode: 'sealed',
        secrets: { password },
        config: { ...testDatabaseConfig(app), database: new URL(app.env.DATABASE_URL).pathname.slice(1) },
      });
      expect([ds.status, ds.body.secretMode]).toEqual([201, 'sealed']);
      const tested = await call('POST', `/api/reporting/datasources/${ds.body.id}/test`, { wait: 20 });
      expect([tested.status, tested.body.ok, tested.body.executedBy]).toEqual([200, true, 'agent']);

      const dump: Array<{ t: string }> = await api.app.services.db.query(
        `SELECT d::text AS t FROM reporting_datasources d UNION ALL SELECT t::text FROM reporting_agent_tasks t UNION ALL SELECT a::text FROM reporting_agents a`,
      );
      expect(dump.length).toBeGreaterThan(2);
      expect(dump.filter((r) => r.t.includes(password))).toEqual([]);
      expect(api.output()).not.toContain(password);
      expect(agentProc.output()).not.toContain(password);
    });
  });
});
