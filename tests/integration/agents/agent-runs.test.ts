import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, type TestResponse } from '../../support/app';
import { confirmAgentKey } from '../../support/agent-process';
import { download } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { testDatabaseConfig } from '../../support/reporting';
import { waitFor } from '../../support/wait';
import { openSealed } from '@formwork/wire';

/**
 * The service's side of agents (docs/reporting.md "Agents", "Why agents speak HTTPS, not Temporal", "Datasource kinds",
 * "The agent protocol", "Temporal workflows"): datasources bound to agents, connection tests, schema discovery and
 * previews answered by the agent or 202, and report runs whose `runAgentQuery` activity the API completes, fails, times
 * out and cancels for the agent. A protocol client in the test stands in for the agent process here (each step is then
 * under the test's control); agent-cli.test.ts and agent-process.test.ts run the real `formwork-agent`.
 */
describe('agents serving datasources, previews and report runs', () => {
  let app: TestApp;
  let admin: SignedUpUser;
  let other: SignedUpUser;
  const suffix = randomBytes(4).toString('hex');
  const table = `agent_sales_${suffix}`;

  beforeAll(async () => {
    app = await startTestApp({
      env: { REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: '4', REPORTING_AGENT_RETRY_DELAY_SECONDS: '1', FREE_DOCUMENTS_PER_MONTH: '100' },
    });
    [admin, other] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, region text, total numeric(10,2))`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'North', 12.50), (2, 'South', 3.25)`);
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
  });

  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;
  const as = (user: SignedUpUser = admin) => ({ token: user.accessToken });

  /** The test's stand-in for `formwork-agent`: the protocol's calls, one at a time. */
  class ProtocolAgent {
    sessionId = '';
    constructor(readonly id: string, readonly token: string) {}
    call<T = any>(method: string, path: string, body?: unknown, extra: Record<string, unknown> = {}): Promise<TestResponse<T>> {
      return app.request<T>(method, `/api/agents/me${path}`, { token: this.token, ...(body !== undefined ? { body } : {}), ...extra });
    }
    async open(publicKey?: string) {
      const res = await this.call('POST', '/sessions', { version: '0.1.0', hostname: 'db-host', platform: 'linux', capabilities: ['query', 'test', 'schema', 'preview'], maxConcurrency: 4, ...(publicKey ? { publicKey } : {}) });
      expect(res.status).toBe(201);
      this.sessionId = res.body.sessionId;
      return res.body;
    }
    /** The next task, polling up to `wait` seconds. */
    async next(wait = 10) {
      const res = await this.call('GET', `/tasks/next?sessionId=${this.sessionId}&wait=${wait}`);
      expect([200, 204]).toContain(res.status);
      return res.status === 200 ? res.body : null;
    }
    heartbeat(running: string[]) {
      return this.call('POST', '/heartbeat', { sessionId: this.sessionId, running, load: { running: running.length, capacity: 4 }, pools: [] });
    }
    upload(taskId: string, columns: Array<{ name: string; type: string }>, rows: unknown[][]) {
      const body = [JSON.stringify({ columns }), ...rows.map((r) => JSON.stringify(r)), JSON.stringify({ end: true, rowCount: rows.length, truncated: false, durationMs: 7 })].join('\n') + '\n';
      return app.request('POST', `/api/agents/me/tasks/${taskId}/result?sessionId=${this.sessionId}`, { token: this.token, rawBody: body, headers: { 'content-type': 'application/x-ndjson' } });
    }
    answer(taskId: string, body: unknown) {
      return this.call('POST', `/tasks/${taskId}/result?sessionId=${this.sessionId}`, body);
    }
    fail(taskId: string, failure: { code: string; message: string; retryable: boolean }) {
      return this.call('POST', `/tasks/${taskId}/failure`, failure);
    }
  }

  async function newAgent(user = admin): Promise<ProtocolAgent> {
    const res = await app.request('POST', '/api/agents', { ...as(user), body: { name: name('Agent') } });
    expect(res.status).toBe(201);
    return new ProtocolAgent(res.body.id, res.body.token);
  }

  async function agentDatasource(agent: ProtocolAgent, body: Record<string, unknown> = {}) {
    const res = await app.request('POST', '/api/reporting/datasources', {
      ...as(),
      body: { name: name('Warehouse'), kind: 'postgres', connectionMode: 'agent', agentId: agent.id, config: testDatabaseConfig(app), secrets: { password: 'pw-stored' }, ...body },
    });
    expect([res.status, res.body.code ?? null]).toEqual([201, null]);
    return res.body;
  }

  async function publishedQuery(datasourceId: string, text: string, parameters: unknown[] = []) {
    const q = await app.request('POST', '/api/reporting/queries', { ...as(), body: { name: name('Q'), datasourceId, text, parameters } });
    expect([q.status, q.body.code ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, { ...as(), body: {} })).status).toBe(201);
    return q.body;
  }

  /** A published report with one CSV output over the agent's datasource. */
  async function csvReport(datasourceId: string) {
    const q = await publishedQuery(datasourceId, `SELECT region, total FROM ${table} WHERE total >= {{ min }} ORDER BY id`, [{ name: 'min', type: 'number', default: 0 }]);
    const r = await app.request('POST', '/api/reporting/reports', {
      ...as(),
      body: { name: name('Regions'), datasets: [{ name: 'regions', queryId: q.id, parameters: { min: '{{ min }}' } }], parameters: [{ name: 'min', type: 'number', default: 0 }], outputs: [{ format: 'csv' }] },
    });
    expect([r.status, r.body.code ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/reports/${r.body.id}/publish`, { ...as(), body: {} })).status).toBe(201);
    return r.body;
  }

  async function startRun(reportId: string, parameters: Record<string, unknown> = {}) {
    const res = await app.request('POST', `/api/reporting/reports/${reportId}/runs`, { ...as(), body: { parameters } });
    expect(res.status).toBe(201);
    return res.body.runId as string;
  }

  const getRun = async (runId: string) => (await app.request('GET', `/api/reporting/runs/${runId}`, as())).body;
  const runEnded = (runId: string) =>
    waitFor(
      async () => {
        const run = await getRun(runId);
        return ['completed', 'failed', 'cancelled', 'skipped'].includes(run.status) ? run : undefined;
      },
      { timeoutMs: 60_000, what: `run ${runId} to end` },
    );
  const taskRows = (runId: string) => app.services.db.query(`SELECT short_id, attempt, status FROM reporting_agent_tasks WHERE run_id = $1 ORDER BY attempt`, [runId]) as Promise<Array<{ short_id: string; attempt: number; status: string }>>;

  describe('datasources bound to agents', () => {
    it('binds postgres, mysql and sqlite datasources to an agent of the project, and refuses the rest with their codes', async () => {
      const agent = await newAgent();
      const ds = await agentDatasource(agent);
      expect(ds).toMatchObject({ connectionMode: 'agent', agentId: agent.id, secretMode: 'stored', secrets: { password: { set: true } } });
      const sqlite = await app.request('POST', '/api/reporting/datasources', { ...as(), body: { name: name('Lite'), kind: 'sqlite', connectionMode: 'agent', agentId: agent.id, config: { path: '/var/lib/app/data.db' } } });
      expect([sqlite.status, sqlite.body.config]).toEqual([201, { path: '/var/lib/app/data.db' }]);

      const refused = async (body: Record<string, unknown>, user = admin) => {
        const res = await app.request('POST', '/api/reporting/datasources', { ...as(user), body: { name: name('X'), kind: 'postgres', config: testDatabaseConfig(app), ...body } });
        return [res.status, res.body.code];
      };
      expect(await refused({ kind: 'sqlite', config: { path: '/data.db' } })).toEqual([400, 'ERR_DS_005']);
      expect(await refused({ kind: 'sqlite', connectionMode: 'agent', agentId: agent.id, config: { path: 'relative.db' } })).toEqual([400, 'ERR_DS_002']);
      expect(await refused({ kind: 'http_json', connectionMode: 'agent', agentId: agent.id, config: { baseUrl: 'https://api.example.com' } })).toEqual([400, 'ERR_DS_005']);
      expect(await refused({ connectionMode: 'agent' })).toEqual([400, 'ERR_DS_006']);
      const foreign = await newAgent(other);
      expect(await refused({ connectionMode: 'agent', agentId: foreign.id })).toEqual([400, 'ERR_DS_006']);
      expect(await refused({ connectionMode: 'agent', agentId: agent.id, secretMode: 'sealed', secrets: { password: 'x' } })).toEqual([400, 'ERR_DS_007']);
      expect(await refused({ connectionMode: 'agent', agentId: agent.id, secretMode: 'agent_local', secrets: { password: 'x' }, config: { ...testDatabaseConfig(app), secretEnv: 'PGPASS' } })).toEqual([400, 'ERR_DS_002']);
      expect(await refused({ connectionMode: 'agent', agentId: agent.id, secretMode: 'agent_local' })).toEqual([400, 'ERR_DS_002']);
      expect(await refused({ secretMode: 'sealed' })).toEqual([400, 'ERR_DS_002']);
      expect((await app.request('POST', '/api/reporting/datasources/test', { ...as(), body: { name: name('T'), kind: 'postgres', connectionMode: 'agent', agentId: agent.id, config: testDatabaseConfig(app) } })).status).toBe(400);

      const del = await app.request('DELETE', `/api/agents/${agent.id}`, as());
      expect([del.status, del.body.code]).toEqual([409, 'ERR_AGENT_009']);
    });

    it('seals a password to the agent: the database holds no clear text, the agent opens it, moving to stored is refused once the agent has a key', async () => {
      const agent = await newAgent();
      const { publicKey, privateKey } = generateKeyPairSync('x25519');
      await agent.open(publicKey.export({ type: 'spki', format: 'pem' }).toString());
      await confirmAgentKey(app.request, as(), agent.id);
      const password = `sealed-${randomBytes(6).toString('hex')}`;
      const ds = await agentDatasource(agent, { secretMode: 'sealed', secrets: { password } });
      expect(ds).toMatchObject({ secretMode: 'sealed', secrets: { password: { set: true } } });
      const rows = await app.services.db.query(`SELECT secrets::text AS s FROM reporting_datasources WHERE id = $1`, [ds.id]);
      expect(rows[0].s).not.toContain(password);

      const asked = app.request('POST', `/api/reporting/datasources/${ds.id}/test`, { ...as(), body: { wait: 10 } });
      const task = await agent.next();
      expect(task.datasource.secrets).toEqual({ mode: 'sealed', sealed: expect.stringMatching(/^v1\.x25519\./) });
      expect(JSON.stringify(task)).not.toContain(password);
      expect(JSON.parse(openSealed(privateKey, task.datasource.secrets.sealed, `${ds.projectId ?? (await projectOf(ds.id))}:datasource:${ds.id}`))).toEqual({ password });
      expect((await agent.answer(task.taskId, { ok: true, latencyMs: 4, serverVersion: 'PostgreSQL 15.19' })).status).toBe(200);
      const res = await asked;
      expect([res.status, res.body]).toEqual([200, { ok: true, latencyMs: 4, serverVersion: 'PostgreSQL 15.19', executedBy: 'agent', at: expect.any(String) }]);

      // The agent has a public key: its secrets stay sealed (docs/reporting.md "Secret modes"), with or without the password.
      const back = await app.request('PATCH', `/api/reporting/datasources/${ds.id}`, { ...as(), body: { secretMode: 'stored' } });
      expect([back.status, back.body.code]).toEqual([400, 'ERR_DS_010']);
      const stored = await app.request('PATCH', `/api/reporting/datasources/${ds.id}`, { ...as(), body: { secretMode: 'stored', secrets: { password: 'again' } } });
      expect([stored.status, stored.body.code]).toEqual([400, 'ERR_DS_010']);
    });

    it('answers 202 with the task when the agent is slower than `wait`, and records the outcome when it comes', async () => {
      const agent = await newAgent();
      await agent.open();
      const ds = await agentDatasource(agent);
      const res = await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, { ...as(), body: { wait: 1 } });
      expect([res.status, res.body]).toEqual([202, { taskId: expect.stringMatching(/^atk_/), status: 'queued' }]);
      const waiting = await app.request('GET', `/api/reporting/tasks/${res.body.taskId}`, as());
      expect([waiting.status, waiting.body.status, waiting.body.kind, 'result' in waiting.body]).toEqual([200, 'queued', 'test', false]);
      expect((await app.request('GET', `/api/reporting/tasks/${res.body.taskId}`, as(other))).status).toBe(404);

      const task = await agent.next();
      expect(task).toMatchObject({ taskId: res.body.taskId, kind: 'test', datasource: { id: ds.id, kind: 'postgres', secrets: { mode: 'stored', values: { password: 'pw-stored' } } } });
      expect((await agent.fail(task.taskId, { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.5:5432', retryable: true })).status).toBe(200);
      const done = await app.request('GET', `/api/reporting/tasks/${res.body.taskId}`, as());
      expect(done.body).toMatchObject({ status: 'failed', result: { ok: false, error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.5:5432' } } });
      const read = await app.request('GET', `/api/reporting/datasources/${ds.id}`, as());
      expect(read.body.lastTest).toMatchObject({ ok: false, error: { code: 'ECONNREFUSED' } });
    });

    it('discovers the schema and previews a query through the agent', async () => {
      const agent = await newAgent();
      await agent.open();
      const ds = await agentDatasource(agent);
      const refreshing = app.request('POST', `/api/reporting/datasources/${ds.id}/schema/refresh`, { ...as(), body: { wait: 10 } });
      const schemaTask = await agent.next();
      expect(schemaTask.kind).toBe('schema');
      const tables = [{ schema: 'public', name: table, type: 'table', columns: [{ name: 'region', dataType: 'text', nullable: true, ordinal: 1 }] }];
      expect((await agent.answer(schemaTask.taskId, { refreshedAt: new Date().toISOString(), tables, truncated: false })).status).toBe(200);
      expect((await refreshing).body).toMatchObject({ tables, truncated: false });
      expect((await app.request('GET', `/api/reporting/datasources/${ds.id}/schema`, as())).body.tables).toEqual(tables);

      const q = await publishedQuery(ds.id, `SELECT region, total FROM ${table} WHERE total >= {{ min }}`, [{ name: 'min', type: 'number', default: 0 }]);
      const previewing = app.request('POST', `/api/reporting/queries/${q.id}/preview`, { ...as(), body: { parameters: { min: 5 }, limit: 10, wait: 10 } });
      const preview = await agent.next();
      expect(preview).toMatchObject({ kind: 'preview', statement: { dialect: 'postgres', sql: `SELECT region, total FROM ${table} WHERE total >= $1`, values: [5] }, limits: { maxRows: 10, onRowLimit: 'truncate' } });
      expect((await agent.upload(preview.taskId, [{ name: 'region', type: 'text' }, { name: 'total', type: 'numeric' }], [['North', '12.50']])).status).toBe(200);
      const res = await previewing;
      expect([res.status, res.body]).toEqual([200, { columns: [{ name: 'region', type: 'text' }, { name: 'total', type: 'numeric' }], rows: [{ region: 'North', total: '12.50' }], rowCount: 1, truncated: false, durationMs: 7, executedBy: 'agent' }]);
    });
  });

  describe('report runs through an agent', () => {
    it('runs the dataset on the agent: the API completes the waiting activity with the uploaded rows', async () => {
      const agent = await newAgent();
      await agent.open();
      const ds = await agentDatasource(agent);
      const report = await csvReport(ds.id);
      const runId = await startRun(report.id, { min: 5 });
      const task = await agent.next(20);
      expect(task).toMatchObject({ kind: 'query', attempt: 1, statement: { dialect: 'postgres', sql: `SELECT region, total FROM ${table} WHERE total >= $1 ORDER BY id`, values: [5] } });
      expect((await agent.upload(task.taskId, [{ name: 'region', type: 'text' }, { name: 'total', type: 'numeric' }], [['North', '12.50']])).status).toBe(200);
      const run = await runEnded(runId);
      expect(run).toMatchObject({ status: 'completed', datasets: [{ name: 'regions', status: 'completed', rowCount: 1, executedBy: 'agent', agentId: agent.id }] });
      const file = await download(run.outputs[0].downloadUrl);
      expect(file.body.toString('utf8').replace(/^\uFEFF/, '').trim().split(/\r?\n/)).toEqual(['region,total', 'North,12.50']);
    });

    it("fails the run with the agent's code when the agent reports a statement error (not retried)", async () => {
      const agent = await newAgent();
      await agent.open();
      const report = await csvReport((await agentDatasource(agent)).id);
      const runId = await startRun(report.id);
      const task = await agent.next(20);
      await agent.fail(task.taskId, { code: 'ERR_QRY_009', message: 'The statement writes', retryable: false });
      const run = await runEnded(runId);
      expect(run).toMatchObject({ status: 'failed', failedStage: 'query', error: { code: 'ERR_QRY_009' }, datasets: [{ status: 'failed', error: { code: 'ERR_QRY_009' } }] });
      expect((await taskRows(runId)).map((t) => t.status)).toEqual(['failed']);
    });

    it('times out the attempt of an agent that went silent; the retry makes a new task and a late upload of the old one is refused', async () => {
      const agent = await newAgent();
      await agent.open();
      const report = await csvReport((await agentDatasource(agent)).id);
      const runId = await startRun(report.id);
      const first = await agent.next(20);
      // Silence: no heartbeat and no poll for longer than the 4 s heartbeat timeout.
      const second = await waitFor(
        async () => {
          const rows = await taskRows(runId);
          return rows.find((t) => t.attempt === 2) ? rows : undefined;
        },
        { timeoutMs: 30_000, what: 'a second attempt' },
      );
      expect(second.map((t) => [t.attempt, t.status])).toEqual([
        [1, 'expired'],
        [2, 'queued'],
      ]);
      const late = await agent.upload(first.taskId, [{ name: 'region', type: 'text' }], [['late']]);
      expect([late.status, late.body.code]).toEqual([410, 'ERR_AGENT_006']);
      const retry = await agent.next(20);
      expect(retry).toMatchObject({ kind: 'query', attempt: 2 });
      expect((await agent.upload(retry.taskId, [{ name: 'region', type: 'text' }, { name: 'total', type: 'numeric' }], [['South', '3.25']])).status).toBe(200);
      expect(await runEnded(runId)).toMatchObject({ status: 'completed', datasets: [{ rowCount: 1, executedBy: 'agent' }] });
    });

    it('tells the agent to stop a cancelled run in its next heartbeat, and records the task cancelled', async () => {
      const agent = await newAgent();
      await agent.open();
      const report = await csvReport((await agentDatasource(agent)).id);
      const runId = await startRun(report.id);
      const task = await agent.next(20);
      expect((await agent.heartbeat([task.taskId])).body.cancel).toEqual([]);
      expect((await app.request('POST', `/api/reporting/runs/${runId}/cancel`, { ...as(), body: {} })).status).toBe(200);
      const told = await waitFor(
        async () => {
          const beat = await agent.heartbeat([task.taskId]);
          return beat.body.cancel?.includes(task.taskId) ? beat.body : undefined;
        },
        { timeoutMs: 20_000, what: 'the heartbeat to say cancel' },
      );
      expect(told.cancel).toEqual([task.taskId]);
      expect((await agent.fail(task.taskId, { code: 'CANCELLED', message: 'cancelled by the service', retryable: false })).status).toBe(200);
      expect(await runEnded(runId)).toMatchObject({ status: 'cancelled' });
      expect((await taskRows(runId)).map((t) => t.status)).toEqual(['cancelled']);
    });
  });

  async function projectOf(datasourceId: string): Promise<string> {
    const [row] = await app.services.db.query(`SELECT project_id FROM reporting_datasources WHERE id = $1`, [datasourceId]);
    return row.project_id;
  }
});
