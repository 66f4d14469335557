import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { addTeamProject } from '../../support/api-keys';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { createTestDatasource } from '../../support/reporting';
import { inTeam } from '../../support/teams';
import { makeZip } from '../../support/zip';

/**
 * Model imports under /api/reporting/imports (docs/reporting.md "Imports"):
 * Metabase, Redash and JRXML files uploaded through the API become draft query objects made by the
 * query service; dry runs, duplicate handling, datasource maps, tenant scoping and the limits.
 */
describe('reporting imports', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let carol: SignedUpUser;
  let teamId: string;
  let ds: { id: string; shortId: string };
  let other: { id: string; shortId: string };

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, bob, carol] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true }), signUp(app, { verified: true })]);
    teamId = await addTeamProject(app.services.db, alice.id, [{ userId: carol.id, role: 'viewer' }]);
    ds = await createTestDatasource(app, alice.accessToken, `Warehouse ${randomBytes(3).toString('hex')}`);
    other = await createTestDatasource(app, bob.accessToken, `Bob's ${randomBytes(3).toString('hex')}`);
  });

  afterAll(async () => {
    await app?.close();
  });

  const fixture = (name: string) => readFileSync(join(__dirname, '../../fixtures/reporting-imports', name));

  async function upload(file: Buffer | string | null, fields: Record<string, string> = {}, opts: { token?: string; headers?: Record<string, string>; filename?: string } = {}) {
    const form = new FormData();
    if (file !== null) form.append('file', new Blob([typeof file === 'string' ? file : new Uint8Array(file)]), opts.filename ?? 'model.txt');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${app.url}/api/reporting/imports`, { method: 'POST', headers: { authorization: `Bearer ${opts.token ?? alice.accessToken}`, ...opts.headers }, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  const getQuery = (id: string, token = alice.accessToken) => app.request('GET', `/api/reporting/queries/${id}`, { token });
  /** A copy of a Redash query with a name of its own, so that tests do not meet each other's names. */
  const redash = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ...JSON.parse(fixture('redash-list.json').toString()).results[0], name, ...extra });

  it('imports a Metabase card through datasourceMap: a draft query with its parameters, recorded and listed', async () => {
    const res = await upload(fixture('metabase-legacy.yaml'), { datasourceMap: JSON.stringify({ 'Sample Database': ds.shortId }) }, { filename: 'orders.yaml' });
    expect([res.status, res.body.relatedInfo ?? null]).toEqual([201, null]);
    expect(res.body).toMatchObject({ format: 'metabase', filename: 'orders.yaml', status: 'completed', dryRun: false });
    expect(res.body.id).toEqual(expect.any(String));
    expect(res.body.shortId).toMatch(/^rimp_[A-Za-z0-9]{16}$/);
    expect(res.body.items).toEqual([{ source: { type: 'card', name: 'Orders by status', ref: '8pX3kXq1A2b3C4d5E6f7G' }, action: 'created', queryId: expect.any(String), warnings: [] }]);
    const q = await getQuery(res.body.items[0].queryId);
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ name: 'Orders by status', datasourceId: ds.id, isPublished: false, language: 'sql' });
    expect(q.body.parameters).toEqual([
      { name: 'status', type: 'string', label: 'Status', required: true, default: 'open' },
      { name: 'since', type: 'date', label: 'Since' },
    ]);
    expect(q.body.text).toContain('[[AND created_at >= {{since}}]]');

    const one = await app.request('GET', `/api/reporting/imports/${res.body.shortId}`, { token: alice.accessToken });
    expect([one.status, one.body.id, one.body.items]).toEqual([200, res.body.id, res.body.items]);
    const list = await app.request('GET', '/api/reporting/imports?limit=100', { token: alice.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.data.find((i: any) => i.id === res.body.id)).toMatchObject({ format: 'metabase', itemCount: 1 });
    expect(list.body.meta).toMatchObject({ page: 1, limit: 100 });
  });

  it('a dry run answers 200 with the actions it would take and creates no query', async () => {
    const res = await upload(fixture('redash-single.json'), { datasourceId: ds.id, dryRun: 'true' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: 'redash', dryRun: true, status: 'completed' });
    expect(res.body.items).toEqual([{ source: { type: 'query', name: 'Signups per day', ref: '101' }, action: 'created', suggestedSchedule: { cron: '30 6 * * *', timezone: 'UTC' }, warnings: [] }]);
    const found = await app.request('GET', '/api/reporting/queries?search=Signups%20per%20day', { token: alice.accessToken });
    expect(found.body.data).toEqual([]);
    // Made for real, it is there with both ends of its date range.
    const real = await upload(fixture('redash-single.json'), { datasourceId: ds.id });
    expect([real.status, real.body.items[0].action]).toEqual([201, 'created']);
    expect((await getQuery(real.body.items[0].queryId)).body.parameters.map((p: any) => p.name)).toEqual(['period_start', 'period_end', 'Plan']);
  });

  it('handles duplicates: rename (default), skip, overwrite, and a dry run says which', async () => {
    const name = `Plans ${randomBytes(3).toString('hex')}`;
    const first = await upload(redash(name), { datasourceId: ds.id });
    expect([first.status, first.body.items[0].action]).toEqual([201, 'created']);
    const firstId = first.body.items[0].queryId;

    const renamed = await upload(redash(name), { datasourceId: ds.id });
    expect([renamed.status, renamed.body.status, renamed.body.items[0].action, renamed.body.items[0].warnings[0].code]).toEqual([201, 'completed_with_warnings', 'created', 'RENAMED']);
    expect((await getQuery(renamed.body.items[0].queryId)).body.name).toBe(`${name} (imported)`);

    const skipped = await upload(redash(name), { datasourceId: ds.id, duplicateHandling: 'skip' });
    expect([skipped.status, skipped.body.items[0].action, skipped.body.items[0].queryId]).toEqual([201, 'skipped', firstId]);

    const dry = await upload(redash(name, { query: 'SELECT 2 AS two' }), { datasourceId: ds.id, duplicateHandling: 'overwrite', dryRun: 'true' });
    expect([dry.status, dry.body.items[0].action, dry.body.items[0].queryId]).toEqual([200, 'overwritten', firstId]);
    expect((await getQuery(firstId)).body.text).toBe('SELECT DISTINCT plan FROM users');

    const over = await upload(redash(name, { query: 'SELECT 2 AS two' }), { datasourceId: ds.id, duplicateHandling: 'overwrite' });
    expect([over.status, over.body.items[0].action, over.body.items[0].queryId]).toEqual([201, 'overwritten', firstId]);
    expect((await getQuery(firstId)).body.text).toBe('SELECT 2 AS two');
  });

  it('imports JRXML: expected columns from the fields, the layout flagged; $P!{} is never converted', async () => {
    const res = await upload(fixture('jr6.jrxml'), { datasourceId: ds.id });
    expect([res.status, res.body.format, res.body.status]).toEqual([201, 'jrxml', 'completed_with_warnings']);
    expect(res.body.items[0]).toMatchObject({ action: 'created', source: { type: 'jrxml', name: 'Invoices' } });
    expect(res.body.items[0].warnings.map((w: any) => w.code)).toEqual(['X_CLAUSE', 'LAYOUT_NOT_CONVERTED']);
    expect(res.body.items[0].templateId).toEqual(expect.any(String));
    const q = await getQuery(res.body.items[0].queryId);
    expect(q.body.expectedColumns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'customer_id', type: 'integer' },
      { name: 'total', type: 'number' },
      { name: 'issued_on', type: 'date' },
    ]);
    expect(q.body.parameters.find((p: any) => p.name === 'STATUSES')).toEqual({ name: 'STATUSES', type: 'string', multiple: true, required: true });
    // A draft template: the report's name as heading, a table of the fields bound to `rows`.
    const t = await app.request('GET', `/api/templates/${res.body.items[0].templateId}`, { token: alice.accessToken });
    expect([t.status, t.body.name, t.body.isPublished ?? false]).toEqual([200, expect.stringMatching(/^Invoices/), false]);
    expect(JSON.stringify(t.body)).toContain('"dataSource":"rows"');
    // A draft report binding the query (every parameter mapped to a report parameter of its name) to that template.
    const r = await app.request('GET', `/api/reporting/reports/${res.body.items[0].reportId}`, { token: alice.accessToken });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: t.body.name, isPublished: false, templateId: res.body.items[0].templateId, outputs: [{ format: 'pdf' }] });
    expect(r.body.datasets).toEqual([expect.objectContaining({ name: 'rows', queryId: res.body.items[0].queryId, queryVersion: 'latest', shape: 'rows', bindTo: 'rows' })]);
    expect(r.body.datasets[0].parameters).toEqual(Object.fromEntries(q.body.parameters.map((p: any) => [p.name, `{{${p.name}}}`])));
    expect(r.body.parameters.map((p: any) => p.name)).toEqual(q.body.parameters.map((p: any) => p.name));
    const again = await upload(fixture('jr6.jrxml'), { datasourceId: ds.id });
    expect([again.status, again.body.items[0].action, again.body.items[0].templateId]).toEqual([201, 'created', expect.any(String)]);
    expect((await app.request('GET', `/api/templates/${again.body.items[0].templateId}`, { token: alice.accessToken })).body.name).toBe('Invoices (imported)');
    const dry = await upload(fixture('jr7.jrxml'), { datasourceId: ds.id, dryRun: 'true' });
    expect([dry.status, dry.body.items[0].action, dry.body.items[0].templateId, dry.body.items[0].warnings.map((w: any) => w.code)]).toEqual([200, 'created', undefined, ['LAYOUT_NOT_CONVERTED']]);

    const splice = await upload(fixture('jr-splice.jrxml'), { datasourceId: ds.id });
    expect([splice.status, splice.body.status, splice.body.items[0].action, splice.body.items[0].queryId]).toEqual([201, 'completed_with_warnings', 'needs_attention', undefined]);
    expect(splice.body.items[0].warnings[0].code).toBe('TEXT_SPLICING');
  });

  it('an item the query checks refuse, or with no datasource, needs attention with the reason', async () => {
    const refused = await upload(redash(`Two ${randomBytes(3).toString('hex')}`, { query: 'SELECT 1; DELETE FROM users' }), { datasourceId: ds.id });
    expect([refused.status, refused.body.status, refused.body.items[0].action]).toEqual([201, 'completed_with_warnings', 'needs_attention']);
    expect(refused.body.items[0].warnings).toEqual([expect.objectContaining({ code: 'QUERY_REFUSED', message: expect.stringContaining('text') })]);

    const orphan = await upload(fixture('metabase-stages.json'));
    expect([orphan.status, orphan.body.items[0].action, orphan.body.items[0].warnings[0]]).toEqual([201, 'needs_attention', expect.objectContaining({ code: 'NO_DATASOURCE', message: expect.stringContaining("datasourceMap entry for '2'") })]);

    const mixed = await upload(fixture('metabase-attention.json'), { datasourceId: ds.id });
    expect(mixed.body.items.map((i: any) => i.action)).toEqual(['needs_attention', 'unsupported']);
  });

  it('is scoped to the project: another project cannot read an import or map to its datasource', async () => {
    const mine = await upload(redash(`Scoped ${randomBytes(3).toString('hex')}`), { datasourceId: ds.id });
    expect(mine.status).toBe(201);
    for (const ref of [mine.body.id, mine.body.shortId]) {
      const res = await app.request('GET', `/api/reporting/imports/${ref}`, { token: bob.accessToken });
      expect([res.status, res.body.code]).toEqual([404, 'ERR_IMP_005']);
    }
    const list = await app.request('GET', '/api/reporting/imports', { token: bob.accessToken });
    expect(list.body.data).toEqual([]);
    const foreign = await upload(redash('Foreign'), { datasourceMap: JSON.stringify({ '1': other.id }) });
    expect([foreign.status, foreign.body.code, foreign.body.relatedInfo?.field]).toEqual([404, 'ERR_DS_001', 'datasourceMap.1']);
    const foreignDefault = await upload(redash('Foreign'), { datasourceId: other.id });
    expect([foreignDefault.status, foreignDefault.body.code]).toEqual([404, 'ERR_DS_001']);
    // A viewer of a team reads its imports but uploads nothing.
    const viewer = await upload(redash('Viewer'), {}, { token: carol.accessToken, headers: inTeam(teamId) });
    expect([viewer.status, viewer.body.code]).toEqual([403, expect.stringMatching(/^ERR_AUTH_/)]);
    const viewerList = await app.request('GET', '/api/reporting/imports', { token: carol.accessToken, headers: inTeam(teamId) });
    expect(viewerList.status).toBe(200);
  });

  it('reads a large YAML file in a process of its own: the loop serving HTTP is never held for long; past the element cap it is refused unparsed', async () => {
    // A card with 12,000 result_metadata entries (as Metabase exports keep them): a second of YAML parsing.
    const card = (entries: number) => {
      const meta = Array.from({ length: entries }, (_, i) => `  - name: column_${i}\n    display_name: Column ${i}\n    base_type: type/Text\n`).join('');
      return `name: Wide ${randomBytes(3).toString('hex')}\ndataset_query:\n  type: native\n  database: 1\n  native:\n    query: SELECT 1 AS one\nresult_metadata:\n${meta}`;
    };
    const yaml = card(12_000);
    expect(yaml.length).toBeGreaterThan(800_000);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const res = await upload(yaml, { datasourceId: ds.id, dryRun: 'true' });
    const requestMs = performance.now() - started;
    delay.disable();
    expect([res.status, res.body.items?.[0]?.action]).toEqual([200, 'created']);
    // Parsed on the loop, the request would have held it for nearly its whole duration (a second of YAML);
    // in the worker process, the longest stall (the upload itself, garbage collection) stays well under half of it.
    expect(delay.max / 1e6).toBeLessThan(requestMs / 2);
    // 70,000 entries (210,000 lines, 5 MB) would need more than the reading process's 128 MB heap: refused by the count before parsing.
    const wide = await upload(card(70_000), { datasourceId: ds.id, dryRun: 'true' });
    expect([wide.status, wide.body.code, wide.body.relatedInfo.errors]).toEqual([400, 'ERR_IMP_003', [{ path: '$', message: 'more than 100000 elements' }]]);
  });

  it('answers the limits and refusals: no file, unknown format, invalid file, too large, zip caps, bad fields', async () => {
    const none = await upload(null, { datasourceId: ds.id });
    expect([none.status, none.body.code]).toEqual([400, 'ERR_IMP_001']);
    const unknown = await upload('name,total\na,1\n', { datasourceId: ds.id });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'ERR_IMP_002']);
    const invalid = await upload('<jasperReport name="x"><queryString>SELECT 1</jasperReport>', { datasourceId: ds.id });
    expect([invalid.status, invalid.body.code, invalid.body.relatedInfo.errors.length]).toEqual([400, 'ERR_IMP_003', 1]);
    const bomb = await upload(fixture('xml-bomb.jrxml'), { datasourceId: ds.id });
    expect([bomb.status, bomb.body.code]).toEqual([400, 'ERR_IMP_003']);

    const big = await upload(Buffer.alloc(10 * 1024 * 1024 + 1, 0x20), { datasourceId: ds.id });
    expect([big.status, big.body.code]).toEqual([413, 'ERR_IMP_004']);
    const zipBomb = await upload(makeZip([{ name: 'card.json', data: Buffer.alloc(60 * 1024 * 1024) }]), { datasourceId: ds.id });
    expect([zipBomb.status, zipBomb.body.code]).toEqual([413, 'ERR_IMP_004']);
    const manyEntries = await upload(makeZip(Array.from({ length: 501 }, (_, i) => ({ name: `c${i}.json`, data: '{}' }))), { datasourceId: ds.id });
    expect([manyEntries.status, manyEntries.body.code]).toEqual([413, 'ERR_IMP_004']);

    const zipped = await upload(makeZip([{ name: 'q.json', data: redash(`Zipped ${randomBytes(3).toString('hex')}`) }]), { datasourceId: ds.id });
    expect([zipped.status, zipped.body.format, zipped.body.items[0].action]).toEqual([201, 'redash', 'created']);

    const badMap = await upload(redash('x'), { datasourceMap: '{not json' });
    expect([badMap.status, badMap.body.code, badMap.body.relatedInfo?.field]).toEqual([400, 'ERR_VALID_001', 'datasourceMap']);
    const badHandling = await upload(redash('x'), { duplicateHandling: 'merge' });
    expect([badHandling.status, badHandling.body.code]).toEqual([400, 'ERR_VALID_001']);
    const stray = await upload(redash('x'), { surprise: '1' });
    expect([stray.status, stray.body.code]).toEqual([400, 'ERR_VALID_001']);
    const wrongFormat = await upload(fixture('jr7.jrxml'), { format: 'metabase', datasourceId: ds.id });
    expect([wrongFormat.status, wrongFormat.body.code]).toEqual([400, 'ERR_IMP_003']);
    const missing = await app.request('GET', '/api/reporting/imports/rimp_doesnotexist0000', { token: alice.accessToken });
    expect([missing.status, missing.body.code]).toEqual([404, 'ERR_IMP_005']);
  });
});
