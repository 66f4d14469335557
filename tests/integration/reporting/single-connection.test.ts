import { startTestApp, type TestApp } from '../../support/app';
import { testDatabaseConfig } from '../../support/reporting';
import { signUp, type SignedUpUser } from '../../support/factories';
import { buildTemplate, createTemplate, publish as publishTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * The embedded store of `npm start` (PGlite) serves one connection. A service that opens a second
 * connection inside a transaction waits for ever there (query publish did). One pooled connection
 * on the real PostgreSQL reproduces that: every reporting write path must finish with it.
 */
describe('reporting on a single database connection (the embedded store)', () => {
  let app: TestApp;
  let alice: SignedUpUser;

  beforeAll(async () => {
    app = await startTestApp({ env: { DATABASE_POOL_SIZE: '1', OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    alice = await signUp(app, { verified: true });
  });
  afterAll(() => app?.close());

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(method, path, { token: alice.accessToken, ...(body === undefined ? {} : { body }) });
    expect([method, path, res.status < 400 ? 'ok' : res.text]).toEqual([method, path, 'ok']);
    return res.body;
  };

  it('creates, publishes, restores and runs a query and a report to the end', async () => {
    const ds = await call('POST', '/api/reporting/datasources', {
      name: 'One connection',
      kind: 'postgres',
      config: testDatabaseConfig(app),
    });
    await call('POST', `/api/reporting/datasources/${ds.id}/test`, {});
    const q = await call('POST', '/api/reporting/queries', { name: 'Numbers', datasourceId: ds.id, text: "SELECT 'A' AS label, 1.5::numeric AS amount" });
    await call('POST', `/api/reporting/queries/${q.id}/publish`, {});
    await call('PATCH', `/api/reporting/queries/${q.id}`, { text: "SELECT 'B' AS label, 2.5::numeric AS amount" });
    await call('POST', `/api/reporting/queries/${q.id}/publish`, {});
    await call('POST', `/api/reporting/queries/${q.id}/versions/1/restore`, {});

    const t = await createTemplate(app, alice.accessToken, buildTemplate());
    await publishTemplate(app, alice.accessToken, t.id);
    const r = await call('POST', '/api/reporting/reports', {
      name: 'One connection',
      templateId: t.id,
      datasets: [{ name: 'items', queryId: q.id }],
      parameters: [{ name: 'customer', type: 'string', default: 'ACME' }],
      outputs: [{ format: 'pdf' }, { format: 'csv' }],
    });
    await call('POST', `/api/reporting/reports/${r.id}/publish`, {});
    await call('POST', `/api/reporting/reports/${r.id}/versions/1/restore`, {});
    const started = await call('POST', `/api/reporting/reports/${r.id}/runs`, {});
    const run = await waitFor(
      async () => {
        const res = await app.request('GET', `/api/reporting/runs/${started.runId}`, { token: alice.accessToken });
        return ['completed', 'failed'].includes(res.body.status) ? res.body : undefined;
      },
      { timeoutMs: 60_000, what: 'the run to end' },
    );
    expect(run).toMatchObject({ status: 'completed', datasets: [{ name: 'items', rowCount: 1 }] });
    expect(run.outputs.map((o: any) => o.format).sort()).toEqual(['csv', 'pdf']);
  });
});
