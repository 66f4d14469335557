import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { activityTypes, buildTemplate, createTemplate, personalProjectId } from '../../support/templates';

/** Create, read, edit, delete and copy templates (spec, "Templates"). */
describe('Templates: create, read, update, delete', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let projectId: string;
  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    alice = await signUp(app);
    projectId = await personalProjectId(app, alice.id);
  });
  afterAll(() => app.close());

  const token = () => alice.accessToken;

  it('creates a template: 201 {id, shortId, slug, name, outputFormats, createdAt} and a template_created entry', async () => {
    const body = buildTemplate({ name: 'Welcome Letter', outputFormats: ['pdf'] });
    const res = await app.request('POST', '/api/templates', { token: token(), body });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'id', 'name', 'outputFormats', 'shortId', 'slug']);
    expect(res.body).toMatchObject({ name: 'Welcome Letter', slug: 'welcome-letter', outputFormats: ['pdf'] });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.shortId).toMatch(/^etpl_[0-9A-Za-z]{12}$/);
    expect(Date.now() - Date.parse(res.body.createdAt)).toBeLessThan(60_000);
    const entries = await activityTypes(app, projectId);
    expect(entries).toContainEqual({ type: 'template_created', data: { template: { id: res.body.id, name: 'Welcome Letter' } }, user_id: alice.id });
  });

  it('reads the full template by id, shortId and slug', async () => {
    const body = buildTemplate({ name: 'Full Object', folderId: 'letters' });
    const created = await createTemplate(app, token(), body);
    for (const ref of [created.id, created.shortId, created.slug]) {
      const res = await app.request('GET', `/api/templates/${ref}`, { token: token() });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: created.id,
        shortId: created.shortId,
        slug: 'full-object',
        name: 'Full Object',
        description: body.description,
        outputFormats: ['pdf', 'excel'],
        folderId: 'letters',
        isPublished: false,
        latestVersion: null,
        publishedAt: null,
        createdAt: created.createdAt,
        updatedAt: created.createdAt,
        schema: body.schema,
        variables: body.variables,
        constants: body.constants,
        calculatedVariables: body.calculatedVariables,
      });
    }
  });

  it('answers an unknown template with 404 ERR_TMPL_001 whatever the reference looks like', async () => {
    for (const ref of ['00000000-0000-4000-8000-000000000000', 'etpl_AAAAAAAAAAAA', 'no-such-slug', 'x'.repeat(300)]) {
      const res = await app.request('GET', `/api/templates/${ref}`, { token: token() });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, code: 'ERR_TMPL_001', path: `/api/templates/${ref}` });
    }
  });

  it('refuses an invalid definition with 400 ERR_TMPL_008: the first error in relatedInfo.path, all listed', async () => {
    const body = buildTemplate({
      schema: { pageSize: 'B7', sections: [{ id: 'main', components: [{ id: 'a', type: 'hologram', props: {} }] }] },
      variables: [{ name: 'customer', type: 'str' }],
    });
    const res = await app.request('POST', '/api/templates', { token: token(), body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ERR_TMPL_008');
    const { path, errors } = res.body.relatedInfo;
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(path).toBe(errors[0].path);
    expect(res.body.message).toContain(errors[0].path);
    const paths = errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['variables[0].type', 'schema.pageSize', 'schema.sections[0].components[0].type']));
    // Nothing was stored.
    expect(await app.services.db.query(`SELECT 1 FROM templates WHERE project_id = $1 AND name = $2`, [projectId, body.name])).toEqual([]);
  });

  it('refuses a calculated variable whose JSONata does not parse (ERR_TMPL_008)', async () => {
    const res = await app.request('POST', '/api/templates', {
      token: token(),
      body: buildTemplate({ calculatedVariables: [{ name: 'total', expression: '$sum(items.amount' }] }),
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ERR_TMPL_008');
    expect(res.body.relatedInfo.path).toBe('calculatedVariables[0].expression');
  });

  it('refuses unknown or missing output formats with 400 ERR_TMPL_009', async () => {
    for (const outputFormats of [['pdf', 'word'], [], ['PDF']]) {
      const res = await app.request('POST', '/api/templates', { token: token(), body: buildTemplate({ outputFormats }) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ERR_TMPL_009', relatedInfo: { field: 'outputFormats', allowed: ['pdf', 'excel'] } });
    }
  });

  it('refuses a missing name (400 ERR_VALID_005) and unknown fields (400 ERR_VALID_001) naming the field', async () => {
    const { name: _name, ...noName } = buildTemplate();
    let res = await app.request('POST', '/api/templates', { token: token(), body: noName });
    expect(res.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_005', relatedInfo: { field: 'name' } });
    res = await app.request('POST', '/api/templates', { token: token(), body: { ...buildTemplate(), colour: 'red' } });
    expect(res.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_001', relatedInfo: { field: 'colour' } });
  });

  it('keeps names unique per project (409 ERR_TMPL_011, case-insensitive) and slugs readable', async () => {
    await createTemplate(app, token(), { name: 'Quote' });
    const res = await app.request('POST', '/api/templates', { token: token(), body: buildTemplate({ name: 'QUOTE' }) });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'ERR_TMPL_011', relatedInfo: { field: 'name' } });
    // Different names with the same slug: the second gets `-2`. Reserved path words get a suffix.
    expect((await createTemplate(app, token(), { name: 'Quote!' })).slug).toBe('quote-2');
    expect((await createTemplate(app, token(), { name: 'Import' })).slug).toBe('import-template');
    expect((await createTemplate(app, token(), { name: '???' })).slug).toBe('template');
  });

  it('updates the draft with PUT: fields left out keep their value, updatedAt moves, the slug stays', async () => {
    const created = await createTemplate(app, token(), { name: 'Editable' });
    const before = (await app.request('GET', `/api/templates/${created.id}`, { token: token() })).body;
    const variables = [...(before.variables as unknown[]), { name: 'signature', type: 'string', required: false, defaultValue: 'The team' }];
    const res = await app.request('PUT', `/api/templates/${created.slug}`, {
      token: token(),
      body: { name: 'Edited', description: null, variables, folderId: 'archive' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'Edited', slug: 'editable', description: null, folderId: 'archive', variables });
    expect(res.body.schema).toEqual(before.schema);
    expect(res.body.constants).toEqual(before.constants);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(res.body.createdAt).toBe(before.createdAt);
    const entries = await activityTypes(app, projectId);
    expect(entries.at(-1)).toEqual({
      type: 'template_updated',
      data: { template: { id: created.id, name: 'Edited' }, changes: ['name', 'description', 'variables', 'folderId'] },
      user_id: alice.id,
    });
  });

  it('lists the folders in use with their counts, this project only; a folder lists with ?folderId=', async () => {
    const bob = await signUp(app);
    await createTemplate(app, bob.accessToken, buildTemplate({ name: 'Not Alice', folderId: 'letters' }));
    const folder = `folder-${Date.now()}`;
    await createTemplate(app, alice.accessToken, buildTemplate({ name: `In ${folder} 1`, folderId: folder }));
    await createTemplate(app, alice.accessToken, buildTemplate({ name: `In ${folder} 2`, folderId: folder }));
    const moved = await createTemplate(app, alice.accessToken, buildTemplate({ name: `Out of ${folder}`, folderId: folder }));
    expect((await app.request('PUT', `/api/templates/${moved.id}`, { token: alice.accessToken, body: { folderId: null } })).status).toBe(200);
    const res = await app.request('GET', '/api/templates/folders', { token: alice.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data).toContainEqual({ name: folder, templates: 2 });
    const bobs = await app.request('GET', '/api/templates/folders', { token: bob.accessToken });
    expect(bobs.body.data).toEqual([{ name: 'letters', templates: 1 }]);
    const listed = await app.request('GET', `/api/templates?folderId=${folder}`, { token: alice.accessToken });
    expect(listed.body.data.map((t: { name: string }) => t.name).sort()).toEqual([`In ${folder} 1`, `In ${folder} 2`]);
  });

  it('validates the merged draft on update (ERR_TMPL_008) and refuses a taken name (ERR_TMPL_011)', async () => {
    const created = await createTemplate(app, token(), { name: 'Strict' });
    // Dropping the array variable the stored schema's table reads is an error of the merged draft.
    let res = await app.request('PUT', `/api/templates/${created.id}`, { token: token(), body: { variables: [] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_TMPL_008', relatedInfo: { path: 'schema.sections[0].components[2].props.dataSource' } });
    res = await app.request('PUT', `/api/templates/${created.id}`, { token: token(), body: { outputFormats: ['docx'] } });
    expect(res.body.code).toBe('ERR_TMPL_009');
    await createTemplate(app, token(), { name: 'Taken' });
    res = await app.request('PUT', `/api/templates/${created.id}`, { token: token(), body: { name: 'taken' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ERR_TMPL_011');
    // Renaming to its own name (another case) is not a conflict.
    res = await app.request('PUT', `/api/templates/${created.id}`, { token: token(), body: { name: 'STRICT' } });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('STRICT');
  });

  it('soft-deletes: {success, message}, then 404 everywhere; the name becomes free again', async () => {
    const created = await createTemplate(app, token(), { name: 'Short-lived' });
    const res = await app.request('DELETE', `/api/templates/${created.shortId}`, { token: token() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Template deleted' });
    for (const ref of [created.id, created.shortId, created.slug]) {
      expect((await app.request('GET', `/api/templates/${ref}`, { token: token() })).body.code).toBe('ERR_TMPL_001');
    }
    expect((await app.request('DELETE', `/api/templates/${created.id}`, { token: token() })).status).toBe(404);
    const [row] = await app.services.db.query(`SELECT deleted_at FROM templates WHERE id = $1`, [created.id]);
    expect(row.deleted_at).toBeInstanceOf(Date);
    const again = await createTemplate(app, token(), { name: 'Short-lived' });
    expect(again.slug).toBe('short-lived');
    const entries = await activityTypes(app, projectId);
    expect(entries).toContainEqual({ type: 'template_deleted', data: { template: { id: created.id, name: 'Short-lived' } }, user_id: alice.id });
  });

  it('duplicates: "<name> (copy)", then "(copy 2)"; new id, shortId and slug; unpublished', async () => {
    const source = await createTemplate(app, token(), { name: 'Original' });
    await app.request('POST', `/api/templates/${source.id}/publish`, { token: token(), body: {} });
    const first = await app.request('POST', `/api/templates/${source.slug}/duplicate`, { token: token() });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name: 'Original (copy)', slug: 'original-copy', isPublished: false, latestVersion: null });
    expect(first.body.id).not.toBe(source.id);
    expect(first.body.shortId).not.toBe(source.shortId);
    const original = (await app.request('GET', `/api/templates/${source.id}`, { token: token() })).body;
    expect(first.body.schema).toEqual(original.schema);
    expect(first.body.variables).toEqual(original.variables);
    const second = await app.request('POST', `/api/templates/${source.id}/duplicate`, { token: token() });
    expect(second.body.name).toBe('Original (copy 2)');
    const entries = await activityTypes(app, projectId);
    expect(entries.at(-1)).toMatchObject({ type: 'template_created', data: { duplicatedFrom: { id: source.id, name: 'Original' } } });
  });

  it('bulk-deletes: {deleted, skipped, errors:[{id, reason}]}, one id at a time', async () => {
    const [a, b, gone] = [await createTemplate(app, token()), await createTemplate(app, token()), await createTemplate(app, token())];
    await app.request('DELETE', `/api/templates/${gone.id}`, { token: token() });
    const unknown = '00000000-0000-4000-8000-000000000001';
    const res = await app.request('POST', '/api/templates/bulk-delete', {
      token: token(),
      body: { ids: [a.id, b.shortId, a.slug, gone.id, unknown, 'no-such-template'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      deleted: 2,
      skipped: 2,
      errors: [
        { id: unknown, reason: 'Template not found' },
        { id: 'no-such-template', reason: 'Template not found' },
      ],
    });
    expect((await app.request('GET', `/api/templates/${b.id}`, { token: token() })).status).toBe(404);
    const bad = await app.request('POST', '/api/templates/bulk-delete', { token: token(), body: { ids: [] } });
    expect(bad.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'ids' } });
  });

  it('answers on /api/v1/templates and the legacy /api/templates/attachment alias alike', async () => {
    const created = await app.request('POST', '/api/templates/attachment', { token: token(), body: buildTemplate({ name: 'Via Alias' }) });
    expect(created.status).toBe(201);
    const viaV1 = await app.request('GET', `/api/v1/templates/${created.body.slug}`, { token: token() });
    expect(viaV1.body).toMatchObject({ id: created.body.id, name: 'Via Alias' });
    const put = await app.request('PUT', `/api/templates/attachment/${created.body.id}`, { token: token(), body: { description: 'edited' } });
    expect(put.body.description).toBe('edited');
    const list = await app.request('GET', '/api/templates/attachment?search=via%20alias', { token: token() });
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([created.body.id]);
    expect((await app.request('DELETE', `/api/v1/templates/${created.body.id}`, { token: token() })).body.success).toBe(true);
  });

  it('answers a method the path does not take with 405 ERR_REQ_006 and Allow, an unknown path with 404 ERR_REQ_003', async () => {
    for (const [method, path] of [['PATCH', '/api/templates/some-template'], ['DELETE', '/api/templates']]) {
      const res = await app.request(method, path, { token: token() });
      expect(res.status).toBe(405);
      expect(res.body).toMatchObject({ statusCode: 405, code: 'ERR_REQ_006', path });
      expect(res.headers.get('allow')).not.toContain(method);
    }
    const unknown = await app.request('GET', '/api/templates/bulk-delete/x', { token: token() });
    expect(unknown.body).toMatchObject({ statusCode: 404, code: 'ERR_REQ_003', message: 'Cannot GET /api/templates/bulk-delete/x' });
  });
});
