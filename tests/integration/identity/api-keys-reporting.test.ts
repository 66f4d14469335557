import { ApiKeyReportingFlags1732200010050 } from '../../../db/migrations/1732200010050-api-key-reporting-flags';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';

/** The reporting flags of API keys (docs/identity.md "Permissions", docs/reporting.md "Datasources"). */
describe('API key reporting flags (read_reports, run_reports)', () => {
  let app: TestApp;
  let user: SignedUpUser;
  let ds: any;

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    user = await signUp(app, { verified: true });
    const database = new URL(app.env.DATABASE_URL).pathname.slice(1);
    const res = await app.request('POST', '/api/reporting/datasources', {
      token: user.accessToken,
      body: { name: 'Warehouse', kind: 'postgres', config: { host: '127.0.0.1', port: 5432, database, user: 'postgres', ssl: 'disable' }, secrets: { password: 'pg-secret-never-shown' } },
    });
    expect(res.status).toBe(201);
    ds = res.body;
  });
  afterAll(() => app.close());

  it('are false for a key made without a permissions object, and for one whose object leaves them out', async () => {
    const plain = await createKey(app, user.accessToken, { name: 'defaults' });
    expect(plain.permissions).toMatchObject({ generate_documents: true, read_reports: false, run_reports: false, embed_designer: false });
    const other = await createKey(app, user.accessToken, { name: 'documents', permissions: { read_documents: true } });
    expect(other.permissions).toMatchObject({ read_documents: true, read_reports: false, run_reports: false, embed_designer: false });
  });

  it('are granted when asked for, must be booleans, and PATCH changes them', async () => {
    const key = await createKey(app, user.accessToken, { name: 'reports', permissions: { read_reports: true, run_reports: true } });
    expect(key.permissions).toEqual({
      generate_documents: false,
      read_documents: false,
      read_templates: false,
      manage_webhooks: false,
      manage_gates: false,
      read_runs: false,
      read_reports: true,
      run_reports: true,
      embed_designer: false,
    });
    const read = await app.request('GET', `/api/api-keys/${key.id}`, { token: user.accessToken });
    expect(read.body.permissions).toMatchObject({ read_reports: true, run_reports: true });

    const bad = await app.request('POST', '/api/api-keys', { token: user.accessToken, body: { name: 'x', permissions: { run_reports: 'true' } } });
    expect([bad.status, bad.body.code, bad.body.relatedInfo?.field]).toEqual([400, 'ERR_VALID_001', 'permissions.run_reports']);

    const patched = await app.request('PATCH', `/api/api-keys/${key.id}`, { token: user.accessToken, body: { permissions: { run_reports: false } } });
    expect(patched.body.permissions).toMatchObject({ read_reports: true, run_reports: false });
  });

  it('read_reports lets a key read datasources and their schema; a key without it gets 403 ERR_AUTH_005', async () => {
    const refreshed = await app.request('POST', `/api/reporting/datasources/${ds.id}/schema/refresh`, { token: user.accessToken, body: {} });
    expect(refreshed.status).toBe(200);
    const reader = await createKey(app, user.accessToken, { name: 'reader', permissions: { read_reports: true } });
    const other = await createKey(app, user.accessToken, { name: 'everyday' });

    const list = await app.request('GET', '/api/reporting/datasources', { token: reader.plainKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((d: any) => d.id)).toEqual([ds.id]);
    expect(list.text).not.toContain('pg-secret-never-shown');
    const one = await app.request('GET', `/api/reporting/datasources/${ds.shortId}`, { token: reader.plainKey });
    expect([one.status, one.body.id]).toEqual([200, ds.id]);
    const schema = await app.request('GET', `/api/reporting/datasources/${ds.id}/schema`, { token: reader.plainKey });
    expect(schema.status).toBe(200);
    expect(Array.isArray(schema.body.tables)).toBe(true);

    for (const path of ['/api/reporting/datasources', `/api/reporting/datasources/${ds.id}`, `/api/reporting/datasources/${ds.id}/schema`]) {
      const res = await app.request('GET', path, { token: other.plainKey });
      expect([path, res.status, res.body.code, res.body.relatedInfo?.required]).toEqual([path, 403, 'ERR_AUTH_005', 'read_reports']);
    }
  });

  it('no flag lets a key change a datasource: 403 ERR_AUTH_005 required manage_datasources, nothing changes', async () => {
    const key = await createKey(app, user.accessToken, { name: 'all reporting', permissions: { read_reports: true, run_reports: true } });
    const calls: Array<[string, string, unknown]> = [
      ['POST', '/api/reporting/datasources', { name: 'Sneaky', kind: 'postgres', config: { host: '127.0.0.1', port: 5432, database: 'x', user: 'postgres' } }],
      ['PATCH', `/api/reporting/datasources/${ds.id}`, { description: 'edited by a key' }],
      ['POST', `/api/reporting/datasources/${ds.id}/test`, {}],
      ['POST', `/api/reporting/datasources/${ds.id}/schema/refresh`, {}],
      ['DELETE', `/api/reporting/datasources/${ds.id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await app.request(method, path, { token: key.plainKey, body });
      expect([method, path, res.status, res.body.code, res.body.relatedInfo?.required]).toEqual([method, path, 403, 'ERR_AUTH_005', 'manage_datasources']);
      expect(String(res.body.relatedInfo.granted).split(',').sort()).toEqual(['read_reports', 'run_reports']);
    }
    const list = await app.request('GET', '/api/reporting/datasources', { token: key.plainKey });
    expect(list.body.data).toEqual([expect.objectContaining({ id: ds.id, name: 'Warehouse', description: ds.description })]);
  });

  it('keys made before the flags existed get them as false (migration 1732200010050); a key that says true keeps it', async () => {
    const old = await createKey(app, user.accessToken, { name: 'old' });
    const granted = await createKey(app, user.accessToken, { name: 'granted', permissions: { read_reports: true } });
    // As stored before the flags existed: neither key in the JSON.
    await app.services.db.query(`UPDATE api_keys SET permissions = permissions - 'read_reports' - 'run_reports' WHERE id = $1`, [old.id]);
    const runner = app.services.db.createQueryRunner();
    try {
      await new ApiKeyReportingFlags1732200010050().up(runner);
    } finally {
      await runner.release();
    }
    await app.syncCredentials();
    const rows: Array<{ id: string; permissions: Record<string, boolean> }> = await app.services.db.query(`SELECT id, permissions FROM api_keys WHERE id = ANY($1)`, [[old.id, granted.id]]);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r.permissions]));
    expect(byId[old.id]).toEqual({ generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: false, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false });
    expect(byId[granted.id]).toMatchObject({ read_reports: true, run_reports: false });
    const denied = await app.request('GET', '/api/reporting/datasources', { token: old.plainKey });
    expect(denied.status).toBe(403);
  });
});
