import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { activityTypes, buildTemplate, createTemplate, personalProjectId, publish } from '../../support/templates';

/** Export files and importing them back (spec: GET …/export, POST /api/templates/import). */
describe('Templates: export and import', () => {
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

  /** Posts a multipart form as a browser would; `file` is text (or omitted), fields are strings. */
  async function upload(path: string, file: string | undefined, fields: Record<string, string> = {}, filename = 'template.json') {
    const form = new FormData();
    if (file !== undefined) form.append('file', new Blob([file], { type: 'application/json' }), filename);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${token()}` }, body: form });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function exportFile(ref: string, prefix = '/api/templates') {
    const res = await fetch(`${app.url}${prefix}/${ref}/export`, { headers: { authorization: `Bearer ${token()}` } });
    return { res, text: await res.text() };
  }

  it('exports the draft as a JSON download named <slug>.json with the full definition', async () => {
    const body = buildTemplate({ name: 'Export Me', description: 'exported', outputFormats: ['excel', 'pdf'] });
    const t = await createTemplate(app, token(), body);
    const { res, text } = await exportFile(t.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="export-me.json"');
    const file = JSON.parse(text);
    expect(file).toEqual({
      formatVersion: 1,
      exportedAt: expect.any(String),
      name: 'Export Me',
      description: 'exported',
      outputFormats: ['excel', 'pdf'],
      schema: body.schema,
      variables: body.variables,
      constants: body.constants,
      calculatedVariables: body.calculatedVariables,
    });
    // The same file under the legacy alias and /api/v1.
    for (const prefix of ['/api/templates/attachment', '/api/v1/templates']) {
      const again = await exportFile(t.shortId, prefix);
      expect(again.res.status).toBe(200);
      expect(JSON.parse(again.text).schema).toEqual(body.schema);
    }
  });

  it('imports an exported file as a new unpublished template: 201 {status: created, templateId, message}', async () => {
    const t = await createTemplate(app, token(), { name: 'Round Trip' });
    await publish(app, token(), t.id);
    const { text } = await exportFile(t.id);
    await app.request('DELETE', `/api/templates/${t.id}`, { token: token() });
    const res = await upload('/api/templates/import', text);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'created', templateId: expect.any(String), message: 'Template imported' });
    expect(res.body.templateId).not.toBe(t.id);
    const imported = (await app.request('GET', `/api/templates/${res.body.templateId}`, { token: token() })).body;
    const file = JSON.parse(text);
    expect(imported).toMatchObject({ name: 'Round Trip', slug: 'round-trip', isPublished: false, latestVersion: null, schema: file.schema, variables: file.variables });
    const entries = await activityTypes(app, projectId, 'template_created');
    expect(entries.at(-1)).toMatchObject({ data: { template: { id: res.body.templateId, name: 'Round Trip' }, source: 'import' } });
  });

  it('handles a name already taken: rename (default), skip, overwrite', async () => {
    const existing = await createTemplate(app, token(), { name: 'Taken Name' });
    await publish(app, token(), existing.id);
    const replacement = buildTemplate({
      name: 'taken name',
      description: 'from the file',
      outputFormats: ['pdf'],
      schema: { pageSize: 'Letter', sections: [{ id: 's', components: [{ id: 'h', type: 'heading', props: { text: 'Imported', level: 2 } }] }] },
      variables: [],
      calculatedVariables: [],
    });
    const text = JSON.stringify(replacement);

    const renamed = await upload('/api/templates/import', text);
    expect(renamed.status).toBe(201);
    expect(renamed.body).toMatchObject({ status: 'created', message: "Template imported as 'taken name (2)'" });
    expect((await app.request('GET', `/api/templates/${renamed.body.templateId}`, { token: token() })).body.name).toBe('taken name (2)');
    const renamedAgain = await upload('/api/templates/import', text, { duplicateHandling: 'rename' });
    expect(renamedAgain.body.message).toBe("Template imported as 'taken name (3)'");

    const skipped = await upload('/api/templates/import', text, { duplicateHandling: 'skip' });
    expect(skipped.status).toBe(200);
    expect(skipped.body).toEqual({ status: 'skipped', templateId: existing.id, message: "A template named 'Taken Name' exists; nothing was imported" });

    const overwritten = await upload('/api/templates/import', text, { duplicateHandling: 'overwrite' });
    expect(overwritten.status).toBe(200);
    expect(overwritten.body).toMatchObject({ status: 'overwritten', templateId: existing.id });
    const after = (await app.request('GET', `/api/templates/${existing.id}`, { token: token() })).body;
    // The draft is replaced; name, slug and the published version stay until the next publish.
    expect(after).toMatchObject({ name: 'Taken Name', description: 'from the file', outputFormats: ['pdf'], schema: replacement.schema, latestVersion: 1 });
    expect((await publish(app, token(), existing.id)).version).toBe(2);

    const bad = await upload('/api/templates/import', text, { duplicateHandling: 'merge' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'duplicateHandling' } });
  });

  it('accepts files without formatVersion or outputFormats (PDF) and ignores foreign ids', async () => {
    const { outputFormats: _f, ...rest } = buildTemplate({ name: 'Hand Written' });
    const res = await upload('/api/templates/attachment/import', JSON.stringify({ ...rest, id: 'abc', slug: 'elsewhere', shortId: 'etpl_x' }));
    expect(res.status).toBe(201);
    const t = (await app.request('GET', `/api/templates/${res.body.templateId}`, { token: token() })).body;
    expect(t).toMatchObject({ name: 'Hand Written', slug: 'hand-written', outputFormats: ['pdf'] });
  });

  it('refuses a request without a file: 400 ERR_TMPL_015', async () => {
    const withoutFile = await upload('/api/templates/import', undefined, { duplicateHandling: 'skip' });
    expect(withoutFile.status).toBe(400);
    expect(withoutFile.body).toMatchObject({ code: 'ERR_TMPL_015', relatedInfo: { field: 'file' } });
    const json = await app.request('POST', '/api/templates/import', { token: token(), body: buildTemplate() });
    expect(json.body.code).toBe('ERR_TMPL_015');
  });

  it('refuses a file that is not JSON: 400 ERR_TMPL_016', async () => {
    for (const text of ['name: not json', '{"name": "cut off"', '']) {
      const res = await upload('/api/templates/import', text);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ERR_TMPL_016');
    }
  });

  it('refuses a file over the 10 MB upload limit with 413 ERR_REQ_002', async () => {
    const res = await upload('/api/templates/import', `{"name": "big", "padding": "${'x'.repeat(10 * 1024 * 1024)}"}`);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ statusCode: 413, code: 'ERR_REQ_002' });
  });

  it('refuses JSON that is not a valid template: 400 ERR_TMPL_010 listing every problem', async () => {
    const cases: Array<[unknown, string]> = [
      [[1, 2, 3], ''],
      [{ schema: buildTemplate().schema }, 'name'],
      [{ ...buildTemplate(), formatVersion: 7 }, 'formatVersion'],
      [{ ...buildTemplate(), outputFormats: ['word'] }, 'outputFormats.0'],
      [buildTemplate({ schema: { pageSize: 'A4', sections: [{ id: 's', components: [{ id: 'x', type: 'hologram', props: {} }] }] } }), 'schema.sections[0].components[0].type'],
    ];
    for (const [file, path] of cases) {
      const res = await upload('/api/templates/import', JSON.stringify(file));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ERR_TMPL_010', relatedInfo: { path } });
      expect(res.body.relatedInfo.errors.length).toBeGreaterThanOrEqual(1);
    }
    const names = await app.services.db.query(`SELECT name FROM templates WHERE project_id = $1 AND name = 'x'`, [projectId]);
    expect(names).toEqual([]);
  });
});
