import { startTestApp, type TestApp } from '../../support/app';
import { testDatabaseConfig } from '../../support/reporting';
import { signUp, type SignedUpUser } from '../../support/factories';

/**
 * A query's timeoutSeconds and maxRows, and a datasource's defaults, are bounded by this
 * deployment's REPORTING_QUERY_TIMEOUT_SECONDS and REPORTING_MAX_ROWS, not by built-in numbers.
 */
describe('reporting limits follow the settings', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let datasourceId: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', REPORTING_QUERY_TIMEOUT_SECONDS: '600', REPORTING_MAX_ROWS: '250000' } });
    alice = await signUp(app, { verified: true });
    const ds = await app.request('POST', '/api/reporting/datasources', {
      token: alice.accessToken,
      body: {
        name: 'Warehouse',
        kind: 'postgres',
        config: testDatabaseConfig(app),
        defaults: { timeoutSeconds: 500 },
      },
    });
    expect(ds.status).toBe(201);
    expect(ds.body.defaults).toEqual({ timeoutSeconds: 500, maxRows: 10_000 });
    datasourceId = ds.body.id;
  });
  afterAll(() => app?.close());

  const create = (extra: Record<string, unknown>) =>
    app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: { name: `Q ${Math.random()}`, datasourceId, text: 'SELECT 1 AS n', ...extra } });

  it('stores what the settings allow beyond the defaults (300 s, 100,000 rows) and takes the datasource defaults', async () => {
    const big = await create({ timeoutSeconds: 600, maxRows: 250_000 });
    expect([big.status, big.body.timeoutSeconds, big.body.maxRows]).toEqual([201, 600, 250_000]);
    const inherited = await create({});
    expect([inherited.status, inherited.body.timeoutSeconds, inherited.body.maxRows]).toEqual([201, 500, 10_000]);
  });

  it('refuses more than the settings, naming the field and the limit', async () => {
    const slow = await create({ timeoutSeconds: 601 });
    expect([slow.status, slow.body.code, slow.body.relatedInfo]).toEqual([400, 'ERR_VALID_001', { field: 'timeoutSeconds', limit: 600, errors: [{ path: 'timeoutSeconds', code: 'ERR_VALID_001', message: expect.stringContaining('REPORTING_QUERY_TIMEOUT_SECONDS') }] }]);
    const many = await create({ maxRows: 250_001 });
    expect([many.status, many.body.code, many.body.relatedInfo]).toEqual([400, 'ERR_VALID_001', { field: 'maxRows', limit: 250_000, errors: [{ path: 'maxRows', code: 'ERR_VALID_001', message: expect.stringContaining('REPORTING_MAX_ROWS') }] }]);
    const patch = await app.request('PATCH', `/api/reporting/datasources/${datasourceId}`, { token: alice.accessToken, body: { defaults: { maxRows: 300_000 } } });
    expect([patch.status, patch.body.code, patch.body.relatedInfo]).toEqual([400, 'ERR_VALID_001', { field: 'defaults.maxRows', limit: 250_000, errors: [{ path: 'defaults.maxRows', code: 'ERR_VALID_001', message: expect.stringContaining('REPORTING_MAX_ROWS') }] }]);
    // Past the settings' own bounds the body's shape is refused before any setting is read.
    const absurd = await create({ timeoutSeconds: 10 ** 9 });
    expect([absurd.status, absurd.body.code]).toEqual([400, 'ERR_VALID_001']);
  });
});
