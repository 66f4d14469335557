import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { testDatabaseConfig } from '../../support/reporting';
import { addTeamProject, createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { inTeam } from '../../support/teams';
import { buildTemplate, createTemplate, publish as publishTemplate } from '../../support/templates';

/** Reports under /api/reporting/reports (docs/reporting.md "Reports") with published templates and query objects. */
describe('reporting reports', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let carol: SignedUpUser;
  let teamId: string;
  let datasource: { id: string };
  const suffix = randomBytes(4).toString('hex');
  const table = `rpt_probe_${suffix}`;

  const variables = [...(buildTemplate().variables as unknown[]), { name: 'summary', type: 'object', required: false }];

  beforeAll(async () => {
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    [alice, bob, carol] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true }), signUp(app, { verified: true })]);
    teamId = await addTeamProject(app.services.db, alice.id, [
      { userId: bob.id, role: 'member' },
      { userId: carol.id, role: 'viewer' },
    ]);
    await app.services.db.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, name text, amount numeric(10,2))`);
    const ds = await app.request('POST', '/api/reporting/datasources', {
      token: alice.accessToken,
      body: {
        name: `Warehouse ${suffix}`,
        kind: 'postgres',
        config: testDatabaseConfig(app),
        secrets: { password: 'pg-secret' },
      },
    });
    expect(ds.status).toBe(201);
    datasource = ds.body;
  });

  afterAll(async () => {
    await app?.services.db.query(`DROP TABLE IF EXISTS ${table}`);
    await app?.close();
  });

  const token = () => alice.accessToken;

  /** A query object: amounts over `minAmount` (optional) by default; published unless told. */
  async function query(overrides: Record<string, unknown> = {}, published = true) {
    const res = await app.request('POST', '/api/reporting/queries', {
      token: token(),
      body: {
        name: `Q ${randomBytes(4).toString('hex')}`,
        datasourceId: datasource.id,
        text: `SELECT id, name, amount FROM ${table} WHERE amount >= {{ minAmount }}`,
        parameters: [{ name: 'minAmount', type: 'number', default: 0 }],
        ...overrides,
      },
    });
    expect(res.status).toBe(201);
    if (published) expect((await app.request('POST', `/api/reporting/queries/${res.body.id}/publish`, { token: token(), body: {} })).status).toBe(201);
    return res.body;
  }

  /** One row for a customer name: its `who` parameter is required. */
  const countQuery = (published = true) =>
    query({ text: `SELECT count(*) AS n FROM ${table} WHERE name = {{ who }}`, parameters: [{ name: 'who', type: 'string', required: true }] }, published);

  async function template(overrides: Record<string, unknown> = {}, published = true) {
    const t = await createTemplate(app, token(), { variables, ...overrides });
    if (published) await publishTemplate(app, token(), t.id);
    return t;
  }

  async function create(body: Record<string, unknown>, as = token()) {
    const res = await app.request('POST', '/api/reporting/reports', { token: as, body });
    expect([res.status, res.body.code ?? null, res.body.relatedInfo ?? null]).toEqual([201, null, null]);
    return res.body;
  }

  it('creates a draft, publishes it pinned to the latest versions, reports outdated dependencies, and restores', async () => {
    const t = await template();
    const items = await query();
    const stats = await countQuery();
    const r = await create({
      name: 'Monthly Sales',
      templateId: t.slug,
      datasets: [
        { name: 'items', queryId: items.shortId, parameters: { minAmount: '{{ min }}' } },
        { name: 'stats', queryId: stats.slug, shape: 'first_row', bindTo: 'summary', parameters: { who: 'apple' } },
      ],
      parameters: [{ name: 'min', type: 'number', default: 1 }],
      outputs: [{ format: 'pdf' }, { format: 'csv', datasets: ['items'] }],
    });
    expect(r).toMatchObject({
      shortId: expect.stringMatching(/^rpt_[A-Za-z0-9]{16}$/),
      slug: 'monthly-sales',
      templateId: t.id,
      templateVersion: 'latest',
      datasets: [
        { name: 'items', queryId: items.id, queryVersion: 'latest', shape: 'rows', bindTo: null, parameters: { minAmount: '{{ min }}' } },
        { name: 'stats', queryId: stats.id, queryVersion: 'latest', shape: 'first_row', bindTo: 'summary' },
      ],
      filenamePattern: '{slug}-{scheduledFor:yyyy-MM-dd}',
      skipIfEmpty: false,
      useCredit: false,
      isPublished: false,
      latestVersion: 0,
      publishedAt: null,
      outdatedDependencies: [],
    });
    for (const ref of [r.id, r.shortId, r.slug]) {
      const res = await app.request('GET', `/api/reporting/reports/${ref}`, { token: token() });
      expect([ref, res.status, res.body.id]).toEqual([ref, 200, r.id]);
    }

    const v1 = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: { releaseNotes: 'first' } });
    expect(v1.status).toBe(201);
    expect(v1.body).toEqual({
      id: expect.any(String),
      reportId: r.id,
      version: 1,
      publishedAt: expect.any(String),
      pinned: {
        templateVersion: 1,
        datasets: [
          { name: 'items', queryVersion: 1 },
          { name: 'stats', queryVersion: 1 },
        ],
      },
    });
    const unchanged = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} });
    expect([unchanged.status, unchanged.body.code, unchanged.body.relatedInfo]).toEqual([409, 'ERR_RPT_004', { latestVersion: 1 }]);

    // A newer query version: the report says it is outdated, and a publish (same draft) pins the new one.
    await app.request('PATCH', `/api/reporting/queries/${items.id}`, { token: token(), body: { text: `SELECT id, name FROM ${table} WHERE amount >= {{ minAmount }}` } });
    expect((await app.request('POST', `/api/reporting/queries/${items.id}/publish`, { token: token(), body: {} })).status).toBe(201);
    const outdated = await app.request('GET', `/api/reporting/reports/${r.id}`, { token: token() });
    expect(outdated.body).toMatchObject({ isPublished: true, latestVersion: 1, publishedAt: expect.any(String) });
    expect(outdated.body.outdatedDependencies).toEqual([{ type: 'query', id: items.id, name: items.name, dataset: 'items', pinnedVersion: 1, latestVersion: 2 }]);
    const v2 = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} });
    expect(v2.status).toBe(201);
    expect(v2.body.pinned.datasets).toEqual([
      { name: 'items', queryVersion: 2 },
      { name: 'stats', queryVersion: 1 },
    ]);
    expect((await app.request('GET', `/api/reporting/reports/${r.id}`, { token: token() })).body.outdatedDependencies).toEqual([]);

    const versions = await app.request('GET', `/api/reporting/reports/${r.shortId}/versions`, { token: token() });
    expect(versions.body.map((v: any) => [v.version, v.releaseNotes])).toEqual([
      [2, null],
      [1, 'first'],
    ]);
    expect(versions.body[0].publishedBy).toEqual(expect.any(String));
    const one = await app.request('GET', `/api/reporting/reports/${r.id}/versions/1`, { token: token() });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      version: 1,
      reportId: r.id,
      name: 'Monthly Sales',
      definition: { templateId: t.id, templateVersion: 1, datasets: [{ name: 'items', queryId: items.id, queryVersion: 1 }, { name: 'stats', queryVersion: 1 }], outputs: r.outputs },
    });
    for (const v of ['3', 'latest', '0', 'x'.repeat(300)]) {
      const missing = await app.request('GET', `/api/reporting/reports/${r.id}/versions/${v}`, { token: token() });
      expect([v.slice(0, 10), missing.status, missing.body.code]).toEqual([v.slice(0, 10), 404, 'ERR_RPT_002']);
    }

    // The name changes, the slug does not; a draft edit is not a version.
    const renamed = await app.request('PUT', `/api/reporting/reports/${r.id}`, { token: token(), body: { name: 'Monthly Sales EMEA', skipIfEmpty: true } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Monthly Sales EMEA', slug: 'monthly-sales', skipIfEmpty: true, latestVersion: 2 });

    const restored = await app.request('POST', `/api/reporting/reports/${r.id}/versions/1/restore`, { token: token(), body: {} });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ success: true, newVersion: 3 });
    const v3 = await app.request('GET', `/api/reporting/reports/${r.id}/versions/3`, { token: token() });
    expect(v3.body).toMatchObject({ releaseNotes: 'Restored from version 1', definition: one.body.definition });
    const draft = await app.request('GET', `/api/reporting/reports/${r.id}`, { token: token() });
    expect(draft.body).toMatchObject({ name: 'Monthly Sales EMEA', skipIfEmpty: false, latestVersion: 3, templateVersion: 'latest' });
    expect(draft.body.outdatedDependencies).toEqual([{ type: 'query', id: items.id, name: items.name, dataset: 'items', pinnedVersion: 1, latestVersion: 2 }]);
  });

  it('answers every publish problem at once in one 400 ERR_RPT_005', async () => {
    const pdfOnly = await template({ outputFormats: ['pdf'] });
    const unpublished = await query({}, false);
    const stats = await countQuery();
    const items = await query();
    const r = await create({
      name: `Broken ${suffix}`,
      templateId: pdfOnly.id,
      datasets: [
        { name: 'a', queryId: unpublished.id },
        { name: 'b', queryId: stats.id, shape: 'first_row', bindTo: 'items', parameters: { bogus: 1 } },
        { name: 'c', queryId: items.id, bindTo: 'customer', parameters: { minAmount: 'lots' } },
        { name: 'd', queryId: items.id, queryVersion: 7, bindTo: 'nowhere' },
      ],
      outputs: [{ format: 'excel' }],
    });
    const res = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} });
    expect([res.status, res.body.code]).toEqual([400, 'ERR_RPT_005']);
    const paths = res.body.relatedInfo.errors.map((e: any) => e.path);
    expect(paths.sort()).toEqual(
      [
        'outputs[0].format',
        'datasets[0].queryId',
        'datasets[0].bindTo',
        'datasets[1].parameters.bogus',
        'datasets[1].parameters.who',
        'datasets[1].bindTo',
        'datasets[2].parameters.minAmount',
        'datasets[2].bindTo',
        'datasets[3].queryVersion',
        'datasets[3].bindTo',
      ].sort(),
    );
    const byPath = Object.fromEntries(res.body.relatedInfo.errors.map((e: any) => [e.path, e.message]));
    expect(byPath['outputs[0].format']).toMatch(/does not render excel/);
    expect(byPath['datasets[0].queryId']).toMatch(/is not published/);
    expect(byPath['datasets[1].bindTo']).toMatch(/array variable; shape first_row needs an object variable/);
    expect(byPath['datasets[2].bindTo']).toMatch(/string variable; shape rows needs an array variable/);
    expect(byPath['datasets[3].queryVersion']).toMatch(/has no version 7/);
    expect((await app.request('GET', `/api/reporting/reports/${r.id}/versions`, { token: token() })).body).toEqual([]);

    // An unpublished template, then a deleted one.
    const draftOnly = await template({}, false);
    const fine = [{ name: 'items', queryId: items.id }];
    const edit = await app.request('PUT', `/api/reporting/reports/${r.id}`, { token: token(), body: { templateId: draftOnly.shortId, datasets: fine, outputs: [{ format: 'pdf' }] } });
    expect(edit.status).toBe(200);
    const notPublished = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} });
    expect(notPublished.body.relatedInfo.errors).toEqual([{ path: 'templateId', message: expect.stringMatching(/is not published/) }]);
    await publishTemplate(app, token(), draftOnly.id);
    expect((await app.request('DELETE', `/api/templates/${draftOnly.id}`, { token: token() })).status).toBeLessThan(300);
    const deleted = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} });
    expect(deleted.body.relatedInfo.errors).toEqual([{ path: 'templateId', message: 'The template no longer exists' }]);

    // csv only needs no template; a required parameter mapped to a report parameter is mapped.
    const csv = await app.request('PUT', `/api/reporting/reports/${r.id}`, {
      token: token(),
      body: { templateId: null, datasets: [{ name: 'stats', queryId: stats.id, parameters: { who: '{{customer}}' } }], parameters: [{ name: 'customer', type: 'string', required: true }], outputs: [{ format: 'csv' }] },
    });
    expect(csv.status).toBe(200);
    const ok = await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} });
    expect([ok.status, ok.body.pinned]).toEqual([201, { templateVersion: null, datasets: [{ name: 'stats', queryVersion: 1 }] }]);
  });

  it('checks a draft when saved: every problem at once, hostile sizes and unknown fields refused', async () => {
    const items = await query();
    const res = await app.request('POST', '/api/reporting/reports', {
      token: token(),
      body: {
        name: `Draft ${suffix}`,
        templateId: 'no-such-template',
        datasets: [
          { name: 'rows', queryId: items.id, parameters: { minAmount: '{{ missing }}' } },
          { name: 'rows', queryId: 'qry_0000000000000000' },
          { name: '1bad', queryId: items.id, parameters: { minAmount: 'x {{ y }}' } },
        ],
        outputs: [{ format: 'csv', datasets: ['ghost'] }, { format: 'pdf', datasets: ['rows'] }],
        filenamePattern: '{slug}-{unknown}',
      },
    });
    expect([res.status, res.body.code]).toEqual([400, 'ERR_RPT_005']);
    expect(res.body.relatedInfo.errors.map((e: any) => e.path).sort()).toEqual(
      [
        'templateId',
        'datasets[0].parameters.minAmount',
        'datasets[1].name',
        'datasets[1].queryId',
        'datasets[2].name',
        'datasets[2].parameters.minAmount',
        'outputs[0].datasets[0]',
        'outputs[1].datasets',
        'filenamePattern',
      ].sort(),
    );

    const noTemplate = await app.request('POST', '/api/reporting/reports', { token: token(), body: { name: 'x', datasets: [{ name: 'a', queryId: items.id }], outputs: [{ format: 'pdf' }] } });
    expect(noTemplate.body.relatedInfo.errors).toEqual([{ path: 'templateId', message: 'A pdf output needs a template' }]);

    const params = Array.from({ length: 51 }, (_, i) => ({ name: `p${i}`, type: 'string' }));
    const tooManyParams = await app.request('POST', '/api/reporting/reports', { token: token(), body: { name: 'x', datasets: [{ name: 'a', queryId: items.id }], parameters: params } });
    expect([tooManyParams.status, tooManyParams.body.code, tooManyParams.body.relatedInfo.errors]).toEqual([400, 'ERR_RPT_005', [{ path: 'parameters', message: 'At most 50 parameters' }]]);

    const dataset = { name: 'a', queryId: items.id };
    for (const [label, body] of [
      ['11 datasets', { name: 'x', datasets: Array.from({ length: 11 }, (_, i) => ({ ...dataset, name: `d${i}` })) }],
      ['no datasets', { name: 'x', datasets: [] }],
      ['10,000 character name', { name: 'n'.repeat(10_000), datasets: [dataset] }],
      ['bindTo of another type', { name: 'x', datasets: [{ ...dataset, bindTo: 5 }] }],
      ['unknown shape', { name: 'x', datasets: [{ ...dataset, shape: 'table' }] }],
      ['unknown field', { name: 'x', datasets: [dataset], owner: 'me' }],
      ['unknown dataset field', { name: 'x', datasets: [{ ...dataset, sql: 'DROP TABLE x' }] }],
      ['templateVersion 0', { name: 'x', datasets: [dataset], templateVersion: 0 }],
      ['object parameter value', { name: 'x', datasets: [{ ...dataset, parameters: { minAmount: { $gt: 1 } } }] }],
    ] as const) {
      const bad = await app.request('POST', '/api/reporting/reports', { token: token(), body });
      expect([label, bad.status, bad.body.code]).toEqual([label, 400, 'ERR_VALID_001']);
    }
    const emptyPut = await app.request('PUT', `/api/reporting/reports/${(await create({ name: `Put ${suffix}`, datasets: [dataset] })).id}`, { token: token(), body: {} });
    expect([emptyPut.status, emptyPut.body.code]).toEqual([400, 'ERR_VALID_001']);

    await create({ name: `Twin ${suffix}`, datasets: [dataset] });
    const twin = await app.request('POST', '/api/reporting/reports', { token: token(), body: { name: `TWIN ${suffix}`, datasets: [dataset] } });
    expect([twin.status, twin.body.code]).toEqual([409, 'ERR_RPT_006']);
  });

  it('lists with search, isPublished and sorting, and deletes softly', async () => {
    const items = await query();
    const tag = randomBytes(3).toString('hex');
    const b = await create({ name: `List ${tag} b`, datasets: [{ name: 'a', queryId: items.id }], folderId: 'f1' });
    const a = await create({ name: `List ${tag} a`, datasets: [{ name: 'a', queryId: items.id }] });
    expect((await app.request('POST', `/api/reporting/reports/${b.id}/publish`, { token: token(), body: {} })).status).toBe(201);

    const byName = await app.request('GET', `/api/reporting/reports?search=list%20${tag}&sortBy=name&sortOrder=asc`, { token: token() });
    expect(byName.status).toBe(200);
    expect(byName.body.data.map((r: any) => r.id)).toEqual([a.id, b.id]);
    expect(byName.body.meta).toEqual({ total: 2, page: 1, limit: 20, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const published = await app.request('GET', `/api/reporting/reports?search=list%20${tag}&isPublished=true`, { token: token() });
    expect(published.body.data.map((r: any) => r.id)).toEqual([b.id]);
    const folder = await app.request('GET', `/api/reporting/reports?search=list%20${tag}&folderId=f1`, { token: token() });
    expect(folder.body.data.map((r: any) => r.id)).toEqual([b.id]);
    const paged = await app.request('GET', `/api/reporting/reports?search=list%20${tag}&limit=1&page=2&sortBy=name&sortOrder=desc`, { token: token() });
    expect([paged.body.data.map((r: any) => r.id), paged.body.meta.hasPreviousPage]).toEqual([[a.id], true]);
    for (const q of ['limit=101', 'sortBy=owner', 'isPublished=maybe', 'extra=1']) {
      const bad = await app.request('GET', `/api/reporting/reports?${q}`, { token: token() });
      expect([q, bad.status, bad.body.code]).toEqual([q, 400, 'ERR_VALID_001']);
    }

    expect((await app.request('DELETE', `/api/reporting/reports/${b.shortId}`, { token: token() })).status).toBe(204);
    const gone = await app.request('GET', `/api/reporting/reports/${b.id}`, { token: token() });
    expect([gone.status, gone.body.code]).toEqual([404, 'ERR_RPT_001']);
    const again = await app.request('DELETE', `/api/reporting/reports/${b.id}`, { token: token() });
    expect([again.status, again.body.code]).toEqual([404, 'ERR_RPT_001']);
    // The name is free again.
    await create({ name: `List ${tag} b`, datasets: [{ name: 'a', queryId: items.id }] });
  });

  it('refuses to delete a query object a published report version pins (409 ERR_QRY_012)', async () => {
    const pinned = await query();
    const draftOnly = await query();
    const r = await create({ name: `Pins ${suffix}`, datasets: [{ name: 'a', queryId: pinned.id }] });
    await create({ name: `Draft pins ${suffix}`, datasets: [{ name: 'a', queryId: draftOnly.id }] });
    expect((await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: token(), body: {} })).status).toBe(201);

    const refused = await app.request('DELETE', `/api/reporting/queries/${pinned.id}`, { token: token() });
    expect([refused.status, refused.body.code, refused.body.relatedInfo]).toEqual([409, 'ERR_QRY_012', { reports: 1 }]);
    expect((await app.request('GET', `/api/reporting/queries/${pinned.id}`, { token: token() })).status).toBe(200);
    // A draft does not pin: that query goes, and the draft's publish then says so.
    expect((await app.request('DELETE', `/api/reporting/queries/${draftOnly.id}`, { token: token() })).status).toBe(204);

    expect((await app.request('DELETE', `/api/reporting/reports/${r.id}`, { token: token() })).status).toBe(204);
    expect((await app.request('DELETE', `/api/reporting/queries/${pinned.id}`, { token: token() })).status).toBe(204);
  });

  it('lets members write, viewers and read_reports keys read, and keeps projects apart', async () => {
    const teamDs = await app.request('POST', '/api/reporting/datasources', {
      token: alice.accessToken,
      headers: inTeam(teamId),
      body: {
        name: `Team ${suffix}`,
        kind: 'postgres',
        config: testDatabaseConfig(app),
        secrets: { password: 'pg-secret' },
      },
    });
    const teamQuery = await app.request('POST', '/api/reporting/queries', {
      token: bob.accessToken,
      headers: inTeam(teamId),
      body: { name: `TQ ${suffix}`, datasourceId: teamDs.body.id, text: `SELECT 1 AS one`, parameters: [] },
    });
    await app.request('POST', `/api/reporting/queries/${teamQuery.body.id}/publish`, { token: bob.accessToken, headers: inTeam(teamId), body: {} });
    const byMember = await app.request('POST', '/api/reporting/reports', {
      token: bob.accessToken,
      headers: inTeam(teamId),
      body: { name: `Team report ${suffix}`, datasets: [{ name: 'one', queryId: teamQuery.body.id }] },
    });
    expect(byMember.status).toBe(201);
    const r = byMember.body;
    expect((await app.request('POST', `/api/reporting/reports/${r.id}/publish`, { token: bob.accessToken, headers: inTeam(teamId), body: {} })).status).toBe(201);

    for (const path of [`/api/reporting/reports/${r.id}`, '/api/reporting/reports', `/api/reporting/reports/${r.id}/versions`, `/api/reporting/reports/${r.id}/versions/1`]) {
      const res = await app.request('GET', path, { token: carol.accessToken, headers: inTeam(teamId) });
      expect([path, res.status]).toEqual([path, 200]);
    }
    const writes = [
      ['POST', '/api/reporting/reports'],
      ['PUT', `/api/reporting/reports/${r.id}`],
      ['DELETE', `/api/reporting/reports/${r.id}`],
      ['POST', `/api/reporting/reports/${r.id}/publish`],
      ['POST', `/api/reporting/reports/${r.id}/versions/1/restore`],
    ] as const;
    for (const [method, path] of writes) {
      const res = await app.request(method, path, { token: carol.accessToken, headers: inTeam(teamId), body: method === 'PUT' ? { description: 'x' } : {} });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_AUTH_005']);
    }

    // API keys: read_reports reads; no key writes; a key without the flag reads nothing.
    const reader = await createKey(app, alice.accessToken, { name: `reader ${suffix}`, permissions: { read_reports: true } }, teamId);
    const plain = await createKey(app, alice.accessToken, { name: `plain ${suffix}` }, teamId);
    for (const path of [`/api/reporting/reports/${r.shortId}`, '/api/reporting/reports', `/api/reporting/reports/${r.id}/versions`, `/api/reporting/reports/${r.id}/versions/1`]) {
      const ok = await app.request('GET', path, { token: reader.plainKey });
      expect([path, ok.status]).toEqual([path, 200]);
      const refused = await app.request('GET', path, { token: plain.plainKey });
      expect([path, refused.status, refused.body.code]).toEqual([path, 403, 'ERR_AUTH_005']);
    }
    const list = await app.request('GET', '/api/reporting/reports', { token: reader.plainKey });
    expect(list.body.data.map((x: any) => x.id)).toEqual([r.id]);
    for (const [method, path] of writes) {
      const res = await app.request(method, path, { token: reader.plainKey, body: method === 'PUT' ? { description: 'x' } : {} });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_AUTH_005']);
    }

    // Another project (alice's personal one, bob's personal one): 404 ERR_RPT_001 on every route.
    for (const [method, path] of [...writes.slice(1), ['GET', `/api/reporting/reports/${r.id}`], ['GET', `/api/reporting/reports/${r.slug}/versions`], ['GET', `/api/reporting/reports/${r.id}/versions/1`]] as const) {
      for (const as of [alice.accessToken, bob.accessToken]) {
        const res = await app.request(method, path, { token: as, body: method === 'PUT' ? { description: 'x' } : method === 'GET' ? undefined : {} });
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'ERR_RPT_001']);
      }
    }
    expect((await app.request('GET', '/api/reporting/reports', { token: bob.accessToken })).body.data).toEqual([]);
    // Nor can a report of one project name another project's query or template.
    const foreign = await app.request('POST', '/api/reporting/reports', { token: bob.accessToken, body: { name: 'Foreign', datasets: [{ name: 'one', queryId: teamQuery.body.id }] } });
    expect([foreign.status, foreign.body.code, foreign.body.relatedInfo.errors]).toEqual([400, 'ERR_RPT_005', [{ path: 'datasets[0].queryId', message: expect.any(String) }]]);
  });
});
