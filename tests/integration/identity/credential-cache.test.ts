import { startApiServer } from '../../../api/server';
import { loadConfig } from '../../../domain/config';
import { createLogger } from '../../../domain/logger';
import { createServices, type Services } from '../../../platform/services';
import { freePort } from '../../../scripts/free-port';
import { createKey } from '../../support/api-keys';
import { makeRequest, startTestApp, type RequestFn, type TestApp, type TestResponse } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { accessToken, createOAuthClient } from '../../support/oauth';
import { addMember, createTeam, inTeam } from '../../support/teams';
import { waitFor } from '../../support/wait';

/**
 * docs/performance.md, "Request path": every API process keeps the API keys and OAuth tokens it
 * resolved (here for a minute, so that only the change notification can explain an eviction), and a
 * change made through one replica, or straight in the database, ends the credential on the other at once.
 */
const TTL = { CREDENTIAL_CACHE_TTL_MS: '60000' };

describe('credential cache: revocation reaches every API replica at once', () => {
  let a: TestApp;
  let bServices: Services;
  let bClose: () => Promise<void>;
  /** Requests to replica B: another API process's services and server on the same database. */
  let b: RequestFn;
  let owner: SignedUpUser;

  beforeAll(async () => {
    a = await startTestApp({ env: { ...TTL, ACCOUNT_DELETION_GRACE_SECONDS: '600' } });
    const port = await freePort();
    const config = loadConfig({ ...a.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    bServices = await createServices(config, createLogger('silent'));
    const server = await startApiServer(bServices, {}, port, '127.0.0.1');
    bClose = server.close;
    b = makeRequest(server.url);
    owner = await signUp(a, { verified: true });
    // The first call with a key opens each replica's LISTEN connection; entries are kept once it listens.
    const first = await createKey(a, owner.accessToken, { name: 'first' });
    for (const request of [a.request, b]) expect((await useKey(request, first.plainKey)).status).toBe(200);
    await waitFor(
      async () => {
        const [{ n }] = await a.services.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'formwork-credential-cache' AND query ILIKE 'LISTEN%'`,
        );
        return n === 2;
      },
      { what: 'both replicas to listen for credential changes' },
    );
  });
  afterAll(async () => {
    await bClose();
    await bServices.close();
    await a.close();
  });

  /** A call any key of the project may make. */
  const useKey = (request: RequestFn, key: string) => request('GET', '/api/flow/gates', { token: key });
  /** Both replicas have resolved (and so cached) the key. */
  const warm = async (key: string) => {
    for (const request of [a.request, b, b]) expect((await useKey(request, key)).status).toBe(200);
  };

  it('keeps using a cached key while nothing announced a change (the cache is in use)', async () => {
    const key = await createKey(a, owner.accessToken, { name: 'cached' });
    await warm(key.plainKey);
    // A change nobody is told about: triggers do not fire for a replication session.
    await a.services.db.transaction(async (m) => {
      await m.query(`SET LOCAL session_replication_role = replica`);
      await m.query(`UPDATE api_keys SET is_active = false WHERE id = $1`, [key.id]);
    });
    expect((await useKey(b, key.plainKey)).status).toBe(200);
    // An announced change ends it at once (revoking is a no-op now: the row is already off).
    expect((await a.request('DELETE', `/api/api-keys/${key.id}`, { token: owner.accessToken })).status).toBe(204);
    const refused = await useKey(b, key.plainKey);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'ERR_AKEY_002' });
  });

  it('refuses a key revoked, deleted or narrowed on the other replica on the very next call', async () => {
    const revoked = await createKey(a, owner.accessToken, { name: 'revoked' });
    const deleted = await createKey(a, owner.accessToken, { name: 'deleted' });
    const narrowed = await createKey(a, owner.accessToken, { name: 'narrowed', permissions: { manage_gates: true } });
    for (const key of [revoked, deleted, narrowed]) await warm(key.plainKey);
    expect((await b('POST', '/api/flow/gates', { token: narrowed.plainKey, body: { name: 'allowed' } })).status).toBe(201);

    expect((await a.request('POST', `/api/api-keys/${revoked.id}/revoke`, { token: owner.accessToken })).status).toBe(200);
    expect((await useKey(b, revoked.plainKey)).body).toMatchObject({ code: 'ERR_AKEY_003', relatedInfo: { reason: 'revoked' } });

    expect((await a.request('DELETE', `/api/api-keys/${deleted.id}`, { token: owner.accessToken })).status).toBe(204);
    expect((await useKey(b, deleted.plainKey)).body).toMatchObject({ code: 'ERR_AKEY_002' });

    expect((await a.request('PATCH', `/api/api-keys/${narrowed.id}`, { token: owner.accessToken, body: { permissions: { manage_gates: false } } })).status).toBe(200);
    const denied = await b('POST', '/api/flow/gates', { token: narrowed.plainKey, body: { name: 'refused' } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'manage_gates' } });
    // Switched back on through the other replica: works again at once (refused keys are never kept).
    expect((await b('PATCH', `/api/api-keys/${revoked.id}`, { token: owner.accessToken, body: { isActive: true } })).status).toBe(200);
    expect((await useKey(a.request, revoked.plainKey)).status).toBe(200);
  });

  it('ends the keys of a member removed from the project, and of an account being deleted, on the other replica', async () => {
    const team = await createTeam(a, owner);
    const admin = await addMember(a, owner, team.id, 'admin');
    const leaver = await addMember(a, owner, team.id, 'admin');
    const adminKey = await createKey(a, admin.accessToken, { name: 'admin key' }, team.id);
    const leaverKey = await createKey(a, leaver.accessToken, { name: 'leaver key' }, team.id);
    await warm(adminKey.plainKey);
    await warm(leaverKey.plainKey);

    expect((await a.request('DELETE', `/api/teams/members/${leaver.id}`, { token: owner.accessToken, headers: inTeam(team.id) })).status).toBe(200);
    expect((await useKey(b, leaverKey.plainKey)).body).toMatchObject({ code: 'ERR_AKEY_003', relatedInfo: { reason: 'creator_left_project' } });

    expect((await a.request('DELETE', '/api/users/me', { token: admin.accessToken, body: { password: admin.password } })).status).toBe(200);
    expect((await useKey(b, adminKey.plainKey)).body).toMatchObject({ code: 'ERR_AKEY_003', relatedInfo: { reason: 'creator_pending_deletion' } });
    // Restored: the key works again on both replicas.
    expect((await b('POST', '/api/auth/restore-account', { body: { email: admin.email, password: admin.password } })).status).toBe(200);
    expect((await useKey(a.request, adminKey.plainKey)).status).toBe(200);
    expect((await useKey(b, adminKey.plainKey)).status).toBe(200);
  });

  it('sees changes made straight in the database (another process, a script) without any API call', async () => {
    const key = await createKey(a, owner.accessToken, { name: 'scripted' });
    await warm(key.plainKey);
    await a.services.db.query(`UPDATE api_keys SET is_active = false WHERE id = $1`, [key.id]);
    // The notification is delivered at commit; no request went through a replica to wait for it.
    await waitFor(async () => (await useKey(b, key.plainKey)).status === 401, { intervalMs: 5, what: 'replica B to refuse the key' });

    const team = await createTeam(a, owner);
    const member = await addMember(a, owner, team.id, 'admin');
    const memberKey = await createKey(a, member.accessToken, { name: 'member key' }, team.id);
    await warm(memberKey.plainKey);
    // A deleted user's rows go with it (ON DELETE CASCADE): the key and the membership.
    await a.services.db.query(`DELETE FROM users WHERE id = $1`, [member.id]);
    await waitFor(async () => (await useKey(b, memberKey.plainKey)).status === 401, { intervalMs: 5, what: 'replica B to refuse the deleted user\'s key' });
  });

  /**
   * Replica B refuses the token: the change notification reaches it a moment after the commit on A
   * (LISTEN/NOTIFY is asynchronous). The wait (waitFor's default, at most 45 s) stays below the cache's
   * 60-second TTL, so only the notification can explain the refusal.
   */
  const refusedOnB = (call: () => Promise<TestResponse<{ code?: string }>>, what: string) =>
    waitFor(async () => (await call()).body?.code === 'ERR_OAUTH_007', { intervalMs: 5, what: `replica B to refuse ${what}` });

  it('stops OAuth tokens of a client deactivated or rotated on the other replica', async () => {
    const client = await createOAuthClient(a, owner.accessToken, { name: 'cached client', permissions: { read_documents: true } });
    const token = await accessToken(a, client);
    const useToken = (request: RequestFn) => request('GET', '/api/documents/jobs', { token });
    for (const request of [a.request, b, b]) expect((await useToken(request)).status).toBe(200);
    expect((await a.request('PATCH', `/api/oauth/clients/${client.id}`, { token: owner.accessToken, body: { isActive: false } })).status).toBe(200);
    await refusedOnB(() => useToken(b), 'the deactivated client\'s token');

    const rotated = await createOAuthClient(a, owner.accessToken, { name: 'rotated client', permissions: { read_documents: true } });
    const old = await accessToken(a, rotated);
    for (const request of [a.request, b, b]) expect((await request('GET', '/api/documents/jobs', { token: old })).status).toBe(200);
    expect((await a.request('POST', `/api/oauth/clients/${rotated.id}/rotate-secret`, { token: owner.accessToken })).status).toBe(200);
    await refusedOnB(() => b('GET', '/api/documents/jobs', { token: old }), 'the rotated client\'s old token');
  });
});
