import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { reencryptStoredSecrets } from '../../../db/secrets-at-rest';
import { activeKeyring } from '../../../domain/secret-box';
import { addTeamProject, createKey, findInDatabase } from '../../support/api-keys';
import { confirmAgentKey } from '../../support/agent-process';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { hostile, postgresAskingCleartext, type Hostile } from '../../support/hostile-databases';
import { inTeam } from '../../support/teams';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/**
 * Datasource secrets are tied to their target (docs/security.md "Reporting datasources: secrets tied
 * to their target"): a change of host, port, base URL, agent or mode needs the secrets again in the
 * same request, and the old ones never reach the new target; http_json header values are write-only
 * and encrypted; an agent with a public key gets sealed secrets, never stored ones.
 */
describe('reporting datasources: secrets tied to their target', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let carol: SignedUpUser;
  let teamId: string;
  let pgDatabase: string;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, carol] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    teamId = await addTeamProject(app.services.db, alice.id, [{ userId: carol.id, role: 'viewer' }]);
    pgDatabase = new URL(app.env.DATABASE_URL).pathname.slice(1);
  });

  afterAll(async () => {
    await Promise.all(closers.map((c) => c()));
    await app?.close();
  });

  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;
  const secret = (what: string) => `${what}-${randomBytes(8).toString('hex')}`;
  const as = (headers: Record<string, string> = {}) => ({ token: alice.accessToken, headers });

  async function create(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await app.request('POST', '/api/reporting/datasources', { ...as(headers), body: { name: name('DS'), ...body } });
    expect([res.status, res.body.code ?? null]).toEqual([201, null]);
    return res.body;
  }
  const patch = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => app.request('PATCH', `/api/reporting/datasources/${id}`, { ...as(headers), body });
  const read = async (id: string) => (await app.request('GET', `/api/reporting/datasources/${id}`, as())).body;

  async function pgListener(): Promise<Hostile> {
    const server = await hostile(postgresAskingCleartext);
    closers.push(server.close);
    return server;
  }

  async function receiver(): Promise<WebhookReceiver> {
    const r = await startWebhookReceiver();
    closers.push(r.stop);
    return r;
  }

  describe('a target change drops the stored secrets', () => {
    it('a port change without the password is 400 ERR_DS_009 and stores nothing; with it, only the new password reaches the new server', async () => {
      const oldPassword = secret('old');
      const ds = await create({ kind: 'postgres', config: { host: '127.0.0.1', port: 5432, database: pgDatabase, user: 'postgres', ssl: 'disable' }, secrets: { password: oldPassword } });
      const listener = await pgListener();
      // The new server asks for the password in clear, and the datasource allows it: whatever password the runner holds would arrive.
      const moved = { host: '127.0.0.1', port: listener.port, database: pgDatabase, user: 'postgres', ssl: 'disable', allowCleartextPassword: true };

      const refused = await patch(ds.id, { config: moved });
      expect([refused.status, refused.body.code]).toEqual([400, 'ERR_DS_009']);
      expect(refused.body.relatedInfo).toEqual({ changed: ['config.port', 'config.allowCleartextPassword'], missing: ['secrets.password'] });
      expect(await read(ds.id)).toMatchObject({ config: { port: 5432 }, secrets: { password: { set: true, updatedAt: ds.secrets.password.updatedAt } } });

      const newPassword = secret('new');
      const accepted = await patch(ds.id, { config: moved, secrets: { password: newPassword } });
      expect([accepted.status, accepted.body.config.port]).toEqual([200, listener.port]);
      const test = await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, as());
      expect(test.body.ok).toBe(false);
      const received = await listener.received();
      expect(received).toContain(newPassword);
      expect(received).not.toContain(oldPassword);
    });

    it('database and user are not target fields: changing them keeps the password', async () => {
      const ds = await create({ kind: 'postgres', config: { host: '127.0.0.1', database: pgDatabase, user: 'postgres', ssl: 'disable' }, secrets: { password: secret('pw') } });
      const res = await patch(ds.id, { config: { host: '127.0.0.1', database: 'other', user: 'reader', ssl: 'disable' } });
      expect([res.status, res.body.secrets]).toEqual([200, { password: { set: true, updatedAt: ds.secrets.password.updatedAt } }]);
    });

    it('a baseUrl change needs the token and every default header again; the new server sees only the new values', async () => {
      const [before, after] = await Promise.all([receiver(), receiver()]);
      const [oldToken, oldKey] = [secret('old-token'), secret('old-key')];
      const ds = await create({ kind: 'http_json', config: { baseUrl: before.url, auth: 'bearer', defaultHeaders: { 'X-Api-Key': oldKey } }, secrets: { token: oldToken } });

      const refused = await patch(ds.id, { config: { baseUrl: after.url, auth: 'bearer', defaultHeaders: { 'X-Api-Key': { set: true } } } });
      expect([refused.status, refused.body.code, refused.body.relatedInfo]).toEqual([400, 'ERR_DS_009', { changed: ['config.baseUrl'], missing: ['config.defaultHeaders.X-Api-Key', 'secrets.token'] }]);
      const leftOut = await patch(ds.id, { config: { baseUrl: after.url, auth: 'bearer' }, secrets: { token: secret('t') } });
      expect([leftOut.status, leftOut.body.relatedInfo?.missing]).toEqual([400, ['config.defaultHeaders.X-Api-Key']]);
      expect((await read(ds.id)).config.baseUrl).toBe(before.url);

      const [newToken, newKey] = [secret('new-token'), secret('new-key')];
      const accepted = await patch(ds.id, { config: { baseUrl: after.url, auth: 'bearer', defaultHeaders: { 'X-Api-Key': newKey } }, secrets: { token: newToken } });
      expect(accepted.status).toBe(200);
      expect((await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, as())).body.ok).toBe(true);
      const [request] = await after.waitForRequests(1);
      expect([request.headers.authorization, request.headers['x-api-key']]).toEqual([`Bearer ${newToken}`, newKey]);
      expect(JSON.stringify(after.requests)).not.toContain(oldToken);
      expect(JSON.stringify(after.requests)).not.toContain(oldKey);
      expect(before.requests).toEqual([]);
    });
  });

  describe('http_json header values are secrets', () => {
    it('a viewer and a read_reports key see {set: true}; the row holds ciphertext; the value still reaches the API and an update keeps it', async () => {
      const target = await receiver();
      const value = `Bearer ${secret('header')}`;
      const ds = await create({ kind: 'http_json', config: { baseUrl: target.url, defaultHeaders: { Authorization: value, 'X-Tenant': 'acme' } } }, inTeam(teamId));
      expect(ds.config.defaultHeaders).toEqual({ Authorization: { set: true }, 'X-Tenant': { set: true } });

      const key = await createKey(app, alice.accessToken, { name: 'reader', permissions: { read_reports: true } }, teamId);
      for (const token of [carol.accessToken, key.plainKey]) {
        const one = await app.request('GET', `/api/reporting/datasources/${ds.id}`, { token, headers: inTeam(teamId) });
        const list = await app.request('GET', '/api/reporting/datasources', { token, headers: inTeam(teamId) });
        expect([one.status, list.status]).toEqual([200, 200]);
        expect(one.body.config.defaultHeaders).toEqual({ Authorization: { set: true }, 'X-Tenant': { set: true } });
        expect(one.text + list.text).not.toContain(value);
      }
      expect(await findInDatabase(app.services.db, value)).toEqual([]);
      const [row] = await app.services.db.query(`SELECT config FROM reporting_datasources WHERE id = $1`, [ds.id]);
      expect(row.config.defaultHeaders.Authorization).toMatch(/^enc:v1:/);

      // Renamed, and a config sent back as read ({"set": true}) or without defaultHeaders: the values stay.
      expect((await patch(ds.id, { name: name('Renamed') }, inTeam(teamId))).status).toBe(200);
      expect((await patch(ds.id, { config: { baseUrl: target.url, defaultHeaders: { Authorization: { set: true }, 'X-Tenant': 'globex' } } }, inTeam(teamId))).status).toBe(200);
      expect((await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, { token: alice.accessToken, headers: inTeam(teamId) })).body.ok).toBe(true);
      const [request] = await target.waitForRequests(1);
      expect([request.headers.authorization, request.headers['x-tenant']]).toEqual([value, 'globex']);

      const marker = await patch(ds.id, { config: { baseUrl: target.url, defaultHeaders: { 'X-Other': { set: true } } } }, inTeam(teamId));
      expect([marker.status, marker.body.code, marker.body.relatedInfo?.errors?.[0]?.path]).toEqual([400, 'ERR_DS_002', 'config.defaultHeaders.X-Other']);
    });

    it('a row written before encryption is read as it is and encrypted by the start-up step', async () => {
      const target = await receiver();
      const value = secret('legacy');
      const ds = await create({ kind: 'http_json', config: { baseUrl: target.url } });
      await app.services.db.query(`UPDATE reporting_datasources SET config = config || jsonb_build_object('defaultHeaders', jsonb_build_object('X-Api-Key', $2::text)) WHERE id = $1`, [ds.id, value]);
      const shown = await app.request('GET', `/api/reporting/datasources/${ds.id}`, as());
      expect(shown.body.config.defaultHeaders).toEqual({ 'X-Api-Key': { set: true } });
      expect(shown.text).not.toContain(value);

      const counts = await reencryptStoredSecrets(app.services.db, activeKeyring(), 'plaintext');
      expect(counts['reporting_datasources.config']).toBeGreaterThanOrEqual(1);
      expect(await findInDatabase(app.services.db, value)).toEqual([]);
      expect((await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, as())).body.ok).toBe(true);
      const [request] = await target.waitForRequests(1);
      expect(request.headers['x-api-key']).toBe(value);
    });
  });

  describe('agents', () => {
    /** An agent, its token, and optionally a session that registered a public key. */
    async function agent(publicKey?: string) {
      const res = await app.request('POST', '/api/agents', { ...as(), body: { name: name('Agent') } });
      expect(res.status).toBe(201);
      const call = (method: string, path: string, body?: unknown) => app.request(method, `/api/agents/me${path}`, { token: res.body.token, ...(body !== undefined ? { body } : {}) });
      const session = await call('POST', '/sessions', { version: '0.1.0', hostname: 'db-host', platform: 'linux', capabilities: ['test'], maxConcurrency: 1, ...(publicKey ? { publicKey } : {}) });
      expect(session.status).toBe(201);
      // What an admin does after comparing the fingerprint (docs/agent.md "Confirming the key").
      if (publicKey) await confirmAgentKey(app.request, as(), res.body.id);
      const next = async () => (await call('GET', `/tasks/next?sessionId=${session.body.sessionId}&wait=10`)).body;
      return { id: res.body.id as string, next };
    }
    const publicKey = () => generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const pgConfig = () => ({ host: 'db.internal', port: 5432, database: 'sales', user: 'ro' });

    it('moving to another agent without the password is 400 ERR_DS_009; with it, the new agent gets only the new password', async () => {
      const [a, b] = [await agent(), await agent()];
      const oldPassword = secret('old');
      const ds = await create({ kind: 'postgres', connectionMode: 'agent', agentId: a.id, config: pgConfig(), secrets: { password: oldPassword } });
      expect(ds.secretMode).toBe('stored');

      const refused = await patch(ds.id, { agentId: b.id });
      expect([refused.status, refused.body.code, refused.body.relatedInfo]).toEqual([400, 'ERR_DS_009', { changed: ['agentId'], missing: ['secrets.password'] }]);
      expect((await read(ds.id)).agentId).toBe(a.id);

      const newPassword = secret('new');
      expect((await patch(ds.id, { agentId: b.id, secrets: { password: newPassword } })).status).toBe(200);
      const asked = app.request('POST', `/api/reporting/datasources/${ds.id}/test`, { ...as(), body: { wait: 1 } });
      const task = await b.next();
      expect(task.datasource.secrets).toEqual({ mode: 'stored', values: { password: newPassword } });
      expect(JSON.stringify(task)).not.toContain(oldPassword);
      await asked;
    });

    it('an agent with a public key gets sealed secrets by default and refuses stored ones; a datasource stored before the key keeps working', async () => {
      const keyed = await agent(publicKey());
      const password = secret('pw');
      const ds = await create({ kind: 'postgres', connectionMode: 'agent', agentId: keyed.id, config: pgConfig(), secrets: { password } });
      expect([ds.secretMode, ds.secrets]).toEqual(['sealed', { password: { set: true, updatedAt: expect.any(String) } }]);
      expect(await findInDatabase(app.services.db, password)).toEqual([]);

      const stored = await app.request('POST', '/api/reporting/datasources', { ...as(), body: { name: name('DS'), kind: 'postgres', connectionMode: 'agent', agentId: keyed.id, secretMode: 'stored', config: pgConfig(), secrets: { password } } });
      expect([stored.status, stored.body.code]).toEqual([400, 'ERR_DS_010']);
      const back = await patch(ds.id, { secretMode: 'stored', secrets: { password } });
      expect([back.status, back.body.code]).toEqual([400, 'ERR_DS_010']);

      // Stored while the agent had no key; the agent then registers one.
      const late = await agent();
      const old = await create({ kind: 'postgres', connectionMode: 'agent', agentId: late.id, config: pgConfig(), secrets: { password } });
      expect(old.secretMode).toBe('stored');
      await app.services.db.query(`UPDATE reporting_agents SET public_key = $2, key_confirmed_at = now() WHERE id = $1`, [late.id, publicKey()]);
      const renamed = await patch(old.id, { name: name('Renamed') });
      expect([renamed.status, renamed.body.secretMode]).toEqual([200, 'stored']);
      const rotated = secret('rotated');
      const sealed = await patch(old.id, { secrets: { password: rotated } });
      expect([sealed.status, sealed.body.secretMode]).toEqual([200, 'sealed']);
      expect(await findInDatabase(app.services.db, rotated)).toEqual([]);
    });
  });
});
