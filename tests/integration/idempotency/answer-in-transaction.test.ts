import { randomBytes, randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createTestDatasource } from '../../support/reporting';
import { buildTemplate, createTemplate } from '../../support/templates';

/**
 * docs/idempotency.md: on every creating route the stored answer is committed in the transaction
 * that writes what the request created, so a crash between the two cannot happen and a repeat never
 * creates twice. A deferred constraint trigger on each created table looks, at commit time and inside
 * the creating transaction, for a key of the project completed by that same transaction
 * (`completed_at = now()`, which is the transaction's start time). Answers stored after the route
 * answered are written by a later transaction and would show `false`.
 */
describe('Idempotency-Key answers are committed with what they created', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let runKey: string;
  const suffix = randomBytes(4).toString('hex');
  const table = `idem_rows_${suffix}`;
  const probed = ['flow_gates', 'templates', 'api_keys', 'webhook_subscriptions', 'reporting_runs', 'reporting_job_runs'];

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    alice = await signUp(app, { verified: true });
    runKey = (await createKey(app, alice.accessToken, { name: 'runner', permissions: { read_reports: true, run_reports: true } })).plainKey;
    const db = app.services.db;
    await db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, label text)`);
    await db.query(`INSERT INTO ${table} VALUES (1, 'one')`);
    await db.query(`CREATE TABLE idem_probe (tbl text NOT NULL, row_id text NOT NULL, answered_in_same_transaction boolean NOT NULL)`);
    await db.query(`
      CREATE FUNCTION idem_probe_fn() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO idem_probe VALUES (TG_TABLE_NAME, NEW.id::text, EXISTS (
          SELECT 1 FROM idempotency_keys WHERE project_id = NEW.project_id AND state = 'completed' AND completed_at = now()));
        RETURN NULL;
      END $$`);
    for (const t of probed) {
      await db.query(`CREATE CONSTRAINT TRIGGER idem_probe AFTER INSERT ON ${t} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION idem_probe_fn()`);
    }
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
  });

  const probe = async (tbl: string, rowId: string): Promise<boolean[]> =>
    (await app.services.db.query(`SELECT answered_in_same_transaction AS a FROM idem_probe WHERE tbl = $1 AND row_id = $2`, [tbl, rowId])).map((r: { a: boolean }) => r.a);

  /** Sends the request twice with one key: the second is the replay of the first, and one row was created. */
  async function twice(path: string, body: object, token = alice.accessToken) {
    const key = randomUUID();
    const send = () => app.request('POST', path, { token, headers: { 'Idempotency-Key': key }, body });
    const first = await send();
    expect([first.body.code ?? null, first.body.relatedInfo ?? null]).toEqual([null, null]);
    expect(first.status).toBeLessThan(300);
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    return first;
  }

  it('gates, templates (created and duplicated), API keys and webhooks', async () => {
    const gate = await twice('/api/flow/gates', { name: `Gate ${suffix}` });
    expect(gate.status).toBe(201);
    expect(await probe('flow_gates', gate.body.id)).toEqual([true]);

    const template = await twice('/api/templates', buildTemplate({ name: `Template ${suffix}` }));
    expect(await probe('templates', template.body.id)).toEqual([true]);
    const copy = await twice(`/api/templates/${template.body.id}/duplicate`, {});
    expect(copy.body.id).not.toBe(template.body.id);
    expect(await probe('templates', copy.body.id)).toEqual([true]);

    const apiKey = await twice('/api/api-keys', { name: `key ${suffix}` });
    expect(await probe('api_keys', apiKey.body.id ?? apiKey.body.data?.id)).toEqual([true]);

    const hook = await twice('/api/webhooks', { url: 'http://127.0.0.1:9/formwork', events: ['document.generated'] });
    expect(await probe('webhook_subscriptions', hook.body.id ?? hook.body.data?.id)).toEqual([true]);
  });

  it('report runs and report job runs', async () => {
    const as = (body: Record<string, unknown>) => ({ token: alice.accessToken, body });
    const datasource = await createTestDatasource(app, alice.accessToken, `Rows ${suffix}`);
    const q = await app.request('POST', '/api/reporting/queries', as({ name: `Q ${suffix}`, datasourceId: datasource.id, text: `SELECT id, label FROM ${table}` }));
    expect(q.status).toBe(201);
    expect((await app.request('POST', `/api/reporting/queries/${q.body.id}/publish`, as({}))).status).toBe(201);
    const report = await app.request('POST', '/api/reporting/reports', as({ name: `R ${suffix}`, datasets: [{ name: 'items', queryId: q.body.id }], outputs: [{ format: 'csv' }] }));
    expect(report.status).toBe(201);
    expect((await app.request('POST', `/api/reporting/reports/${report.body.id}/publish`, as({}))).status).toBe(201);

    const run = await twice(`/api/reporting/reports/${report.body.id}/runs`, {}, runKey);
    expect([run.status, run.body.status]).toEqual([201, 'queued']);
    expect(await probe('reporting_runs', run.body.runId)).toEqual([true]);

    const job = await app.request('POST', '/api/reporting/jobs', as({ name: `J ${suffix}`, items: [{ reportId: report.body.id }] }));
    expect(job.status).toBe(201);
    const jobRun = await twice(`/api/reporting/jobs/${job.body.id}/runs`, {}, runKey);
    expect([jobRun.status, jobRun.body.status]).toEqual([201, 'queued']);
    expect(await probe('reporting_job_runs', jobRun.body.jobRunId)).toEqual([true]);
  });

  it('without a key nothing is stored and the routes create as before', async () => {
    const res = await app.request('POST', '/api/flow/gates', { token: alice.accessToken, body: { name: `Unkeyed ${suffix}` } });
    expect(res.status).toBe(201);
    expect(await probe('flow_gates', res.body.id)).toEqual([false]);
  });

  it('a template created with a key whose name is taken is refused, creates nothing, and frees the key', async () => {
    const name = `Taken ${suffix}`;
    await createTemplate(app, alice.accessToken, { name });
    const key = randomUUID();
    const refused = await app.request('POST', '/api/templates', { token: alice.accessToken, headers: { 'Idempotency-Key': key }, body: buildTemplate({ name }) });
    expect(refused.status).toBe(409);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`, [key]);
    expect(n).toBe(0);
    const [{ t }] = await app.services.db.query(`SELECT count(*)::int AS t FROM templates WHERE name = $1`, [name]);
    expect(t).toBe(1);
  });
});
