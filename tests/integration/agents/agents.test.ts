import { createHash, createPublicKey, randomBytes, randomUUID, generateKeyPairSync } from 'node:crypto';
import { openSealed } from '@formwork/wire';
import { gunzipSync, gzipSync } from 'node:zlib';
import { startTestApp, type TestApp, type TestResponse } from '../../support/app';
import { addTeamProject, createKey, findInDatabase } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { inTeam } from '../../support/teams';
import { waitFor } from '../../support/wait';

const MAX_RESULT = 1_000_000;

/** The fingerprint as docs/agent.md defines it: SHA256: and the unpadded base64 of the SHA-256 of the SPKI DER. */
const fingerprintOf = (pem: string) => `SHA256:${createHash('sha256').update(createPublicKey(pem).export({ type: 'spki', format: 'der' })).digest('base64').replace(/=+$/, '')}`;

/**
 * Reporting agents (docs/reporting.md "Agents", "Why agents speak HTTPS, not Temporal", "Access", "The agent protocol",
 * "Limits", "Security rules"; docs/errors.md "Errors").
 */
describe('reporting agents', () => {
  let app: TestApp;
  let owner: SignedUpUser;
  let admin: SignedUpUser;
  let member: SignedUpUser;
  let viewer: SignedUpUser;
  let stranger: SignedUpUser;
  let teamId: string;
  let otherTeamId: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { REPORTING_RESULT_MAX_BYTES: String(MAX_RESULT) } });
    [owner, admin, member, viewer, stranger] = await Promise.all([1, 2, 3, 4, 5].map(() => signUp(app, { verified: true })));
    teamId = await addTeamProject(app.services.db, owner.id, [
      { userId: admin.id, role: 'admin' },
      { userId: member.id, role: 'member' },
      { userId: viewer.id, role: 'viewer' },
    ]);
    otherTeamId = await addTeamProject(app.services.db, stranger.id);
  });

  afterAll(async () => {
    await app?.close();
  });

  const db = () => app.services.db;
  const as = (user: SignedUpUser, team = teamId) => ({ token: user.accessToken, headers: inTeam(team) });
  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;

  interface Agent {
    id: string;
    shortId: string;
    token: string;
    projectId: string;
  }

  async function newAgent(user = admin, team = teamId): Promise<Agent> {
    const res = await app.request('POST', '/api/agents', { ...as(user, team), body: { name: name('Agent') } });
    if (res.status !== 201) throw new Error(`agent not created: ${res.status} ${res.text}`);
    return { id: res.body.id, shortId: res.body.shortId, token: res.body.token, projectId: team };
  }

  const agentCall = <T = any>(agent: { token: string }, method: string, path: string, body?: unknown): Promise<TestResponse<T>> =>
    app.request<T>(method, `/api/agents/me${path}`, { token: agent.token, ...(body !== undefined ? { body } : {}) });

  async function openSession(agent: Agent, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await agentCall(agent, 'POST', '/sessions', { version: '1.0.0', hostname: 'db-host', platform: 'linux', capabilities: ['postgres', 'mysql', 'sqlite'], maxConcurrency: 4, ...extra });
    if (res.status !== 201) throw new Error(`session not opened: ${res.status} ${res.text}`);
    return res.body.sessionId;
  }

  /** A datasource bound to `agentId` (inserted: the datasource API binds agents in a later step). */
  async function boundDatasource(projectId: string, agentId: string): Promise<string> {
    const id = randomUUID();
    await db().query(
      `INSERT INTO reporting_datasources (id, project_id, short_id, name, kind, connection_mode, agent_id, config, secrets, secret_mode, pool, defaults)
       VALUES ($1, $2, $3, $4, 'postgres', 'agent', $5, $6, '{}', 'agent_local', '{}', '{}')`,
      [id, projectId, `rds_${randomBytes(8).toString('hex')}`, name('DS'), agentId, { host: 'db.internal', port: 5432, database: 'sales', user: 'ro' }],
    );
    return id;
  }

  async function insertTask(projectId: string, agentId: string, datasourceId: string, over: { kind?: string; runId?: string; payload?: Record<string, unknown> } = {}): Promise<string> {
    const shortId = `atk_${randomBytes(8).toString('hex')}`;
    await db().query(
      `INSERT INTO reporting_agent_tasks (id, project_id, short_id, agent_id, kind, datasource_id, run_id, payload) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        randomUUID(),
        projectId,
        shortId,
        agentId,
        over.kind ?? 'query',
        datasourceId,
        over.runId ?? null,
        over.payload ?? { statement: { dialect: 'postgres', sql: 'SELECT 1', values: [] }, limits: { maxRows: 10, timeoutSeconds: 60, maxBytes: MAX_RESULT } },
      ],
    );
    return shortId;
  }

  const taskRow = async (shortId: string) => (await db().query(`SELECT * FROM reporting_agent_tasks WHERE short_id = $1`, [shortId]))[0];

  /** An agent with a session and one leased task of `kind`. */
  async function leasedTask(kind = 'query', runId?: string, payload?: Record<string, unknown>) {
    const agent = await newAgent();
    const sessionId = await openSession(agent);
    const ds = await boundDatasource(teamId, agent.id);
    const taskId = await insertTask(teamId, agent.id, ds, { kind, runId, payload });
    const res = await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`);
    expect(res.status).toBe(200);
    expect(res.body.taskId).toBe(taskId);
    return { agent, sessionId, ds, taskId };
  }

  const upload = (agent: Agent, taskId: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    app.request('POST', `/api/agents/me/tasks/${taskId}/result`, { token: agent.token, rawBody: body, headers: { 'content-type': 'application/x-ndjson', ...headers } });

  const ndjson = (rows: unknown[][], columns = [{ name: 'region', type: 'text' }, { name: 'total', type: 'numeric' }], trailer: Record<string, unknown> = {}) =>
    [JSON.stringify({ columns }), ...rows.map((r) => JSON.stringify(r)), JSON.stringify({ end: true, rowCount: rows.length, truncated: false, durationMs: 12, ...trailer })].join('\n') + '\n';

  describe('management', () => {
    it('creates an agent whose token is answered once and stored only as its SHA-256', async () => {
      const res = await app.request('POST', '/api/agents', { ...as(admin), body: { name: name('Warehouse'), description: 'In the DMZ' } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        shortId: expect.stringMatching(/^agt_[A-Za-z0-9]{16}$/),
        name: expect.stringMatching(/^Warehouse /),
        description: 'In the DMZ',
        isActive: true,
        tokenPrefix: `${res.body.token.slice(0, 12)}...`,
        publicKey: null,
        keyFingerprint: null,
        keyStatus: 'none',
        keyConfirmedAt: null,
        status: 'never_connected',
        lastSeenAt: null,
        session: null,
        load: null,
        pools: [],
        datasourceCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        token: expect.stringMatching(/^fmag_[A-Za-z0-9]{43}$/),
      });
      const token: string = res.body.token;
      expect(await findInDatabase(db(), token)).toEqual([]);
      const [row] = await db().query(`SELECT token_hash FROM reporting_agents WHERE id = $1`, [res.body.id]);
      expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));

      for (const ref of [res.body.id, res.body.shortId]) {
        const one = await app.request('GET', `/api/agents/${ref}`, as(viewer));
        expect(one.status).toBe(200);
        expect(one.body.token).toBeUndefined();
        expect(one.body.name).toBe(res.body.name);
      }
      const list = await app.request('GET', '/api/agents?limit=100', as(viewer));
      expect(list.status).toBe(200);
      expect(list.body.data.map((a: { id: string }) => a.id)).toContain(res.body.id);
      expect(list.body.meta).toEqual(expect.objectContaining({ page: 1, limit: 100 }));
      expect(list.body.data.every((a: Record<string, unknown>) => a.token === undefined)).toBe(true);
      const never = await app.request('GET', '/api/agents?status=never_connected&limit=100', as(viewer));
      expect(never.body.data.map((a: { id: string }) => a.id)).toContain(res.body.id);

      const patched = await app.request('PATCH', `/api/agents/${res.body.id}`, { ...as(owner), body: { description: null, name: 'Renamed ' + res.body.shortId } });
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual(expect.objectContaining({ description: null, name: 'Renamed ' + res.body.shortId }));

      expect((await app.request('DELETE', `/api/agents/${res.body.id}`, as(admin))).status).toBe(204);
      const gone = await app.request('GET', `/api/agents/${res.body.id}`, as(admin));
      expect(gone.status).toBe(404);
      expect(gone.body.code).toBe('ERR_AGENT_001');
    });

    it('lets viewers read, members see tasks, and only admins and owners manage; API keys never', async () => {
      const agent = await newAgent();
      const write = [
        ['POST', '/api/agents', { name: name('No') }],
        ['PATCH', `/api/agents/${agent.id}`, { isActive: false }],
        ['POST', `/api/agents/${agent.id}/rotate-token`, undefined],
        ['DELETE', `/api/agents/${agent.id}`, undefined],
      ] as const;
      for (const user of [member, viewer]) {
        for (const [method, path, body] of write) {
          const res = await app.request(method, path, { ...as(user), ...(body ? { body } : {}) });
          expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_AUTH_005']);
        }
      }
      expect((await app.request('GET', `/api/agents/${agent.id}/health`, as(viewer))).status).toBe(200);
      expect((await app.request('GET', `/api/agents/${agent.id}/tasks`, as(viewer))).status).toBe(403);
      expect((await app.request('GET', `/api/agents/${agent.id}/tasks`, as(member))).status).toBe(200);

      const key = await createKey(app, owner.accessToken, { name: name('key') }, teamId);
      for (const [method, path] of [['GET', '/api/agents'], ['GET', `/api/agents/${agent.id}`], ['POST', '/api/agents']] as const) {
        const res = await app.request(method, path, { token: key.plainKey, ...(method === 'POST' ? { body: { name: name('k') } } : {}) });
        expect([path, res.status, res.body.code]).toEqual([path, 403, 'ERR_AUTH_005']);
      }
    });

    it('refuses to create an agent for an unverified account: 403 ERR_AUTH_006, nothing stored', async () => {
      const unverified = await signUp(app);
      const projectId = await addTeamProject(app.services.db, unverified.id);
      const agentName = name('Unverified');
      const res = await app.request('POST', '/api/agents', { ...as(unverified, projectId), body: { name: agentName } });
      expect([res.status, res.body.code, res.body.token]).toEqual([403, 'ERR_AUTH_006', undefined]);
      expect(await db().query(`SELECT 1 FROM reporting_agents WHERE project_id = $1`, [projectId])).toEqual([]);
      await db().query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [unverified.id]);
      expect((await app.request('POST', '/api/agents', { ...as(unverified, projectId), body: { name: agentName } })).status).toBe(201);
    });

    it('refuses duplicate names (case-insensitive), unknown fields and other projects’ agents', async () => {
      const agentName = name('Dup');
      expect((await app.request('POST', '/api/agents', { ...as(admin), body: { name: agentName } })).status).toBe(201);
      const dup = await app.request('POST', '/api/agents', { ...as(admin), body: { name: agentName.toUpperCase() } });
      expect(dup.status).toBe(400);
      expect(dup.body.code).toBe('ERR_VALID_001');
      const unknown = await app.request('POST', '/api/agents', { ...as(admin), body: { name: name('U'), token: 'fmag_mine' } });
      expect(unknown.status).toBe(400);
      const long = await app.request('POST', '/api/agents', { ...as(admin), body: { name: 'x'.repeat(101) } });
      expect(long.status).toBe(400);

      const foreign = await newAgent(stranger, otherTeamId);
      for (const [method, path] of [['GET', `/api/agents/${foreign.id}`], ['GET', `/api/agents/${foreign.shortId}/health`], ['PATCH', `/api/agents/${foreign.id}`], ['DELETE', `/api/agents/${foreign.id}`], ['GET', `/api/agents/not-an-id`]] as const) {
        const res = await app.request(method, path, { ...as(owner), ...(method === 'PATCH' ? { body: { isActive: false } } : {}) });
        expect([path, res.status, res.body.code]).toEqual([path, 404, 'ERR_AGENT_001']);
      }
      const [row] = await db().query(`SELECT is_active FROM reporting_agents WHERE id = $1`, [foreign.id]);
      expect(row.is_active).toBe(true);
    });

    it('refuses to delete an agent while datasources are bound to it', async () => {
      const agent = await newAgent();
      const ds = await boundDatasource(teamId, agent.id);
      const res = await app.request('DELETE', `/api/agents/${agent.id}`, as(admin));
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('ERR_AGENT_009');
      expect(res.body.relatedInfo).toEqual({ datasources: 1 });
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body.datasourceCount).toBe(1);
      await db().query(`DELETE FROM reporting_datasources WHERE id = $1`, [ds]);
      expect((await app.request('DELETE', `/api/agents/${agent.id}`, as(admin))).status).toBe(204);
    });
  });

  describe('tokens', () => {
    it('rotation stops the old token at once and keeps the key pair', async () => {
      const agent = await newAgent();
      const { publicKey } = generateKeyPairSync('x25519');
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      await openSession(agent, { publicKey: pem });
      const rotated = await app.request('POST', `/api/agents/${agent.id}/rotate-token`, as(admin));
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ token: expect.stringMatching(/^fmag_[A-Za-z0-9]{43}$/), tokenPrefix: `${rotated.body.token.slice(0, 12)}...` });
      const old = await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 1 });
      expect(old.status).toBe(401);
      expect(old.body.code).toBe('ERR_AGENT_002');
      const fresh = { ...agent, token: rotated.body.token };
      await openSession(fresh);
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body.publicKey).toBe(pem);
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body.tokenPrefix).toBe(rotated.body.tokenPrefix);
    });

    it('deactivation answers 401 ERR_AGENT_003 at once; reactivation lets the agent back in', async () => {
      const agent = await newAgent();
      const sessionId = await openSession(agent);
      expect((await app.request('PATCH', `/api/agents/${agent.id}`, { ...as(admin), body: { isActive: false } })).status).toBe(200);
      const poll = await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`);
      expect(poll.status).toBe(401);
      expect(poll.body.code).toBe('ERR_AGENT_003');
      expect((await app.request('PATCH', `/api/agents/${agent.id}`, { ...as(admin), body: { isActive: true } })).status).toBe(200);
      expect((await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`)).status).toBe(204);
    });

    it('an agent token opens only /api/agents/me/*; user sessions and API keys do not open it', async () => {
      const agent = await newAgent();
      for (const [method, path] of [
        ['GET', '/api/reporting/datasources'],
        ['GET', '/api/templates'],
        ['GET', '/api/agents'],
        ['GET', `/api/agents/${agent.id}`],
        ['GET', '/api/reporting/reports'],
        ['GET', '/api/api-keys'],
        ['GET', '/api/users/me'],
        ['POST', '/api/documents/generate'],
      ] as const) {
        const res = await app.request(method, path, { token: agent.token, headers: inTeam(teamId), ...(method === 'POST' ? { body: {} } : {}) });
        expect([path, res.status, res.body.code]).toEqual([path, 403, 'ERR_AUTH_005']);
      }
      const key = await createKey(app, owner.accessToken, { name: name('key') }, teamId);
      for (const token of [owner.accessToken, key.plainKey]) {
        const res = await app.request('POST', '/api/agents/me/sessions', { token, headers: inTeam(teamId), body: { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 1 } });
        expect([res.status, res.body.code]).toEqual([403, 'ERR_AUTH_005']);
      }
      const anonymous = await app.request('GET', '/api/agents/me/tasks/next?sessionId=' + randomUUID());
      expect(anonymous.status).toBe(401);
      const forged = await agentCall({ token: 'fmag_' + 'A'.repeat(43) }, 'GET', '/tasks/next?sessionId=' + randomUUID());
      expect([forged.status, forged.body.code]).toEqual([401, 'ERR_AGENT_002']);
    });

    it('limits an agent to 120 requests a minute (429 ERR_QUOTA_003)', async () => {
      const agent = await newAgent();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        const batch = await Promise.all(Array.from({ length: 30 }, () => agentCall(agent, 'POST', '/heartbeat', {})));
        statuses.push(...batch.map((r) => r.status));
      }
      expect(statuses.every((s) => s === 400)).toBe(true);
      const over = await agentCall(agent, 'POST', '/heartbeat', {});
      expect([over.status, over.body.code]).toEqual([429, 'ERR_QUOTA_003']);
      expect(over.headers.get('x-ratelimit-limit')).toBe('120');
      // Another agent has its own budget.
      expect((await agentCall(await newAgent(), 'POST', '/heartbeat', {})).status).toBe(400);
    });
  });

  describe('sessions and the long poll', () => {
    it('opens a session, sets the public key once and marks the agent online', async () => {
      const agent = await newAgent();
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const res = await agentCall(agent, 'POST', '/sessions', { version: '0.3.1', hostname: 'db-host', platform: 'linux', capabilities: ['postgres', 'sqlite'], maxConcurrency: 2, publicKey: pem });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        agentId: agent.shortId,
        keyStatus: 'pending',
        keyFingerprint: fingerprintOf(pem),
        projectId: teamId,
        sessionId: expect.any(String),
        pollWaitSeconds: 50,
        heartbeatIntervalSeconds: 20,
        leaseSeconds: 60,
        maxResultBytes: MAX_RESULT,
      });
      const read = await app.request('GET', `/api/agents/${agent.id}`, as(viewer));
      expect(read.body).toEqual(expect.objectContaining({ status: 'online', publicKey: pem, session: expect.objectContaining({ id: res.body.sessionId, version: '0.3.1', hostname: 'db-host', capabilities: ['postgres', 'sqlite'], maxConcurrency: 2 }) }));
      // The session reports the datasource kinds the agent reaches; an earlier agent's task kinds read as every kind an agent reads.
      const legacy = await agentCall(agent, 'POST', '/sessions', { version: '0.1.0', hostname: 'db-host', platform: 'linux', capabilities: ['query', 'test'], maxConcurrency: 2, publicKey: pem });
      expect(legacy.status).toBe(201);
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body.session.capabilities).toEqual(['postgres', 'mysql', 'sqlite']);
      const unknownKind = await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['oracle'], maxConcurrency: 1 });
      expect([unknownKind.status, unknownKind.body.code]).toEqual([400, 'ERR_VALID_001']);
      // The same key again is fine; another is 409; garbage is 400.
      await openSession(agent, { publicKey: pem });
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const clash = await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 1, publicKey: other });
      expect([clash.status, clash.body.code]).toEqual([409, 'ERR_AGENT_010']);
      const bad = await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 1, publicKey: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----' });
      expect(bad.status).toBe(400);
      const many = await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 33 });
      expect(many.status).toBe(400);
      await db().query(`UPDATE reporting_agents SET last_seen_at = now() - interval '2 minutes' WHERE id = $1`, [agent.id]);
      expect((await app.request('GET', `/api/agents/${agent.id}/health`, as(viewer))).body.status).toBe('offline');
    });

    it('an agent leases only tasks of its own project whose datasource is bound to it', async () => {
      const a = await newAgent();
      const b = await newAgent();
      const c = await newAgent(stranger, otherTeamId);
      const [dsA, dsB, dsC] = await Promise.all([boundDatasource(teamId, a.id), boundDatasource(teamId, b.id), boundDatasource(otherTeamId, c.id)]);
      // Every task that A must never see: B's own, A's id on B's datasource, another project's, A's id on another project's datasource.
      const foreign = [
        await insertTask(teamId, b.id, dsB),
        await insertTask(teamId, a.id, dsB),
        await insertTask(otherTeamId, c.id, dsC),
        await insertTask(teamId, a.id, dsC),
      ];
      const sessionA = await openSession(a);
      expect((await agentCall(a, 'GET', `/tasks/next?sessionId=${sessionA}&wait=0`)).status).toBe(204);
      const mineOnPostgres = await insertTask(teamId, a.id, dsA);
      // A session that reaches only MySQL is not given a task of a postgres datasource.
      const mysqlOnly = await agentCall(a, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['mysql'], maxConcurrency: 1 });
      expect((await agentCall(a, 'GET', `/tasks/next?sessionId=${mysqlOnly.body.sessionId}&wait=0`)).status).toBe(204);
      expect((await taskRow(mineOnPostgres)).status).toBe('queued');
      await db().query(`DELETE FROM reporting_agent_tasks WHERE short_id = $1`, [mineOnPostgres]);
      const sessionA2 = await openSession(a);
      for (const id of foreign) {
        const res = await app.request('POST', `/api/agents/me/tasks/${id}/failure`, { token: a.token, body: { code: 'X', message: 'x', retryable: false } });
        expect([res.status, res.body.code]).toEqual([404, 'ERR_AGENT_004']);
        expect((await upload(a, id, ndjson([]))).status).toBe(404);
      }
      const mine = await insertTask(teamId, a.id, dsA);
      const leased = await agentCall(a, 'GET', `/tasks/next?sessionId=${sessionA2}&wait=0`);
      expect(leased.status).toBe(200);
      expect(leased.body).toEqual({
        taskId: mine,
        kind: 'query',
        attempt: 1,
        leaseExpiresAt: expect.any(String),
        datasource: { id: dsA, kind: 'postgres', config: { host: 'db.internal', port: 5432, database: 'sales', user: 'ro' }, pool: {}, secrets: { mode: 'agent_local' } },
        statement: { dialect: 'postgres', sql: 'SELECT 1', values: [] },
        limits: { maxRows: 10, timeoutSeconds: 60, maxBytes: MAX_RESULT },
      });
      expect(new Date(leased.body.leaseExpiresAt).getTime()).toBeGreaterThan(Date.now() + 50_000);
      for (const id of foreign) expect((await taskRow(id)).status).toBe('queued');
      // B's own poll takes B's task, not the mismatched one.
      const sessionB = await openSession(b);
      const forB = await agentCall(b, 'GET', `/tasks/next?sessionId=${sessionB}&wait=0`);
      expect(forB.body.taskId).toBe(foreign[0]);
      expect((await agentCall(b, 'GET', `/tasks/next?sessionId=${sessionB}&wait=0`)).status).toBe(204);
      const tasks = await app.request('GET', `/api/agents/${a.id}/tasks?status=leased`, as(member));
      expect(tasks.body.data).toEqual([expect.objectContaining({ id: mine, agentId: a.id, agentShortId: a.shortId, kind: 'query', status: 'leased', attempt: 1, datasourceId: dsA })]);
      expect(JSON.stringify(tasks.body)).not.toContain('SELECT 1');
    });

    it('a waiting long poll returns a task inserted during the wait, and 204 once the wait is over', async () => {
      const agent = await newAgent();
      const sessionId = await openSession(agent);
      const ds = await boundDatasource(teamId, agent.id);
      const started = Date.now();
      const empty = await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=1`);
      expect(empty.status).toBe(204);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);

      const t0 = Date.now();
      const polling = agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=20`);
      // While it waits, the API answers other requests (the wait does not block the event loop).
      const health = await app.request('GET', `/api/agents/${agent.id}/health`, as(viewer));
      expect(health.status).toBe(200);
      const taskId = await insertTask(teamId, agent.id, ds, { kind: 'test' });
      const got = await polling;
      expect(got.status).toBe(200);
      expect(got.body.taskId).toBe(taskId);
      // Woken by the task, not found at the end of its 20 s wait (the wait's own length, not a speed bound).
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect((await app.request('GET', '/api/agents/me/tasks/next?sessionId=x&wait=51', { token: agent.token })).status).toBe(400);
    });

    it('a long poll whose agent hung up stops probing and leases nothing', async () => {
      const agent = await newAgent();
      const sessionId = await openSession(agent);
      const ds = await boundDatasource(teamId, agent.id);
      await db().query(`UPDATE reporting_agents SET last_seen_at = NULL WHERE id = $1`, [agent.id]);
      const controller = new AbortController();
      const polling = fetch(`${app.url}/api/agents/me/tasks/next?sessionId=${sessionId}&wait=30`, { headers: { authorization: `Bearer ${agent.token}` }, signal: controller.signal }).catch(() => 'aborted');
      await waitFor(async () => (await db().query(`SELECT last_seen_at FROM reporting_agents WHERE id = $1`, [agent.id]))[0].last_seen_at);
      controller.abort();
      expect(await polling).toBe('aborted');
      // Nothing observable tells when the server saw the hang-up: give it a few probe intervals.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const taskId = await insertTask(teamId, agent.id, ds);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await taskRow(taskId)).status).toBe('queued');
    });

    it('a replaced session is 409 ERR_AGENT_011 on poll, heartbeat and upload', async () => {
      const { agent, sessionId, taskId } = await leasedTask();
      await openSession(agent);
      const poll = await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`);
      expect([poll.status, poll.body.code]).toEqual([409, 'ERR_AGENT_011']);
      const beat = await agentCall(agent, 'POST', '/heartbeat', { sessionId, running: [taskId] });
      expect([beat.status, beat.body.code]).toEqual([409, 'ERR_AGENT_011']);
      const late = await app.request('POST', `/api/agents/me/tasks/${taskId}/result?sessionId=${sessionId}`, { token: agent.token, rawBody: ndjson([]), headers: { 'content-type': 'application/x-ndjson' } });
      expect([late.status, late.body.code]).toEqual([409, 'ERR_AGENT_011']);
      // Without the session id: the task is leased to the old session, not the current one.
      const other = await upload(agent, taskId, ndjson([]));
      expect([other.status, other.body.code]).toEqual([409, 'ERR_AGENT_005']);
      const unknown = await agentCall(agent, 'GET', `/tasks/next?sessionId=${randomUUID()}&wait=0`);
      expect(unknown.status).toBe(409);
    });
  });

  describe('confirming the key (docs/agent.md "Confirming the key")', () => {
    const keyPair = () => {
      const { publicKey, privateKey } = generateKeyPairSync('x25519');
      return { pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey };
    };

    it('a first session\'s key waits for an admin: no task is leased and nothing is sealed to it until the fingerprint is confirmed', async () => {
      const agent = await newAgent();
      const { pem } = keyPair();
      const sessionId = await openSession(agent, { publicKey: pem });
      const shown = (await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body;
      expect(shown).toMatchObject({ publicKey: pem, keyStatus: 'pending', keyFingerprint: fingerprintOf(pem), keyConfirmedAt: null });
      const ds = await boundDatasource(teamId, agent.id);
      const taskId = await insertTask(teamId, agent.id, ds);
      expect((await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`)).status).toBe(204);
      expect((await taskRow(taskId)).status).toBe('queued');
      const sealed = await app.request('POST', '/api/reporting/datasources', {
        ...as(admin),
        body: { name: name('DS'), kind: 'postgres', connectionMode: 'agent', agentId: agent.id, secretMode: 'sealed', config: { host: 'db.internal', port: 5432, database: 'sales', user: 'ro' }, secrets: { password: 'pw' } },
      });
      expect([sealed.status, sealed.body.code, sealed.body.relatedInfo?.keyStatus]).toEqual([400, 'ERR_DS_007', 'pending']);

      // Only admins confirm, and only the fingerprint of the key that is there.
      for (const user of [viewer, member]) {
        expect((await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(user), body: { fingerprint: shown.keyFingerprint } })).status).toBe(403);
      }
      const wrong = await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(admin), body: { fingerprint: fingerprintOf(keyPair().pem) } });
      expect([wrong.status, wrong.body.code]).toEqual([409, 'ERR_AGENT_014']);
      expect((await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(admin), body: {} })).status).toBe(400);
      const elsewhere = await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(stranger, otherTeamId), body: { fingerprint: shown.keyFingerprint } });
      expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'ERR_AGENT_001']);

      const confirmed = await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(admin), body: { fingerprint: shown.keyFingerprint } });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toMatchObject({ keyStatus: 'confirmed', keyFingerprint: shown.keyFingerprint, keyConfirmedAt: expect.any(String) });
      const again = await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(admin), body: { fingerprint: shown.keyFingerprint } });
      expect([again.status, again.body.code, again.body.relatedInfo]).toEqual([409, 'ERR_AGENT_013', { keyStatus: 'confirmed' }]);
      const leased = await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`);
      expect([leased.status, leased.body.taskId]).toEqual([200, taskId]);
      // A new session of the same agent says the key is confirmed.
      expect((await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 1, publicKey: pem })).body.keyStatus).toBe('confirmed');
    });

    it('a stolen token gets no password in clear once the key is confirmed: stored secrets are sealed to the key for each lease', async () => {
      const agent = await newAgent();
      const { pem, privateKey } = keyPair();
      // Stored while the agent had no confirmed key.
      const password = `stored-${randomBytes(6).toString('hex')}`;
      const created = await app.request('POST', '/api/reporting/datasources', {
        ...as(admin),
        body: { name: name('DS'), kind: 'postgres', connectionMode: 'agent', agentId: agent.id, config: { host: 'db.internal', port: 5432, database: 'sales', user: 'ro' }, secrets: { password } },
      });
      expect([created.status, created.body.secretMode]).toEqual([201, 'stored']);
      let sessionId = await openSession(agent, { publicKey: pem });
      await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(admin), body: { fingerprint: fingerprintOf(pem) } });
      sessionId = await openSession(agent);
      await insertTask(teamId, agent.id, created.body.id, { kind: 'test', payload: {} });
      const leased = await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`);
      expect(leased.status).toBe(200);
      expect(leased.body.datasource.secrets).toEqual({ mode: 'sealed', sealed: expect.stringMatching(/^v1\.x25519\./) });
      expect(leased.text).not.toContain(password);
      expect(JSON.parse(openSealed(privateKey, leased.body.datasource.secrets.sealed, `${teamId}:datasource:${created.body.id}`))).toEqual({ password });
    });

    it('an admin can forget a key (a stolen token pinned its own first): the next session\'s key waits for confirmation again', async () => {
      const agent = await newAgent();
      const thief = keyPair();
      await openSession(agent, { publicKey: thief.pem });
      const real = keyPair();
      const clash = await agentCall(agent, 'POST', '/sessions', { version: '1', hostname: 'h', platform: 'linux', capabilities: ['query'], maxConcurrency: 1, publicKey: real.pem });
      expect([clash.status, clash.body.code]).toEqual([409, 'ERR_AGENT_010']);
      expect((await app.request('DELETE', `/api/agents/${agent.id}/key`, as(member))).status).toBe(403);
      const cleared = await app.request('DELETE', `/api/agents/${agent.id}/key`, as(admin));
      expect([cleared.status, cleared.body.publicKey, cleared.body.keyStatus]).toEqual([200, null, 'none']);
      const none = await app.request('POST', `/api/agents/${agent.id}/key/confirm`, { ...as(admin), body: { fingerprint: fingerprintOf(thief.pem) } });
      expect([none.status, none.body.code, none.body.relatedInfo]).toEqual([409, 'ERR_AGENT_013', { keyStatus: 'none' }]);
      await openSession(agent, { publicKey: real.pem });
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body).toMatchObject({ keyStatus: 'pending', keyFingerprint: fingerprintOf(real.pem) });
    });
  });

  describe('heartbeat', () => {
    it('renews the listed leases, records load and pools, and answers the cancel list', async () => {
      const { agent, sessionId, ds, taskId } = await leasedTask();
      const second = await insertTask(teamId, agent.id, ds);
      expect((await agentCall(agent, 'GET', `/tasks/next?sessionId=${sessionId}&wait=0`)).body.taskId).toBe(second);
      await db().query(`UPDATE reporting_agent_tasks SET lease_expires_at = now() + interval '5 seconds' WHERE short_id = $1`, [taskId]);
      await db().query(`UPDATE reporting_agent_tasks SET status = 'cancel_requested' WHERE short_id = $1`, [second]);
      const foreignDs = await boundDatasource(teamId, (await newAgent()).id);
      const res = await agentCall(agent, 'POST', '/heartbeat', {
        sessionId,
        running: [taskId, second, 'atk_notmine'],
        load: { running: 2, capacity: 4 },
        pools: [
          { datasourceId: ds, size: 2, max: 5, idle: 1, waiting: 0 },
          { datasourceId: foreignDs, size: 9, max: 9, idle: 0, waiting: 9, lastError: 'not yours' },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.cancel.sort()).toEqual([second, 'atk_notmine'].sort());
      expect(Object.keys(res.body.leaseExpiresAt)).toEqual([taskId]);
      expect(new Date(res.body.leaseExpiresAt[taskId]).getTime()).toBeGreaterThan(Date.now() + 50_000);
      expect(new Date((await taskRow(taskId)).lease_expires_at).getTime()).toBeGreaterThan(Date.now() + 50_000);

      const health = await app.request('GET', `/api/agents/${agent.id}/health`, as(viewer));
      expect(health.body).toEqual({
        status: 'online',
        lastSeenAt: expect.any(String),
        session: expect.objectContaining({ id: sessionId }),
        load: { running: 2, capacity: 4, queued: 0 },
        pools: [{ datasourceId: ds, kind: 'postgres', size: 2, max: 5, idle: 1, waiting: 0, lastError: null, lastErrorAt: null, reportedAt: expect.any(String) }],
        recentErrors: [],
      });
    });

    it('three heartbeats in a row with a pool in trouble make the agent degraded', async () => {
      const agent = await newAgent();
      const sessionId = await openSession(agent);
      const ds = await boundDatasource(teamId, agent.id);
      const beat = (lastError?: string) => agentCall(agent, 'POST', '/heartbeat', { sessionId, pools: [{ datasourceId: ds, size: 1, max: 1, idle: 0, waiting: 0, ...(lastError ? { lastError } : {}) }] });
      for (let i = 0; i < 3; i += 1) expect((await beat('ECONNREFUSED')).status).toBe(200);
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body.status).toBe('degraded');
      const listed = await app.request('GET', '/api/agents?status=degraded&limit=100', as(viewer));
      expect(listed.body.data.map((a: { id: string }) => a.id)).toContain(agent.id);
      await beat();
      expect((await app.request('GET', `/api/agents/${agent.id}`, as(viewer))).body.status).toBe('online');
    });
  });

  describe('results', () => {
    it('stores a query result under the run’s datasets and completes the task', async () => {
      const runId = randomUUID();
      const { agent, taskId } = await leasedTask('query', runId, { datasetName: 'sales', statement: { sql: 'SELECT 1' } });
      const body = ndjson([['north', 10.5], ['south', null]]);
      const res = await upload(agent, taskId, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accepted: true });
      // Named by the task, so a late upload of an earlier attempt never touches a later attempt's file.
      const key = `reporting/${teamId}/runs/${runId}/datasets/sales.${taskId}.ndjson.gz`;
      const row = await taskRow(taskId);
      expect(row).toEqual(expect.objectContaining({ status: 'completed', result_key: key }));
      // Stored as a direct query stores rows (one object per line), which rendering reads.
      const stored = await app.services.storage.get(key);
      const chunks: Buffer[] = [];
      for await (const c of stored.body) chunks.push(c as Buffer);
      const lines = '{"region":"north","total":10.5}\n{"region":"south","total":null}\n';
      expect(gunzipSync(Buffer.concat(chunks)).toString()).toBe(lines);
      expect(row.result).toEqual({ resultKey: key, columns: [{ name: 'region', type: 'text' }, { name: 'total', type: 'numeric' }], rowCount: 2, truncated: false, durationMs: 12, bytes: Buffer.byteLength(lines) });
      // Done is done: a second upload is refused.
      expect((await upload(agent, taskId, body)).body.code).toBe('ERR_AGENT_005');
    });

    it('accepts a gzip-compressed preview and stores it under agent-tasks', async () => {
      const { agent, taskId } = await leasedTask('preview');
      const body = ndjson([['a', 1]]);
      const res = await upload(agent, taskId, gzipSync(body), { 'content-encoding': 'gzip' });
      expect(res.status).toBe(200);
      expect((await taskRow(taskId)).result_key).toBe(`reporting/${teamId}/agent-tasks/${taskId}.ndjson.gz`);
    });

    it('takes a test task’s answer as JSON and a failure as failed with recent errors', async () => {
      const { agent, taskId } = await leasedTask('test');
      const ndjsonForTest = await upload(agent, taskId, ndjson([]));
      expect([ndjsonForTest.status, ndjsonForTest.body.code]).toEqual([400, 'ERR_AGENT_008']);
      const res = await agentCall(agent, 'POST', `/tasks/${taskId}/result`, { ok: true, latencyMs: 4, serverVersion: '16.2' });
      expect(res.status).toBe(200);
      expect((await taskRow(taskId)).result).toEqual({ ok: true, latencyMs: 4, serverVersion: '16.2' });

      const failing = await leasedTask('query');
      const fail = await agentCall(failing.agent, 'POST', `/tasks/${failing.taskId}/failure`, { code: 'ERR_QRY_006', message: 'relation "x" does not exist', retryable: false, dbCode: '42P01' });
      expect(fail.status).toBe(200);
      expect(await taskRow(failing.taskId)).toEqual(expect.objectContaining({ status: 'failed', error: { code: 'ERR_QRY_006', message: 'relation "x" does not exist', retryable: false, dbCode: '42P01' } }));
      const health = await app.request('GET', `/api/agents/${failing.agent.id}/health`, as(viewer));
      expect(health.body.recentErrors).toEqual([{ at: expect.any(String), taskId: failing.taskId, code: 'ERR_QRY_006', message: 'relation "x" does not exist' }]);
      const again = await agentCall(failing.agent, 'POST', `/tasks/${failing.taskId}/failure`, { code: 'X', message: 'x', retryable: true });
      expect(again.body.code).toBe('ERR_AGENT_005');
      const badBody = await agentCall(failing.agent, 'POST', `/tasks/${failing.taskId}/failure`, { code: 'X', message: 'x', retryable: 'yes', extra: 1 });
      expect(badBody.status).toBe(400);
    });

    it('a task the service cancelled ends cancelled when the agent reports it stopped', async () => {
      const { agent, taskId } = await leasedTask('query');
      await db().query(`UPDATE reporting_agent_tasks SET status = 'cancel_requested' WHERE short_id = $1`, [taskId]);
      const res = await agentCall(agent, 'POST', `/tasks/${taskId}/failure`, { code: 'CANCELLED', message: 'stopped', retryable: false });
      expect(res.status).toBe(200);
      expect((await taskRow(taskId)).status).toBe('cancelled');
    });

    it('an expired task answers 410 ERR_AGENT_006', async () => {
      const { agent, taskId } = await leasedTask('query');
      await db().query(`UPDATE reporting_agent_tasks SET status = 'expired' WHERE short_id = $1`, [taskId]);
      const res = await upload(agent, taskId, ndjson([]));
      expect([res.status, res.body.code]).toEqual([410, 'ERR_AGENT_006']);
    });

    it('refuses malformed results with 400 ERR_AGENT_008 and stores nothing', async () => {
      const cases: Array<[string, string]> = [
        ['empty body', ''],
        ['not JSON', 'hello\n'],
        ['no columns line', JSON.stringify(['a', 1]) + '\n'],
        ['row width', ndjson([['a']])],
        ['row count', ndjson([['a', 1]], undefined, { rowCount: 5 })],
        ['no trailer', JSON.stringify({ columns: [{ name: 'a', type: 'text' }] }) + '\n["x"]\n'],
        ['after trailer', ndjson([]) + '["late", 1]\n'],
        ['row is an object', JSON.stringify({ columns: [{ name: 'a', type: 'text' }] }) + '\n{"a":1}\n'],
        ['column without a name', ndjson([], [{ type: 'text' } as never])],
      ];
      for (const [what, body] of cases) {
        const { agent, taskId } = await leasedTask('preview');
        const res = await upload(agent, taskId, body);
        expect([what, res.status, res.body.code]).toEqual([what, 400, 'ERR_AGENT_008']);
        expect(await app.services.storage.exists(`reporting/${teamId}/agent-tasks/${taskId}.ndjson.gz`)).toBe(false);
        expect((await taskRow(taskId)).status).toBe('leased');
      }
      const { agent, taskId } = await leasedTask('preview');
      const wrongType = await upload(agent, taskId, ndjson([]), { 'content-type': 'text/csv' });
      expect([wrongType.status, wrongType.body.code]).toEqual([415, 'ERR_REQ_007']);
      const brotli = await upload(agent, taskId, ndjson([]), { 'content-encoding': 'br' });
      expect([brotli.status, brotli.body.code]).toEqual([400, 'ERR_AGENT_008']);
      const badGzip = await upload(agent, taskId, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
      expect([badGzip.status, badGzip.body.code]).toEqual([400, 'ERR_AGENT_008']);
    });

    it('hostile results: over the cap, a huge line, 10k columns, a gzip bomb', async () => {
      const rows = Array.from({ length: 50_000 }, (_, i) => [`region-${i}`, i]);
      const big = ndjson(rows);
      expect(Buffer.byteLength(big)).toBeGreaterThan(MAX_RESULT);
      const over = await leasedTask('preview', undefined, { limits: { maxRows: 100_000, timeoutSeconds: 60, maxBytes: MAX_RESULT } });
      const tooBig = await upload(over.agent, over.taskId, big);
      expect([tooBig.status, tooBig.body.code]).toEqual([413, 'ERR_AGENT_007']);
      // The same, compressed (Content-Length small): counted while it inflates.
      const zipped = await upload(over.agent, over.taskId, gzipSync(big), { 'content-encoding': 'gzip' });
      expect([zipped.status, zipped.body.code]).toEqual([413, 'ERR_AGENT_007']);

      const huge = await leasedTask('preview');
      const line = `${JSON.stringify({ columns: [{ name: 'a', type: 'text' }] })}\n["${'x'.repeat(5 * 1024 * 1024)}"]\n`;
      const hugeLine = await upload(huge.agent, huge.taskId, gzipSync(line), { 'content-encoding': 'gzip' });
      expect([hugeLine.status, hugeLine.body.code]).toEqual([413, 'ERR_AGENT_007']);

      const wide = await leasedTask('preview');
      const columns = Array.from({ length: 10_000 }, (_, i) => ({ name: `c${i}`, type: 't' }));
      const tooWide = await upload(wide.agent, wide.taskId, ndjson([], columns));
      expect([tooWide.status, tooWide.body.code]).toEqual([400, 'ERR_AGENT_008']);
      // More rows than the task allows (its limits.maxRows): refused, not silently kept.
      const long = await leasedTask('preview', undefined, { limits: { maxRows: 1, timeoutSeconds: 60, maxBytes: MAX_RESULT } });
      const tooLong = await upload(long.agent, long.taskId, ndjson([['a', 1], ['b', 2]]));
      expect([tooLong.status, tooLong.body.code, (await taskRow(long.taskId)).status]).toEqual([400, 'ERR_AGENT_008', 'leased']);

      // 64 MB of zeros compress to about 64 KB; the server stops inflating at the 1 MB cap.
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
      const bombed = await upload(wide.agent, wide.taskId, bomb, { 'content-encoding': 'gzip' });
      expect([bombed.status, bombed.body.code]).toEqual([413, 'ERR_AGENT_007']);
      for (const t of [over, huge, wide]) expect((await taskRow(t.taskId)).status).toBe('leased');
      // The API still serves.
      expect((await app.request('GET', `/api/agents/${wide.agent.id}`, as(viewer))).status).toBe(200);
    });
  });
});
