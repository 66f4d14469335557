import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';

/**
 * The outbound guard when a file-share channel or a datasource is saved (docs/reporting.md "File
 * shares", "Private networks"): an internal target is refused with 400 ERR_OUTBOUND_001 naming the
 * field and OUTBOUND_ALLOWLIST, nothing is stored; an allowed one is saved; a stored target that
 * turned internal is refused again when used.
 */
describe('outbound targets checked when saved', () => {
  let app: TestApp;
  let user: SignedUpUser;
  const OPENED = '10.9.8.7';
  const PUBLIC = '203.0.113.10';
  const BLOCKED = ['127.0.0.1', '169.254.169.254', 'localhost'];

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: OPENED } });
    user = await signUp(app, { verified: true });
  });
  afterAll(() => app?.close());

  const name = (what: string) => `${what} ${randomBytes(3).toString('hex')}`;
  const hostKey = `SHA256:${'A'.repeat(43)}`;
  const url = (host: string, path: string) => `http://${host}:8080${path}`;

  const channels: Record<string, { field: string; body: (host: string) => Record<string, unknown> }> = {
    sftp: {
      field: 'config.host',
      body: (host) => ({ name: name('Sftp'), kind: 'sftp', config: { host, username: 'reports', directory: '/upload', hostKeySha256: hostKey }, secrets: { password: 'sftp-password' } }),
    },
    webdav: {
      field: 'config.baseUrl',
      body: (host) => ({ name: name('Dav'), kind: 'webdav', config: { baseUrl: url(host, '/dav/'), username: 'u' }, secrets: { password: 'dav-password' } }),
    },
    s3: {
      field: 'config.endpoint',
      body: (host) => ({ name: name('S3'), kind: 's3', config: { bucket: 'reports', region: 'eu-west-1', endpoint: url(host, ''), forcePathStyle: true }, secrets: { accessKeyId: 'AKIATEST', secretAccessKey: 'secret-test-key' } }),
    },
  };

  const datasources: Record<string, { field: string; body: (host: string) => Record<string, unknown> }> = {
    postgres: {
      field: 'config.host',
      body: (host) => ({ name: name('Pg'), kind: 'postgres', config: { host, database: 'sales', user: 'ro', ssl: 'disable' }, secrets: { password: 'pg-password' } }),
    },
    mysql: {
      field: 'config.host',
      body: (host) => ({ name: name('My'), kind: 'mysql', config: { host, database: 'sales', user: 'ro', ssl: 'disable' }, secrets: { password: 'my-password' } }),
    },
    http_json: {
      field: 'config.baseUrl',
      body: (host) => ({ name: name('Api'), kind: 'http_json', config: { baseUrl: url(host, '/v1') } }),
    },
    csv: {
      field: 'config.url',
      body: (host) => ({ name: name('Csv'), kind: 'csv', config: { source: 'url', url: url(host, '/a.csv') } }),
    },
  };

  const refusal = (host: string, field: string) => ({
    code: 'ERR_OUTBOUND_001',
    message: expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}: .*${host}.*OUTBOUND_ALLOWLIST`)),
    relatedInfo: expect.objectContaining({ field, host, reason: 'internal_address' }),
  });

  async function count(table: string): Promise<number> {
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM ${table} t JOIN projects p ON p.id = t.project_id WHERE p.owner_id = $1`, [user.id]);
    return n;
  }

  describe.each(Object.keys(channels))('a %s channel', (kind) => {
    const { field, body } = channels[kind];

    it('is refused with an internal host, created and patched; saved with an allowed one', async () => {
      const before = await count('reporting_channels');
      for (const host of BLOCKED) {
        const res = await app.request('POST', '/api/reporting/channels', { token: user.accessToken, body: body(host) });
        expect([host, res.status]).toEqual([host, 400]);
        expect(res.body).toMatchObject(refusal(host, field));
      }
      expect(await count('reporting_channels')).toBe(before);

      const opened = await app.request('POST', '/api/reporting/channels', { token: user.accessToken, body: body(OPENED) });
      expect(opened.status).toBe(201);
      const open = await app.request('POST', '/api/reporting/channels', { token: user.accessToken, body: body(PUBLIC) });
      expect(open.status).toBe(201);

      const { config, secrets } = body('169.254.169.254');
      const patched = await app.request('PATCH', `/api/reporting/channels/${open.body.id}`, { token: user.accessToken, body: { config, secrets } });
      expect([patched.status, patched.body]).toEqual([400, expect.objectContaining(refusal('169.254.169.254', field))]);
      const stored = await app.request('GET', `/api/reporting/channels/${open.body.id}`, { token: user.accessToken });
      expect(JSON.stringify(stored.body.config)).toContain(PUBLIC);
    });
  });

  it('checks a file share again when it is used: a stored host that is now internal fails the test', async () => {
    const created = await app.request('POST', '/api/reporting/channels', { token: user.accessToken, body: channels.sftp.body(PUBLIC) });
    expect(created.status).toBe(201);
    // A row saved before this check existed, or a name whose DNS answer changed since.
    await app.services.db.query(`UPDATE reporting_channels SET config = jsonb_set(config, '{host}', '"127.0.0.1"') WHERE id = $1`, [created.body.id]);
    const test = await app.request('POST', `/api/reporting/channels/${created.body.id}/test`, { token: user.accessToken, body: {} });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ ok: false, error: expect.stringMatching(/127\.0\.0\.1 is a private or internal address.*OUTBOUND_ALLOWLIST/) });
  });

  describe.each(Object.keys(datasources))('a %s datasource', (kind) => {
    const { field, body } = datasources[kind];

    it('is refused with an internal host, created and patched; saved with an allowed one', async () => {
      const before = await count('reporting_datasources');
      for (const host of BLOCKED) {
        const res = await app.request('POST', '/api/reporting/datasources', { token: user.accessToken, body: body(host) });
        expect([host, res.status]).toEqual([host, 400]);
        expect(res.body).toMatchObject(refusal(host, field));
      }
      expect(await count('reporting_datasources')).toBe(before);

      const opened = await app.request('POST', '/api/reporting/datasources', { token: user.accessToken, body: body(OPENED) });
      expect(opened.status).toBe(201);
      const open = await app.request('POST', '/api/reporting/datasources', { token: user.accessToken, body: body(PUBLIC) });
      expect(open.status).toBe(201);

      const { config, secrets } = body('169.254.169.254');
      const patched = await app.request('PATCH', `/api/reporting/datasources/${open.body.id}`, { token: user.accessToken, body: { config, ...(secrets ? { secrets } : {}) } });
      expect([patched.status, patched.body]).toEqual([400, expect.objectContaining(refusal('169.254.169.254', field))]);
      const stored = await app.request('GET', `/api/reporting/datasources/${open.body.id}`, { token: user.accessToken });
      expect(JSON.stringify(stored.body.config)).toContain(PUBLIC);
      // A change that leaves the target alone is saved.
      const renamed = await app.request('PATCH', `/api/reporting/datasources/${open.body.id}`, { token: user.accessToken, body: { name: name('Renamed') } });
      expect(renamed.status).toBe(200);
    });
  });

  it('checks a datasource again when it is used: a stored host that is now internal fails the test with ERR_OUTBOUND_001', async () => {
    const created = await app.request('POST', '/api/reporting/datasources', { token: user.accessToken, body: datasources.postgres.body(PUBLIC) });
    expect(created.status).toBe(201);
    await app.services.db.query(`UPDATE reporting_datasources SET config = jsonb_set(config, '{host}', '"127.0.0.1"') WHERE id = $1`, [created.body.id]);
    const test = await app.request('POST', `/api/reporting/datasources/${created.body.id}/test`, { token: user.accessToken, body: {} });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ ok: false, error: { code: 'ERR_OUTBOUND_001' } });
    const refresh = await app.request('POST', `/api/reporting/datasources/${created.body.id}/schema/refresh`, { token: user.accessToken, body: {} });
    expect([refresh.status, refresh.body.code]).toEqual([400, 'ERR_OUTBOUND_001']);
  });
});
