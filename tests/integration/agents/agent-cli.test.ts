import { createPublicKey, randomBytes, randomUUID } from 'node:crypto';
import { readFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { DatasourceEntity } from '../../../db/reporting/datasource.entity';
import { sealSecret } from '@formwork/wire';
import { confirmAgentKey, startAgentProcess, type AgentProcess } from '../../support/agent-process';
import { startTestApp, type TestApp } from '../../support/app';
import { addTeamProject } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { testDatabaseConfig } from '../../support/reporting';
import { inTeam } from '../../support/teams';
import { waitFor } from '../../support/wait';

/**
 * The `formwork-agent` CLI against the real API (docs/agent.md; docs/reporting.md
 * "Why agents speak HTTPS, not Temporal", "The agent protocol", "Read-only execution"): a separate process with its own
 * key file, leasing tasks through the long poll and running them on the test PostgreSQL database and on a SQLite file.
 * Tasks are inserted as rows (what the service's task queueing writes), so this tests the agent and the protocol, not
 * the workflows.
 */
describe('formwork-agent CLI', () => {
  let app: TestApp;
  let admin: SignedUpUser;
  let teamId: string;
  let dir: string;
  let sqlitePath: string;
  const PG_TABLE = `agent_sales_${randomBytes(3).toString('hex')}`;
  const PG_SECRET_ENV = 'FW_TEST_PG_PASSWORD';

  beforeAll(async () => {
    // Heartbeats every 2 s (a third of the timeout): a deactivation is noticed within seconds.
    app = await startTestApp({ env: { REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: '6' } });
    admin = await signUp(app, { verified: true });
    teamId = await addTeamProject(app.services.db, admin.id);
    await app.services.db.query(`CREATE TABLE ${PG_TABLE} (id serial PRIMARY KEY, region text NOT NULL, total numeric(12,2), sold_on date)`);
    await app.services.db.query(`INSERT INTO ${PG_TABLE} (region, total, sold_on) VALUES ('north', 10.50, '2026-11-01'), ('south', 20.25, '2026-11-02'), ('north', 5.00, '2026-11-03')`);
    dir = await mkdtemp(join(tmpdir(), 'formwork-agent-test-'));
    sqlitePath = join(dir, 'shop.db');
    const db = new Database(sqlitePath);
    db.exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount REAL, big INTEGER);
             CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100;
             INSERT INTO orders (customer, amount, big) VALUES ('ada', 120.5, 9007199254740993), ('bob', 15, 2), ('cy', 300, 3);`);
    db.close();
  });

  afterAll(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const db = () => app.services.db;
  const as = () => ({ token: admin.accessToken, headers: inTeam(teamId) });
  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;

  interface Agent {
    id: string;
    token: string;
  }

  async function newAgent(): Promise<Agent> {
    const res = await app.request('POST', '/api/agents', { ...as(), body: { name: name('Agent') } });
    if (res.status !== 201) throw new Error(`agent not created: ${res.status} ${res.text}`);
    return { id: res.body.id, token: res.body.token };
  }

  const agents: AgentProcess[] = [];
  async function runAgent(agent: Agent, opts: Partial<Parameters<typeof startAgentProcess>[0]> = {}): Promise<AgentProcess> {
    const proc = await startAgentProcess({ url: app.url, token: agent.token, env: { [PG_SECRET_ENV]: 'unused-with-trust-auth' }, ...opts });
    agents.push(proc);
    return proc;
  }
  /** An agent whose key an admin confirmed once it sent it: it leases tasks (docs/agent.md "Confirming the key"). */
  async function servingAgent(agent: Agent, opts: Partial<Parameters<typeof startAgentProcess>[0]> = {}): Promise<AgentProcess> {
    const proc = await runAgent(agent, opts);
    await confirmAgentKey(app.request, as(), agent.id);
    return proc;
  }
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  /** A datasource bound to the agent (rows as the datasource API writes them; `secrets` through the entity, which encrypts them). */
  async function datasource(
    agentId: string,
    kind: 'postgres' | 'sqlite' | 'mysql',
    opts: { secretMode?: 'agent_local' | 'stored' | 'sealed'; secrets?: Record<string, string>; id?: string; config?: Record<string, unknown> } = {},
  ): Promise<string> {
    const id = opts.id ?? randomUUID();
    const secretMode = opts.secretMode ?? (kind === 'postgres' ? 'agent_local' : 'stored');
    const config = opts.config ?? (kind === 'sqlite' ? { path: sqlitePath } : { ...testDatabaseConfig(app), ...(secretMode === 'agent_local' ? { secretEnv: PG_SECRET_ENV } : {}) });
    const now = new Date().toISOString();
    const repo = db().getRepository(DatasourceEntity);
    await repo.save(
      repo.create({
        id,
        projectId: teamId,
        shortId: `rds_${randomBytes(8).toString('hex')}`,
        name: name(`DS ${kind}`),
        description: null,
        kind,
        connectionMode: 'agent',
        agentId,
        config,
        secrets: Object.fromEntries(Object.entries(opts.secrets ?? {}).map(([k, value]) => [k, { value, updatedAt: now }])),
        secretMode,
        pool: { max: 2, idleTimeoutSeconds: 60 },
        defaults: { timeoutSeconds: 30, maxRows: 1000 },
        lastTest: null,
        schema: null,
        schemaRefreshedAt: null,
        createdAt: new Date(),
        updatedAt: new Date(),
      }),
    );
    return id;
  }

  async function task(agentId: string, datasourceId: string, kind: 'query' | 'test' | 'schema' | 'preview', payload: Record<string, unknown> = {}): Promise<string> {
    const shortId = `atk_${randomBytes(8).toString('hex')}`;
    await db().query(`INSERT INTO reporting_agent_tasks (id, project_id, short_id, agent_id, kind, datasource_id, payload) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      randomUUID(),
      teamId,
      shortId,
      agentId,
      kind,
      datasourceId,
      payload,
    ]);
    return shortId;
  }

  const query = (agentId: string, datasourceId: string, sql: string, values: unknown[] = [], limits: Record<string, unknown> = {}) =>
    task(agentId, datasourceId, 'query', { statement: { dialect: 'x', sql, values }, limits: { maxRows: 100, timeoutSeconds: 30, maxBytes: 1_000_000, onRowLimit: 'fail', ...limits } });

  /** The task row once it has ended (completed, failed, cancelled). */
  async function ended(shortId: string, timeoutMs = 30_000) {
    return waitFor(
      async () => {
        const [row] = await db().query(`SELECT status, result, result_key, error FROM reporting_agent_tasks WHERE short_id = $1`, [shortId]);
        return ['completed', 'failed', 'cancelled', 'expired'].includes(row?.status) ? row : undefined;
      },
      { timeoutMs, what: `task ${shortId} to end` },
    );
  }

  /**
   * The rows the service stored from the agent's upload, as objects (the form rendering reads; an
   * upload stored as it came, columns line + arrays + trailer, is read into the same form).
   */
  async function storedRows(key: string): Promise<Array<Record<string, unknown>>> {
    const { body } = await app.services.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    const lines = gunzipSync(Buffer.concat(chunks))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
    const head = lines[0] as { columns?: Array<{ name: string }> } | undefined;
    if (!head?.columns) return lines as Array<Record<string, unknown>>;
    const names = head.columns.map((c) => c.name);
    return lines.filter(Array.isArray).map((row) => Object.fromEntries(names.map((n, i) => [n, (row as unknown[])[i]])));
  }

  it('opens a session with a new X25519 key (kept 0600) and shows online', async () => {
    const agent = await newAgent();
    const proc = await runAgent(agent, { tokenVia: 'env' });
    await proc.waitForEvent('session_opened');
    const health = await waitFor(
      async () => {
        const res = await app.request('GET', `/api/agents/${agent.id}`, as());
        return res.body.status === 'online' ? res.body : undefined;
      },
      { what: 'the agent to be online' },
    );
    expect(health.session).toEqual(expect.objectContaining({ version: '0.1.0', platform: process.platform, capabilities: ['postgres', 'mysql', 'sqlite'], maxConcurrency: 4 }));
    const pem = await readFile(proc.keyFile, 'utf8');
    expect(((await stat(proc.keyFile)).mode & 0o777).toString(8)).toBe('600');
    const publicKey = createPublicKey(pem);
    expect(publicKey.asymmetricKeyType).toBe('x25519');
    expect(health.publicKey).toBe(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    // The token never appears in what the agent prints.
    expect(proc.output()).not.toContain(agent.token);
  });

  it('prints the fingerprint an admin compares; once confirmed by it the agent runs tasks', async () => {
    const agent = await newAgent();
    const ds = await datasource(agent.id, 'postgres');
    const proc = await runAgent(agent);
    const starting = await proc.waitForEvent('agent_starting');
    const waiting = await proc.waitForEvent('key_awaits_confirmation');
    const shown = (await app.request('GET', `/api/agents/${agent.id}`, as())).body;
    expect(shown).toMatchObject({ keyStatus: 'pending', keyFingerprint: starting.keyFingerprint, keyConfirmedAt: null });
    expect(waiting.keyFingerprint).toBe(starting.keyFingerprint);
    expect(starting.keyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const tested = await task(agent.id, ds, 'test');
    const confirmed = await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(), body: { fingerprint: starting.keyFingerprint } });
    expect([confirmed.status, confirmed.body.keyStatus]).toEqual([200, 'confirmed']);
    expect((await ended(tested)).status).toBe('completed');
  });

  it('runs test, schema and query tasks on PostgreSQL (agent_local secret)', async () => {
    const agent = await newAgent();
    const ds = await datasource(agent.id, 'postgres');
    await servingAgent(agent);
    const testTask = await task(agent.id, ds, 'test');
    const schemaTask = await task(agent.id, ds, 'schema');
    const queryTask = await query(agent.id, ds, `SELECT region, sum(total) AS total, min(sold_on) AS first FROM ${PG_TABLE} WHERE sold_on >= $1 GROUP BY region ORDER BY region`, ['2026-11-01']);

    const tested = await ended(testTask);
    expect(tested.status).toBe('completed');
    expect(tested.result).toEqual({ ok: true, latencyMs: expect.any(Number), serverVersion: expect.stringMatching(/^PostgreSQL /) });

    const schema = await ended(schemaTask);
    expect(schema.status).toBe('completed');
    const table = schema.result.tables.find((t: { name: string }) => t.name === PG_TABLE);
    expect(table).toEqual(expect.objectContaining({ schema: 'public', type: 'table' }));
    expect(table.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'region', 'total', 'sold_on']);

    const queried = await ended(queryTask);
    expect(queried.status).toBe('completed');
    expect(queried.result).toEqual(
      expect.objectContaining({
        rowCount: 2,
        truncated: false,
        columns: [
          { name: 'region', type: 'text' },
          { name: 'total', type: 'numeric' },
          { name: 'first', type: 'date' },
        ],
      }),
    );
    expect(await storedRows(queried.result_key)).toEqual([
      { region: 'north', total: '15.50', first: '2026-11-01' },
      { region: 'south', total: '20.25', first: '2026-11-02' },
    ]);

    // The heartbeat reports the datasource's pool: its `pool.max`, nothing running or waiting now.
    const pool = await waitFor(
      async () => (await app.request('GET', `/api/agents/${agent.id}/health`, as())).body.pools?.find((p: { datasourceId: string }) => p.datasourceId === ds),
      { what: 'the pool in the agent health' },
    );
    expect(pool).toEqual(expect.objectContaining({ size: 0, max: 2, waiting: 0 }));
  });

  it('runs test, schema and query tasks on SQLite; refuses a write (ERR_QRY_009); kills a query past its timeout (ERR_QRY_007) and keeps serving', async () => {
    const agent = await newAgent();
    const ds = await datasource(agent.id, 'sqlite');
    const proc = await servingAgent(agent);

    const tested = await ended(await task(agent.id, ds, 'test'));
    expect(tested.result).toEqual({ ok: true, latencyMs: expect.any(Number), serverVersion: expect.stringMatching(/^SQLite 3\./) });

    const schema = await ended(await task(agent.id, ds, 'schema'));
    expect(schema.status).toBe('completed');
    expect(schema.result.tables).toEqual([
      {
        schema: 'main',
        name: 'big_orders',
        type: 'view',
        columns: expect.arrayContaining([expect.objectContaining({ name: 'customer', ordinal: 2 })]),
      },
      {
        schema: 'main',
        name: 'orders',
        type: 'table',
        columns: [
          { name: 'id', dataType: 'INTEGER', nullable: true, ordinal: 1 },
          { name: 'customer', dataType: 'TEXT', nullable: false, ordinal: 2 },
          { name: 'amount', dataType: 'REAL', nullable: true, ordinal: 3 },
          { name: 'big', dataType: 'INTEGER', nullable: true, ordinal: 4 },
        ],
      },
    ]);

    const queried = await ended(await query(agent.id, ds, 'SELECT customer, amount, big, amount * 2 AS twice FROM orders WHERE amount > ? ORDER BY id', [10], { maxRows: 2, onRowLimit: 'truncate' }));
    expect(queried.status).toBe('completed');
    expect(queried.result).toEqual(
      expect.objectContaining({
        rowCount: 2,
        truncated: true,
        columns: [
          { name: 'customer', type: 'TEXT' },
          { name: 'amount', type: 'REAL' },
          { name: 'big', type: 'INTEGER' },
          { name: 'twice', type: 'real' },
        ],
      }),
    );
    expect(await storedRows(queried.result_key)).toEqual([
      // Integers past 2^53 stay exact, as text.
      { customer: 'ada', amount: 120.5, big: '9007199254740993', twice: 241 },
      { customer: 'bob', amount: 15, big: 2, twice: 30 },
    ]);

    for (const sql of [`INSERT INTO orders (customer) VALUES ('eve')`, `ATTACH '${join(dir, 'other.db')}' AS other`, 'PRAGMA user_version = 7', 'DELETE FROM orders RETURNING id']) {
      const refused = await ended(await query(agent.id, ds, sql));
      expect([sql, refused.status, refused.error.code, refused.error.retryable]).toEqual([sql, 'failed', 'ERR_QRY_009', false]);
    }
    const count = new Database(sqlitePath, { readonly: true });
    expect(count.prepare('SELECT count(*) AS n FROM orders').get()).toEqual({ n: 3 });
    count.close();

    // An aggregate over an endless recursive CTE never hands a row back: only killing its process stops it.
    const endless = await ended(await query(agent.id, ds, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], { timeoutSeconds: 1 }));
    expect(endless.status).toBe('failed');
    expect(endless.error).toEqual(expect.objectContaining({ code: 'ERR_QRY_007', retryable: false }));

    const after = await ended(await query(agent.id, ds, 'SELECT count(*) AS n FROM orders'));
    expect(after.status).toBe('completed');
    expect(await storedRows(after.result_key)).toEqual([{ n: 3 }]);
    expect(proc.child.exitCode).toBeNull();
  });

  it('runs test and query tasks on MariaDB with a stored password (the service decrypts it for the task)', async () => {
    const suffix = randomBytes(4).toString('hex');
    const database = `formwork_agent_${suffix}`;
    const user = `fw_agent_${suffix}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const root = await createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
    try {
      await root.query(`CREATE DATABASE ${database}`);
      await root.query(`CREATE TABLE ${database}.sales (id int PRIMARY KEY, region varchar(20) NOT NULL, total decimal(10,2))`);
      await root.query(`INSERT INTO ${database}.sales VALUES (1, 'north', 10.50), (2, 'south', 20.25), (3, 'north', 5.00)`);
      await root.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
      await root.query(`GRANT SELECT ON ${database}.* TO '${user}'@'%'`);

      const agent = await newAgent();
      const config = { host: '127.0.0.1', port: 3306, database, user, ssl: 'disable' };
      const ds = await datasource(agent.id, 'mysql', { secretMode: 'stored', secrets: { password }, config });
      const [stored] = await db().query(`SELECT secrets::text AS secrets FROM reporting_datasources WHERE id = $1`, [ds]);
      expect(stored.secrets).not.toContain(password);
      const proc = await servingAgent(agent);

      const tested = await ended(await task(agent.id, ds, 'test'));
      expect(tested.result).toEqual({ ok: true, latencyMs: expect.any(Number), serverVersion: expect.stringMatching(/MariaDB/) });
      const queried = await ended(await query(agent.id, ds, 'SELECT region, sum(total) AS total FROM sales WHERE id > ? GROUP BY region ORDER BY region', [0]));
      expect(queried.status).toBe('completed');
      expect(await storedRows(queried.result_key)).toEqual([
        { region: 'north', total: '15.50' },
        { region: 'south', total: '20.25' },
      ]);

      // A wrong password is the database's refusal (ERR_QRY_006), not retried.
      const wrong = await datasource(agent.id, 'mysql', { secretMode: 'stored', secrets: { password: 'wrong' }, config });
      const refused = await ended(await task(agent.id, wrong, 'test'));
      expect(refused.error).toEqual(expect.objectContaining({ code: 'ERR_QRY_006', dbCode: '1045', retryable: false }));
      expect(proc.output()).not.toContain(password);
    } finally {
      await root.query(`DROP USER IF EXISTS '${user}'@'%'`);
      await root.query(`DROP DATABASE IF EXISTS ${database}`);
      await root.end();
    }
  });

  it('opens a secret sealed to its public key (and refuses one sealed for another datasource)', async () => {
    const agent = await newAgent();
    const proc = await servingAgent(agent);
    await proc.waitForEvent('session_opened');
    const [{ public_key: publicKey }] = await db().query(`SELECT public_key FROM reporting_agents WHERE id = $1`, [agent.id]);
    expect(publicKey).toContain('BEGIN PUBLIC KEY');

    const id = randomUUID();
    const sealed = sealSecret(publicKey, JSON.stringify({ password: 'not-needed-with-trust-auth' }), `${teamId}:datasource:${id}`);
    await datasource(agent.id, 'postgres', { id, secretMode: 'sealed', secrets: { password: sealed } });
    const ok = await ended(await query(agent.id, id, `SELECT count(*)::int AS n FROM ${PG_TABLE}`));
    expect(ok.status).toBe('completed');
    expect(await storedRows(ok.result_key)).toEqual([{ n: 3 }]);

    const other = await datasource(agent.id, 'postgres', { secretMode: 'sealed', secrets: { password: sealed } });
    const refused = await ended(await task(agent.id, other, 'test'));
    expect(refused.status).toBe('failed');
    expect(refused.error).toEqual(expect.objectContaining({ code: 'ERR_DS_002', retryable: false }));
    expect(JSON.stringify(refused.error)).not.toContain('not-needed');
  });

  it('stops a task the service cancels (reported CANCELLED) and keeps serving', async () => {
    const agent = await newAgent();
    const ds = await datasource(agent.id, 'sqlite');
    const proc = await servingAgent(agent);
    const slow = await query(agent.id, ds, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], { timeoutSeconds: 60 });
    await proc.waitForEvent('task_leased', { taskId: slow });
    // What the service does when the run is cancelled; the next heartbeat's answer names the task.
    await db().query(`UPDATE reporting_agent_tasks SET status = 'cancel_requested' WHERE short_id = $1 AND status = 'leased'`, [slow]);
    const row = await ended(slow);
    expect(row.status).toBe('cancelled');
    expect(row.error).toEqual(expect.objectContaining({ code: 'CANCELLED', retryable: false }));
    const next = await ended(await query(agent.id, ds, 'SELECT 1 AS one'));
    expect(next.status).toBe('completed');
  });

  it('exits 0 promptly on SIGTERM while idle (the long poll is abandoned)', async () => {
    const agent = await newAgent();
    const proc = await servingAgent(agent);
    const { pollWaitSeconds } = await proc.waitForEvent('session_opened');
    await waitFor(async () => (await app.request('GET', `/api/agents/${agent.id}`, as())).body.status === 'online');
    const started = Date.now();
    proc.kill('SIGTERM');
    // The open long poll would answer after pollWaitSeconds (50); the agent does not wait for it.
    const wait = Number(pollWaitSeconds) * 1000;
    expect(await proc.exited(wait)).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(wait / 2);
    expect(proc.events().map((e) => e.event)).toEqual(expect.arrayContaining(['signal_received', 'shutdown_started', 'agent_stopped']));
  });

  it('on SIGTERM lets a running task finish within the grace period, else fails it AGENT_SHUTDOWN (retryable)', async () => {
    const agent = await newAgent();
    const ds = await datasource(agent.id, 'sqlite');
    const proc = await servingAgent(agent, { args: ['--shutdown-grace', '1'] });
    const slow = await query(agent.id, ds, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], { timeoutSeconds: 60 });
    await proc.waitForEvent('task_leased', { taskId: slow });
    proc.kill('SIGTERM');
    expect(await proc.exited(20_000)).toEqual({ code: 0, signal: null });
    const row = await ended(slow);
    expect(row.status).toBe('failed');
    expect(row.error).toEqual(expect.objectContaining({ code: 'AGENT_SHUTDOWN', retryable: true }));
  });

  it('exits non-zero when the agent is deactivated', async () => {
    const agent = await newAgent();
    const proc = await runAgent(agent);
    await proc.waitForEvent('session_opened');
    const res = await app.request('PATCH', `/api/agents/${agent.id}`, { ...as(), body: { isActive: false } });
    expect(res.status).toBe(200);
    // The next heartbeat (or the long poll's end) is refused 401 ERR_AGENT_003.
    const exit = await proc.exited(60_000);
    expect(exit.code).toBe(1);
    expect(proc.output()).toContain('ERR_AGENT_003');
  });

  it('refuses a plain http:// service URL other than this machine: exits 2 (a usage error) at start, before any request', async () => {
    const agent = await newAgent();
    // 192.0.2.1 (TEST-NET-1) stands for a server across the network; nothing may be sent to it in clear.
    const proc = await runAgent(agent, { url: 'http://192.0.2.1:8080' });
    expect((await proc.exited()).code).toBe(2);
    expect(proc.output()).toContain('--url must be https:// (plain http:// only to this machine: localhost, 127.0.0.0/8 or [::1]); got http://192.0.2.1:8080');
    expect(proc.output()).not.toContain('agent_starting');
  });

  it('exits non-zero when the service knows another public key for the agent (ERR_AGENT_010)', async () => {
    const agent = await newAgent();
    const first = await runAgent(agent);
    await first.waitForEvent('session_opened');
    await first.stop();
    const second = await runAgent(agent);
    expect((await second.exited()).code).toBe(1);
    expect(second.output()).toContain('ERR_AGENT_010');
  });
});
