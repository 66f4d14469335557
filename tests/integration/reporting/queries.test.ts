import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { testDatabaseConfig } from '../../support/reporting';
import { addTeamProject, createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { inTeam } from '../../support/teams';

/** Query objects under /api/reporting/queries (docs/reporting.md "Query objects") against the machine's PostgreSQL. */
describe('reporting query objects', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let carol: SignedUpUser;
  let teamId: string;
  let datasource: { id: string; shortId: string };
  let teamDatasource: { id: string };
  const suffix = randomBytes(4).toString('hex');
  const table = `qry_probe_${suffix}`;

  const dsBody = (overrides: Record<string, unknown> = {}) => ({
    name: `Warehouse ${randomBytes(3).toString('hex')}`,
    kind: 'postgres',
    config: testDatabaseConfig(app),
    secrets: { password: 'pg-secret' },
    ...overrides,
  });

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, bob, carol] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true }), signUp(app, { verified: true })]);
    teamId = await addTeamProject(app.services.db, alice.id, [
      { userId: bob.id, role: 'member' },
      { userId: carol.id, role: 'viewer' },
    ]);
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, name text, amount numeric(10,2), sold_on date)`);
    await app.services.db.query(`INSERT INTO ${table} VALUES (1, 'apple', 1.50, '2026-01-02'), (2, 'pear', 2.25, '2026-01-03'), (3, 'plum', 3.00, '2026-01-04')`);
    const ds = await app.request('POST', '/api/reporting/datasources', { token: alice.accessToken, body: dsBody({ defaults: { timeoutSeconds: 30, maxRows: 5000 } }) });
    expect(ds.status).toBe(201);
    datasource = ds.body;
    const teamDs = await app.request('POST', '/api/reporting/datasources', { token: alice.accessToken, headers: inTeam(teamId), body: dsBody() });
    expect(teamDs.status).toBe(201);
    teamDatasource = teamDs.body;
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
  });

  const body = (overrides: Record<string, unknown> = {}) => ({
    name: `Sales ${randomBytes(3).toString('hex')}`,
    datasourceId: datasource.id,
    text: `SELECT id, name, amount FROM ${table} WHERE amount >= {{ minAmount }} ORDER BY id`,
    parameters: [{ name: 'minAmount', type: 'number', default: 0 }],
    ...overrides,
  });

  async function create(overrides: Record<string, unknown> = {}, token = alice.accessToken) {
    const res = await app.request('POST', '/api/reporting/queries', { token, body: body(overrides) });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('creates a draft with the datasource defaults and reads it by id, short id and slug', async () => {
    const q = await create({ name: 'Daily Sales Total' });
    expect(q).toMatchObject({
      shortId: expect.stringMatching(/^qry_[A-Za-z0-9]{16}$/),
      slug: 'daily-sales-total',
      name: 'Daily Sales Total',
      datasourceId: datasource.id,
      language: 'sql',
      parameters: [{ name: 'minAmount', type: 'number', default: 0 }],
      expectedColumns: null,
      maxRows: 5000,
      timeoutSeconds: 30,
      onRowLimit: 'fail',
      isPublished: false,
      latestVersion: 0,
      publishedAt: null,
    });
    for (const ref of [q.id, q.shortId, q.slug]) {
      const res = await app.request('GET', `/api/reporting/queries/${ref}`, { token: alice.accessToken });
      expect([ref, res.status, res.body.id]).toEqual([ref, 200, q.id]);
    }
    // The slug never changes with the name.
    const renamed = await app.request('PATCH', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { name: 'Weekly sales', maxRows: 10, onRowLimit: 'truncate' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Weekly sales', slug: 'daily-sales-total', maxRows: 10, onRowLimit: 'truncate' });
  });

  it('lists without the text, searches and filters by datasource, and deletes', async () => {
    const q = await create({ name: `Listed ${suffix}` });
    const list = await app.request('GET', `/api/reporting/queries?search=listed%20${suffix}&datasourceId=${datasource.shortId}`, { token: alice.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.data.map((d: any) => d.id)).toEqual([q.id]);
    expect(list.body.data[0].text).toBeUndefined();
    expect(list.body.meta).toEqual({ total: 1, page: 1, limit: 20, totalPages: 1, hasNextPage: false, hasPreviousPage: false });

    const del = await app.request('DELETE', `/api/reporting/queries/${q.shortId}`, { token: alice.accessToken });
    expect(del.status).toBe(204);
    const gone = await app.request('GET', `/api/reporting/queries/${q.id}`, { token: alice.accessToken });
    expect([gone.status, gone.body.code]).toEqual([404, 'ERR_QRY_001']);
    // The name is free again.
    await create({ name: `Listed ${suffix}` });
  });

  it('keeps a datasource its query objects use: 409 ERR_DS_004 until they are deleted', async () => {
    const ds = await app.request('POST', '/api/reporting/datasources', { token: alice.accessToken, body: dsBody() });
    expect(ds.status).toBe(201);
    const q = await create({ datasourceId: ds.body.id });
    const refused = await app.request('DELETE', `/api/reporting/datasources/${ds.body.id}`, { token: alice.accessToken });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'ERR_DS_004', relatedInfo: { queries: 1 } });
    expect((await app.request('GET', `/api/reporting/datasources/${ds.body.id}`, { token: alice.accessToken })).status).toBe(200);

    expect((await app.request('DELETE', `/api/reporting/queries/${q.id}`, { token: alice.accessToken })).status).toBe(204);
    expect((await app.request('DELETE', `/api/reporting/datasources/${ds.body.id}`, { token: alice.accessToken })).status).toBe(204);
  });

  it('refuses a second query with the same name in any case (409 ERR_QRY_013)', async () => {
    await create({ name: `Dup ${suffix}` });
    const res = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: body({ name: `DUP ${suffix}` }) });
    expect([res.status, res.body.code]).toEqual([409, 'ERR_QRY_013']);
  });

  it('refuses bad text and parameters at save with 400 ERR_QRY_002 naming every problem', async () => {
    const res = await app.request('POST', '/api/reporting/queries', {
      token: alice.accessToken,
      body: body({ text: `SELECT * FROM ${table} WHERE name = '{{ who }}'; DELETE FROM ${table}`, parameters: [{ name: '1bad', type: 'string' }] }),
    });
    expect([res.status, res.body.code]).toEqual([400, 'ERR_QRY_002']);
    const codes = res.body.relatedInfo.errors.map((e: any) => e.code);
    expect(codes).toEqual(expect.arrayContaining(['INVALID_PARAMETER', 'PLACEHOLDER_IN_LITERAL', 'MULTIPLE_STATEMENTS']));
    expect(res.body.relatedInfo.errors.find((e: any) => e.code === 'INVALID_PARAMETER').path).toBe('parameters[0].name');

    const insert = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: body({ text: `INSERT INTO ${table} VALUES (9, 'x', 1, now())`, parameters: [] }) });
    expect([insert.status, insert.body.code]).toEqual([400, 'ERR_QRY_002']);
    expect(insert.body.relatedInfo.errors.map((e: any) => e.code)).toContain('NOT_A_READ');

    // An http query needs an http_json datasource.
    const http = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: body({ language: 'http' }) });
    expect([http.status, http.body.code]).toEqual([400, 'ERR_QRY_002']);
    expect(http.body.relatedInfo.errors[0]).toMatchObject({ path: 'language', code: 'LANGUAGE_MISMATCH' });

    const limits = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: body({ timeoutSeconds: 301, maxRows: 100_001 }) });
    expect([limits.status, limits.body.code]).toEqual([400, 'ERR_VALID_001']);

    const unknownDs = await app.request('POST', '/api/reporting/queries', { token: alice.accessToken, body: body({ datasourceId: 'ds_0000000000000000' }) });
    expect([unknownDs.status, unknownDs.body.code]).toEqual([404, 'ERR_DS_001']);

    // A patch is checked as the whole resulting draft.
    const q = await create();
    const patch = await app.request('PATCH', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { parameters: [] } });
    expect([patch.status, patch.body.code]).toEqual([400, 'ERR_QRY_002']);
    expect(patch.body.relatedInfo.errors.map((e: any) => e.code)).toContain('UNKNOWN_PARAMETER');
  });

  it('validates without saving', async () => {
    const ok = await app.request('POST', '/api/reporting/queries/validate', { token: alice.accessToken, body: { datasourceId: datasource.id, text: 'SELECT {{ x }}', parameters: [{ name: 'x', type: 'integer' }] } });
    expect(ok.status).toBe(200);
    // `compiled`: the statement as a run without given values sends it (x has no default: bound as NULL).
    expect(ok.body).toEqual({ valid: true, errors: [], warnings: [], placeholders: ['x'], compiled: { text: 'SELECT $1', values: [null] } });
    const bad = await app.request('POST', '/api/reporting/queries/validate', { token: alice.accessToken, body: { datasourceId: datasource.id, text: 'SELECT {{ y }}' } });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors.map((e: any) => e.code)).toEqual(['UNKNOWN_PARAMETER']);
    expect(bad.body.placeholders).toEqual(['y']);
    expect(bad.body.compiled).toBeNull();
  });

  it('answers the compiled statement in the dialect: numbered markers for postgres, one ? per use for mysql, lists expanded, empty optional clauses dropped', async () => {
    const validate = (b: Record<string, unknown>) => app.request('POST', '/api/reporting/queries/validate', { token: alice.accessToken, body: b });
    const parameters = [
      { name: 'a', type: 'string', default: 'x' },
      { name: 'ids', type: 'integer', multiple: true, default: [1, 2, 3] },
      { name: 'status', type: 'string' },
    ];
    const text = 'SELECT * FROM t WHERE a = {{ a }} AND id IN ({{ids}}) [[ AND status = {{status}} ]] OR a = {{a}}';
    const pg = await validate({ kind: 'postgres', text, parameters });
    expect(pg.body.compiled).toEqual({ text: 'SELECT * FROM t WHERE a = $1 AND id IN ($2, $3, $4)  OR a = $1', values: ['x', 1, 2, 3] });
    const my = await validate({ kind: 'mysql', text, parameters });
    expect(my.body.compiled).toEqual({ text: 'SELECT * FROM t WHERE a = ? AND id IN (?, ?, ?)  OR a = ?', values: ['x', 1, 2, 3, 'x'] });
    // A required parameter without a default: no statement can be sent without a value.
    const required = await validate({ kind: 'postgres', text: 'SELECT {{ r }}', parameters: [{ name: 'r', type: 'string', required: true }] });
    expect([required.body.valid, required.body.compiled]).toEqual([true, null]);
  });

  it('validates against a datasource kind before one exists, with warnings and the placeholders', async () => {
    const validate = (b: Record<string, unknown>) => app.request('POST', '/api/reporting/queries/validate', { token: alice.accessToken, body: b });
    const byKind = await validate({ kind: 'mysql', text: 'SELECT * FROM t WHERE a = {{ a }} AND b > {{b}} OR a = {{ a }}', parameters: [{ name: 'a', type: 'string' }, { name: 'b', type: 'integer' }, { name: 'unused', type: 'string' }] });
    expect(byKind.status).toBe(200);
    expect(byKind.body).toEqual({
      valid: true,
      errors: [],
      warnings: [{ path: 'parameters[2]', code: 'UNUSED_PARAMETER', message: expect.stringContaining("'unused'") }],
      placeholders: ['a', 'b'],
      compiled: { text: 'SELECT * FROM t WHERE a = ? AND b > ? OR a = ?', values: [null, null, null] },
    });
    // The kind's dialect reads the text: backticks quote identifiers in MySQL, so the placeholder inside one is refused.
    const inIdentifier = await validate({ kind: 'mysql', text: 'SELECT `{{ a }}` FROM t', parameters: [{ name: 'a', type: 'string' }] });
    expect([inIdentifier.body.valid, inIdentifier.body.errors.map((e: any) => e.code)]).toEqual([false, ['PLACEHOLDER_IN_LITERAL']]);
    // The language defaults to the kind's: a csv kind's table query has no text.
    const table = await validate({ kind: 'csv' });
    expect(table.body).toEqual({ valid: true, errors: [], warnings: [], placeholders: [], compiled: null });
    const http = await validate({ kind: 'http_json', request: { method: 'GET', path: '/orders/{{ id }}', query: { since: '{{since}}' } }, parameters: [{ name: 'id', type: 'integer' }, { name: 'since', type: 'date' }] });
    expect(http.body).toEqual({ valid: true, errors: [], warnings: [], placeholders: ['id', 'since'], compiled: null });
    for (const wrong of [{ text: 'SELECT 1' }, { kind: 'postgres', datasourceId: datasource.id, text: 'SELECT 1' }, { kind: 'oracle', text: 'SELECT 1' }]) {
      const res = await validate(wrong);
      expect([res.status, res.body.code]).toEqual([400, 'ERR_VALID_001']);
    }
  });

  it('PUT replaces the draft: fields left out take the values of a new query', async () => {
    const q = await create({ description: 'old', folderId: 'finance', expectedColumns: [{ name: 'id' }], onRowLimit: 'truncate', maxRows: 7 });
    const text = `SELECT id FROM ${table}`;
    const put = await app.request('PUT', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { name: 'Replaced', datasourceId: datasource.shortId, text } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id: q.id, slug: q.slug, name: 'Replaced', description: null, folderId: null, datasourceId: datasource.id, language: 'sql', text, parameters: [], expectedColumns: null, maxRows: 5000, timeoutSeconds: 30, onRowLimit: 'fail' });
    expect((await app.request('GET', `/api/reporting/queries/${q.id}`, { token: alice.accessToken })).body).toMatchObject({ name: 'Replaced', text, parameters: [] });
    // A create body is required: name and datasourceId are not optional here.
    const partial = await app.request('PUT', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { text } });
    expect([partial.status, partial.body.code, partial.body.relatedInfo?.field]).toEqual([400, expect.stringMatching(/^ERR_VALID_00[15]$/), 'name']);
    const badText = await app.request('PUT', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { name: 'Replaced', datasourceId: datasource.id, text: 'SELECT {{ nope }}' } });
    expect([badText.status, badText.body.code]).toEqual([400, 'ERR_QRY_002']);
  });

  it('previews a published version with `version`, the draft by default', async () => {
    const q = await create({ text: `SELECT id FROM ${table} WHERE amount >= {{ minAmount }} ORDER BY id` });
    expect((await app.request('POST', `/api/reporting/queries/${q.id}/publish`, { token: alice.accessToken, body: {} })).status).toBe(201);
    await app.request('PATCH', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { text: `SELECT name FROM ${table} WHERE amount >= {{ minAmount }} ORDER BY id` } });
    const preview = (b: Record<string, unknown>) => app.request('POST', `/api/reporting/queries/${q.id}/preview`, { token: alice.accessToken, body: { parameters: { minAmount: 3 }, ...b } });
    expect((await preview({})).body.rows).toEqual([{ name: 'plum' }]);
    expect((await preview({ version: 'draft' })).body.rows).toEqual([{ name: 'plum' }]);
    const v1 = await preview({ version: 1 });
    expect([v1.status, v1.body.rows]).toEqual([200, [{ id: 3 }]]);
    const missing = await preview({ version: 2 });
    expect([missing.status, missing.body.code]).toEqual([404, 'ERR_QRY_004']);
    const bad = await preview({ version: 'latest' });
    expect([bad.status, bad.body.code]).toEqual([400, 'ERR_VALID_001']);
  });

  it('publishes numbered versions, refuses an unchanged draft, and restores as the next version', async () => {
    const q = await create();
    const v1 = await app.request('POST', `/api/reporting/queries/${q.id}/publish`, { token: alice.accessToken, body: { releaseNotes: 'first' } });
    expect(v1.status).toBe(201);
    expect(v1.body).toMatchObject({ queryId: q.id, version: 1 });

    const again = await app.request('POST', `/api/reporting/queries/${q.id}/publish`, { token: alice.accessToken, body: {} });
    expect([again.status, again.body.code, again.body.relatedInfo.latestVersion]).toEqual([409, 'ERR_QRY_003', 1]);

    const newText = `SELECT id, name FROM ${table} WHERE amount >= {{ minAmount }}`;
    await app.request('PATCH', `/api/reporting/queries/${q.id}`, { token: alice.accessToken, body: { text: newText, timeoutSeconds: 10 } });
    const v2 = await app.request('POST', `/api/reporting/queries/${q.id}/publish`, { token: alice.accessToken, body: {} });
    expect(v2.body.version).toBe(2);

    const got = await app.request('GET', `/api/reporting/queries/${q.slug}`, { token: alice.accessToken });
    expect(got.body).toMatchObject({ isPublished: true, latestVersion: 2, publishedAt: expect.any(String), text: newText });

    const versions = await app.request('GET', `/api/reporting/queries/${q.id}/versions`, { token: alice.accessToken });
    expect(versions.body.map((v: any) => [v.version, v.releaseNotes])).toEqual([
      [2, null],
      [1, 'first'],
    ]);
    expect(versions.body[0].publishedBy).toEqual(expect.any(String));

    const one = await app.request('GET', `/api/reporting/queries/${q.id}/versions/1`, { token: alice.accessToken });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ version: 1, queryId: q.id, datasourceId: datasource.id, definition: { language: 'sql', text: q.text, timeoutSeconds: 30, onRowLimit: 'fail' } });
    for (const v of ['3', 'latest', '0']) {
      const missing = await app.request('GET', `/api/reporting/queries/${q.id}/versions/${v}`, { token: alice.accessToken });
      expect([v, missing.status, missing.body.code]).toEqual([v, 404, 'ERR_QRY_004']);
    }

    const restored = await app.request('POST', `/api/reporting/queries/${q.id}/versions/1/restore`, { token: alice.accessToken, body: {} });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ success: true, newVersion: 3 });
    const draft = await app.request('GET', `/api/reporting/queries/${q.id}`, { token: alice.accessToken });
    expect(draft.body).toMatchObject({ text: q.text, timeoutSeconds: 30, latestVersion: 3 });
    const v3 = await app.request('GET', `/api/reporting/queries/${q.id}/versions/3`, { token: alice.accessToken });
    expect(v3.body).toMatchObject({ releaseNotes: 'Restored from version 1', definition: one.body.definition });
    // The restored draft equals version 3: nothing to publish.
    const unchanged = await app.request('POST', `/api/reporting/queries/${q.id}/publish`, { token: alice.accessToken, body: {} });
    expect(unchanged.body.code).toBe('ERR_QRY_003');
  });

  it('previews typed rows with bound parameters; an injection attempt stays a value', async () => {
    const q = await create({
      text: `SELECT id, name, amount, sold_on FROM ${table} WHERE amount >= {{ minAmount }} [[ AND name = {{ who }} ]] ORDER BY id`,
      parameters: [
        { name: 'minAmount', type: 'number', default: 0 },
        { name: 'who', type: 'string' },
      ],
    });
    const res = await app.request('POST', `/api/reporting/queries/${q.id}/preview`, { token: alice.accessToken, body: { parameters: { minAmount: 2 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      columns: [
        { name: 'id', type: expect.any(String) },
        { name: 'name', type: expect.any(String) },
        { name: 'amount', type: expect.any(String) },
        { name: 'sold_on', type: expect.any(String) },
      ],
      rows: [
        { id: 2, name: 'pear', amount: '2.25' },
        { id: 3, name: 'plum', amount: '3.00' },
      ],
      rowCount: 2,
      truncated: false,
      durationMs: expect.any(Number),
    });

    const limited = await app.request('POST', `/api/reporting/queries/${q.id}/preview`, { token: alice.accessToken, body: { limit: 1 } });
    expect(limited.body).toMatchObject({ rows: [{ id: 1, name: 'apple' }], rowCount: 1, truncated: true });

    const injection = await app.request('POST', `/api/reporting/queries/${q.id}/preview`, {
      token: alice.accessToken,
      body: { parameters: { who: `x' OR '1'='1'; DROP TABLE ${table}; --` } },
    });
    expect(injection.status).toBe(200);
    expect(injection.body.rows).toEqual([]);
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(n).toBe(3);

    const badValue = await app.request('POST', `/api/reporting/queries/${q.id}/preview`, { token: alice.accessToken, body: { parameters: { minAmount: 'lots' } } });
    expect([badValue.status, badValue.body.code, badValue.body.relatedInfo.field]).toEqual([400, 'ERR_RPT_007', 'minAmount']);

    const overLimit = await app.request('POST', `/api/reporting/queries/${q.id}/preview`, { token: alice.accessToken, body: { limit: 1001 } });
    expect([overLimit.status, overLimit.body.code]).toEqual([400, 'ERR_VALID_001']);

    const failing = await create({ text: `SELECT 1 / (id - id) FROM ${table}`, parameters: [] });
    const dbError = await app.request('POST', `/api/reporting/queries/${failing.id}/preview`, { token: alice.accessToken, body: {} });
    expect([dbError.status, dbError.body.code]).toEqual([422, 'ERR_QRY_006']);
  });

  it('answers another project’s query with 404 ERR_QRY_001', async () => {
    const q = await create();
    for (const [method, path] of [
      ['GET', `/api/reporting/queries/${q.id}`],
      ['PATCH', `/api/reporting/queries/${q.id}`],
      ['DELETE', `/api/reporting/queries/${q.shortId}`],
      ['POST', `/api/reporting/queries/${q.id}/publish`],
      ['GET', `/api/reporting/queries/${q.id}/versions`],
      ['POST', `/api/reporting/queries/${q.id}/preview`],
    ] as const) {
      const res = await app.request(method, path, { token: bob.accessToken, body: method === 'PATCH' ? { description: 'x' } : method === 'POST' ? {} : undefined });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'ERR_QRY_001']);
    }
    // Nor can another project's datasource be named.
    const foreign = await app.request('POST', '/api/reporting/queries', { token: bob.accessToken, body: body() });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'ERR_DS_001']);
    const list = await app.request('GET', '/api/reporting/queries', { token: bob.accessToken });
    expect(list.body.data).toEqual([]);
  });

  it('lets members write, viewers read, and refuses viewers the writes and API keys everything', async () => {
    const teamBody = body({ datasourceId: teamDatasource.id });
    const byMember = await app.request('POST', '/api/reporting/queries', { token: bob.accessToken, headers: inTeam(teamId), body: teamBody });
    expect(byMember.status).toBe(201);
    const q = byMember.body;
    const publish = await app.request('POST', `/api/reporting/queries/${q.id}/publish`, { token: bob.accessToken, headers: inTeam(teamId), body: {} });
    expect(publish.status).toBe(201);

    const viewerRead = await app.request('GET', `/api/reporting/queries/${q.id}/versions/1`, { token: carol.accessToken, headers: inTeam(teamId) });
    expect(viewerRead.status).toBe(200);
    for (const [method, path] of [
      ['POST', '/api/reporting/queries'],
      ['PATCH', `/api/reporting/queries/${q.id}`],
      ['PUT', `/api/reporting/queries/${q.id}`],
      ['DELETE', `/api/reporting/queries/${q.id}`],
      ['POST', `/api/reporting/queries/${q.id}/publish`],
      ['POST', `/api/reporting/queries/${q.id}/preview`],
      ['POST', '/api/reporting/queries/validate'],
    ] as const) {
      const res = await app.request(method, path, { token: carol.accessToken, headers: inTeam(teamId), body: method === 'PATCH' ? { description: 'x' } : {} });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_AUTH_005']);
    }

    const key = await createKey(app, alice.accessToken);
    const mine = await create();
    for (const [method, path] of [
      ['POST', '/api/reporting/queries'],
      ['GET', '/api/reporting/queries'],
      ['GET', `/api/reporting/queries/${mine.id}`],
      ['POST', `/api/reporting/queries/${mine.id}/preview`],
    ] as const) {
      const res = await app.request(method, path, { token: key.plainKey, body: method === 'POST' ? body() : undefined });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_AUTH_005']);
    }
  });
});
