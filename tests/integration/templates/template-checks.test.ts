import { gzipSync } from 'node:zlib';
import { startCpuBudget } from '../../../domain/cpu-budget';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { buildInvoiceBody, buildTemplate, createTemplate, publish } from '../../support/templates';

/** List queries, validate-schema, validate-variables, automation fields and template analytics. */
describe('Templates: list, checks, automation fields, analytics', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    alice = await signUp(app);
  });
  afterAll(() => app.close());

  const get = (path: string) => app.request('GET', path, { token: alice.accessToken });
  const post = (path: string, body: unknown) => app.request('POST', path, { token: alice.accessToken, body });

  describe('GET /api/templates', () => {
    const names = ['Alpha report', 'beta_report', 'Gamma 100% report', 'Delta letter', 'Epsilon letter'];
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      for (const name of names) ids[name] = (await createTemplate(app, alice.accessToken, { name, folderId: name.includes('letter') ? 'letters' : null })).id;
      await publish(app, alice.accessToken, ids['Delta letter']);
    });
    const listNames = async (query: string) => (await get(`/api/templates?${query}`)).body.data.map((t: { name: string }) => t.name);

    it('pages with page/limit and reports {total, page, limit, totalPages, hasNextPage, hasPreviousPage}', async () => {
      const first = await get('/api/templates?limit=2&sortBy=name&sortOrder=asc');
      expect(first.status).toBe(200);
      expect(first.body.meta).toEqual({ total: 5, page: 1, limit: 2, totalPages: 3, hasNextPage: true, hasPreviousPage: false });
      expect(first.body.data.map((t: { name: string }) => t.name)).toEqual(['Alpha report', 'beta_report']);
      expect(Object.keys(first.body.data[0]).sort()).toEqual(
        ['createdAt', 'description', 'folderId', 'id', 'isPublished', 'latestVersion', 'name', 'outputFormats', 'publishedAt', 'shortId', 'slug', 'updatedAt'],
      );
      const last = await get('/api/templates?limit=2&page=3&sortBy=name&sortOrder=asc');
      expect(last.body.meta).toMatchObject({ page: 3, hasNextPage: false, hasPreviousPage: true });
      expect(last.body.data.map((t: { name: string }) => t.name)).toEqual(['Gamma 100% report']);
      // Default: 20 per page, most recently updated first.
      const byDefault = await get('/api/templates');
      expect(byDefault.body.meta).toMatchObject({ limit: 20, page: 1 });
      expect(byDefault.body.data[0].name).toBe('Epsilon letter');
    });

    it('searches names case-insensitively, with % and _ taken literally', async () => {
      expect(await listNames('search=REPORT&sortBy=name&sortOrder=asc')).toEqual(['Alpha report', 'beta_report', 'Gamma 100% report']);
      expect(await listNames('search=100%25')).toEqual(['Gamma 100% report']);
      expect(await listNames('search=a_r')).toEqual(['beta_report']);
      expect(await listNames('search=%25')).toEqual(['Gamma 100% report']);
    });

    it('filters by folderId and isPublished, sorts by createdAt', async () => {
      expect(await listNames('folderId=letters&sortBy=createdAt&sortOrder=asc')).toEqual(['Delta letter', 'Epsilon letter']);
      expect(await listNames('isPublished=true')).toEqual(['Delta letter']);
      expect((await listNames('isPublished=false')).length).toBe(4);
      expect(await listNames('sortBy=createdAt&sortOrder=desc&limit=1')).toEqual(['Epsilon letter']);
    });

    it('refuses bad queries with 400 ERR_VALID_001 naming the parameter', async () => {
      for (const [query, field] of [['limit=101', 'limit'], ['page=0', 'page'], ['sortBy=slug', 'sortBy'], ['sortOrder=up', 'sortOrder'], ['colour=red', 'colour']]) {
        const res = await get(`/api/templates?${query}`);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field } });
      }
    });
  });

  it('validate-schema: {valid, errors, warnings}; placeholders checked against variables when given', async () => {
    const { schema, variables, constants, calculatedVariables } = buildTemplate();
    let res = await post('/api/templates/validate-schema', { templateType: 'pdf', schema });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ valid: true, errors: [], warnings: [] });
    res = await post('/api/templates/validate-schema', { templateType: 'excel', schema, variables, constants, calculatedVariables });
    expect(res.body.valid).toBe(true);
    res = await post('/api/templates/validate-schema', { templateType: 'pdf', schema, variables: [], constants: {} });
    expect(res.body.valid).toBe(false);
    expect(res.body.errors).toContainEqual({ path: 'sections[0].components[2].props.dataSource', message: expect.any(String) });
    expect(res.body.warnings).toContainEqual({ path: 'sections[0].components[0].props.text', message: expect.stringContaining('customer') });
    res = await post('/api/templates/validate-schema', { templateType: 'pdf', schema: { pageSize: 'A4', sections: 'none' } });
    expect(res.body).toMatchObject({ valid: false, errors: [{ path: 'sections', message: expect.any(String) }] });
  });

  it('validate-schema answers at once for a text prop of {{ and 100,000 spaces (placeholders are scanned, not backtracked)', async () => {
    // The old placeholder pattern took seconds for 3,000 spaces and minutes for 8,000.
    const schemaWith = (texts: string[], title = 'Letter') => ({
      pageSize: 'A4',
      header: { left: `{{${' '.repeat(998)}` },
      sections: [{ id: 'main', title, components: texts.map((text, i) => ({ id: `t${i}`, type: 'text', props: { text } })) }],
    });
    // CPU time of this process (the app runs in it): a busy machine does not move it.
    const cpu = startCpuBudget(0);
    const tooLong = await post('/api/templates/validate-schema', { templateType: 'pdf', schema: schemaWith([`{{${' '.repeat(100_000)}`]) });
    expect(tooLong.status).toBe(200);
    expect(tooLong.body).toMatchObject({ valid: false, errors: [{ path: 'sections[0].components[0].props.text', message: expect.any(String) }] });
    // Within the prop's 100,000-character limit the placeholder checks do read the whole text.
    const scanned = await post('/api/templates/validate-schema', {
      templateType: 'excel',
      schema: schemaWith([`{{${' '.repeat(99_998)}`, `{{a${' |'.repeat(49_998)}`, `{{ customer }}${' '.repeat(99_000)}`], `{{${' '.repeat(998)}`),
      variables: [{ name: 'customer', type: 'string', required: true }],
      constants: {},
    });
    expect(scanned.status).toBe(200);
    expect(scanned.body).toEqual({ valid: true, errors: [], warnings: [] });
    expect(cpu.usedMs()).toBeLessThan(5000);
  });

  it('validate-schema: an unknown templateType is 400 ERR_TMPL_009; missing fields ERR_VALID_005', async () => {
    const res = await post('/api/templates/validate-schema', { templateType: 'word', schema: buildTemplate().schema });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_TMPL_009', relatedInfo: { field: 'templateType' } });
    expect((await post('/api/templates/validate-schema', { templateType: 'pdf' })).body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'schema' } });
  });

  it('validate-schema and validate-variables read JSON bodies as bytes: malformed, too deep, compressed, too large, not JSON', async () => {
    const raw = (path: string, rawBody: string | Buffer, headers: Record<string, string> = {}) =>
      app.request('POST', path, { token: alice.accessToken, rawBody, headers: { 'content-type': 'application/json', ...headers } });
    for (const path of ['/api/templates/validate-schema', '/api/templates/validate-variables']) {
      const malformed = await raw(path, '{"templateType": "pdf",');
      expect(malformed.status).toBe(400);
      expect(malformed.body.code).toBe('ERR_REQ_001');
      const deep = await raw(path, `${'['.repeat(5000)}${']'.repeat(5000)}`);
      expect(deep.status).toBe(400);
      expect(deep.body).toMatchObject({ code: 'ERR_REQ_005', relatedInfo: { limit: 100 } });
      // Decoded past JSON_BODY_LIMIT (10 MB): 11 MB of spaces compress to a few KB.
      const bomb = gzipSync(Buffer.from(`{"variables": [], "x": "${' '.repeat(11 * 1024 * 1024)}"}`));
      expect(bomb.length).toBeLessThan(100_000);
      const tooLarge = await raw(path, bomb, { 'content-encoding': 'gzip' });
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body.code).toBe('ERR_REQ_002');
      const unknownEncoding = await raw(path, '{}', { 'content-encoding': 'compress' });
      expect(unknownEncoding.status).toBe(400);
      expect(unknownEncoding.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'Content-Encoding' } });
      const corrupt = await raw(path, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
      expect(corrupt.status).toBe(400);
      expect(corrupt.body.code).toBe('ERR_REQ_001');
    }
    const { schema } = buildTemplate();
    const zipped = await raw('/api/templates/validate-schema', gzipSync(JSON.stringify({ templateType: 'pdf', schema })), { 'content-encoding': 'gzip' });
    expect(zipped.status).toBe(200);
    expect(zipped.body).toEqual({ valid: true, errors: [], warnings: [] });
    const checked = await raw('/api/templates/validate-schema', gzipSync(JSON.stringify({ templateType: 'pdf', schema, variables: [], constants: {} })), { 'content-encoding': 'gzip' });
    expect(checked.body.valid).toBe(false);
    expect(checked.body.errors).toContainEqual({ path: 'sections[0].components[2].props.dataSource', message: expect.any(String) });
    const unknownField = await raw('/api/templates/validate-variables', JSON.stringify({ variables: [], extra: 1 }));
    expect(unknownField.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'extra' } });
    // A body that is not JSON is refused unread (docs/errors.md "Methods and content types").
    const form = await app.request('POST', '/api/templates/validate-schema', { token: alice.accessToken, rawBody: 'templateType=pdf', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([form.status, form.body.code, form.body.relatedInfo?.received]).toEqual([415, 'ERR_REQ_007', 'application/x-www-form-urlencoded']);
  });

  it('validate-variables: {valid, errors, warnings} over variables, constants and calculated variables', async () => {
    const ok = await post('/api/templates/validate-variables', { variables: buildTemplate().variables, constants: { vat: 0.2 }, calculatedVariables: [] });
    expect(ok.body).toEqual({ valid: true, errors: [], warnings: [] });
    const bad = await post('/api/templates/validate-variables', {
      variables: [{ name: 'n', type: 'number', required: true, defaultValue: 'many' }, { name: 'n', type: 'string' }],
      calculatedVariables: [{ name: 'x', expression: '1 +' }],
    });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    const paths = bad.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['variables[0].defaultValue', 'variables[1]', 'calculatedVariables[0].expression']));
    expect(bad.body.warnings).toContainEqual({ path: 'variables[0].required', message: expect.any(String) });
    expect((await post('/api/templates/validate-variables', {})).body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'variables' } });
  });

  it('automation-fields: variables as {key, label, type, required, children}; arrays give children from items', async () => {
    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody());
    const res = await get(`/api/templates/${t.slug}/automation-fields`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      fields: [
        { key: 'invoiceNumber', label: 'Invoice Number', type: 'string', required: true },
        { key: 'customer', label: 'Customer', type: 'string', required: true },
        { key: 'issuedOn', label: 'Issued On', type: 'date', required: true },
        { key: 'paid', label: 'Paid', type: 'boolean', required: false },
        {
          key: 'items',
          label: 'Items',
          type: 'array',
          required: true,
          children: [
            { key: 'description', label: 'Description', type: 'string' },
            { key: 'qty', label: 'Qty', type: 'number' },
            { key: 'price', label: 'Price', type: 'number' },
            { key: 'shippedOn', label: 'Shipped On', type: 'date' },
            { key: 'taxable', label: 'Taxable', type: 'boolean' },
          ],
        },
      ],
    });
    // Once published, the fields follow the published version, not later draft edits.
    await publish(app, alice.accessToken, t.id);
    await app.request('PUT', `/api/templates/${t.id}`, { token: alice.accessToken, body: { variables: [...buildInvoiceBody().variables as unknown[], { name: 'po_number', type: 'string', required: false }] } });
    expect((await get(`/api/templates/${t.id}/automation-fields`)).body.fields).toHaveLength(5);
    await publish(app, alice.accessToken, t.id);
    const fields = (await get(`/api/templates/${t.shortId}/automation-fields`)).body.fields;
    expect(fields.at(-1)).toEqual({ key: 'po_number', label: 'Po Number', type: 'string', required: false });
  });

  it('analytics: {templateId, templateName, usage, performance, trend}, zeros until documents are generated', async () => {
    const t = await createTemplate(app, alice.accessToken, { name: 'Counted' });
    const res = await get(`/api/templates/${t.id}/analytics`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      templateId: t.id,
      templateName: 'Counted',
      usage: { total: 0, last7Days: 0, last30Days: 0 },
      performance: { successRate: 0, avgGenerationTimeMs: 0, failedCount: 0 },
    });
    // Default period 30d: one entry per UTC day, today last.
    expect(res.body.trend).toHaveLength(30);
    expect(res.body.trend.at(-1)).toEqual({ date: new Date().toISOString().slice(0, 10), count: 0 });
    for (const [period, days] of [['7d', 7], ['90d', 90], ['1y', 365]] as const) {
      expect((await get(`/api/templates/${t.id}/analytics?period=${period}`)).body.trend).toHaveLength(days);
    }
    const range = await get(`/api/templates/${t.slug}/analytics?startDate=2026-01-30&endDate=2026-02-02T12:00:00Z`);
    expect(range.body.trend.map((d: { date: string }) => d.date)).toEqual(['2026-01-30', '2026-01-31', '2026-02-01', '2026-02-02']);
    const fromStart = await get(`/api/templates/${t.slug}/analytics?startDate=2026-01-01&period=7d`);
    expect(fromStart.body.trend.at(-1).date).toBe('2026-01-07');
    const reversed = await get(`/api/templates/${t.id}/analytics?startDate=2026-02-02&endDate=2026-01-01`);
    expect(reversed.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'startDate' } });
    expect((await get(`/api/templates/${t.id}/analytics?period=2w`)).body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'period' } });
    expect((await get(`/api/templates/${t.id}/analytics?startDate=2020-01-01&endDate=2026-01-01`)).body.code).toBe('ERR_VALID_001');
  });
});
