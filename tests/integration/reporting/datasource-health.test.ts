import { startTestApp, type TestApp } from '../../support/app';
import { testDatabaseConfig } from '../../support/reporting';
import { addTeamProject } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';

/** POST /datasources/test (a body tested, nothing saved) and GET /datasources/:id/health (docs/reporting.md "Datasources"). */
describe('reporting datasource test and health', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let teamId: string;

  const body = (overrides: Record<string, unknown> = {}) => ({
    name: 'Warehouse',
    kind: 'postgres',
    config: testDatabaseConfig(app),
    secrets: { password: 'not-needed-here' },
    ...overrides,
  });

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
    teamId = await addTeamProject(app.services.db, alice.id, [{ userId: bob.id, role: 'member' }]);
  });
  afterAll(() => app?.close());

  const inTeam = (token: string) => ({ token, headers: { 'X-Team-Id': teamId } });

  it('tests a body without saving it: ok with the server version, the guard and an unknown database as answers', async () => {
    const ok = await app.request('POST', '/api/reporting/datasources/test', { ...inTeam(alice.accessToken), body: body() });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, latencyMs: expect.any(Number), serverVersion: expect.stringMatching(/\d+/), executedBy: 'server' });

    // A private address outside OUTBOUND_ALLOWLIST is refused before any connection.
    const guarded = await app.request('POST', '/api/reporting/datasources/test', { ...inTeam(alice.accessToken), body: body({ config: { ...body().config, host: '10.0.0.1' } }) });
    expect(guarded.body).toMatchObject({ ok: false, error: { code: 'ERR_OUTBOUND_001' } });

    const wrongDb = await app.request('POST', '/api/reporting/datasources/test', { ...inTeam(alice.accessToken), body: body({ config: { ...body().config, database: 'no_such_database_here' } }) });
    expect(wrongDb.body).toMatchObject({ ok: false, error: { code: expect.any(String), message: expect.stringContaining('SQLSTATE 3D000') } });
    expect(JSON.stringify(wrongDb.body)).not.toContain('not-needed-here');

    const bad = await app.request('POST', '/api/reporting/datasources/test', { ...inTeam(alice.accessToken), body: body({ config: { host: '127.0.0.1' }, extra: 1 }) });
    expect([bad.status, bad.body.code]).toEqual([400, 'ERR_VALID_001']);
    const member = await app.request('POST', '/api/reporting/datasources/test', { ...inTeam(bob.accessToken), body: body() });
    expect([member.status, member.body.code]).toEqual([403, 'ERR_AUTH_005']);

    const list = await app.request('GET', '/api/reporting/datasources', inTeam(alice.accessToken));
    expect(list.body.meta.total).toBe(0);
  });

  it('reports health from the last connection test: unknown, then ok, then failing with the error', async () => {
    const ds = await app.request('POST', '/api/reporting/datasources', { ...inTeam(alice.accessToken), body: body({ name: 'Health', pool: { max: 7 } }) });
    expect(ds.status).toBe(201);
    const health = () => app.request('GET', `/api/reporting/datasources/${ds.body.id}/health`, inTeam(bob.accessToken));

    expect((await health()).body).toEqual({ status: 'unknown', pool: { size: 0, max: 7, idle: 0, waiting: 0 }, lastTest: null, lastError: null, reportedAt: null, executedBy: 'server' });
    await app.request('POST', `/api/reporting/datasources/${ds.body.id}/test`, { ...inTeam(alice.accessToken), body: {} });
    const ok = (await health()).body;
    expect(ok).toMatchObject({ status: 'ok', lastTest: { ok: true, error: null }, lastError: null, reportedAt: expect.any(String) });

    await app.request('PATCH', `/api/reporting/datasources/${ds.body.id}`, { ...inTeam(alice.accessToken), body: { config: { ...body().config, database: 'gone_database' } } });
    await app.request('POST', `/api/reporting/datasources/${ds.body.id}/test`, { ...inTeam(alice.accessToken), body: {} });
    const failing = (await health()).body;
    expect(failing).toMatchObject({ status: 'failing', lastTest: { ok: false }, lastError: { code: expect.any(String), message: expect.stringContaining('SQLSTATE 3D000') } });

    const stranger = await signUp(app, { verified: true });
    const peek = await app.request('GET', `/api/reporting/datasources/${ds.body.id}/health`, { token: stranger.accessToken });
    expect([peek.status, peek.body.code]).toEqual([404, 'ERR_DS_001']);
  });
});
