import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { pdfInfo, pdfText } from '../../support/rendering-pdf';
import { buildTemplate } from '../../support/templates';

/**
 * One shape for a template's array fields in templates and Flow (docs/templates.md): a variable's
 * `items.properties` may be written as Flow's ObjectSchema map (`{"qty": {"type": "number"}}`) and
 * is stored, checked, rendered and imported as the field list; a schema without `pageSize` is A4.
 */
describe('Templates: items.properties as a map, pageSize defaults to A4', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  beforeAll(async () => {
    // Previews render on the render task queue: the in-process worker serves it.
    app = await startTestApp();
    ws = await flowWorkspace(app, 'growth');
  });
  afterAll(() => app.close());

  const asUser = (method: string, path: string, body?: unknown) => app.request(method, path, { token: ws.user.accessToken, body });

  /** The test letter without pageSize, its `items` fields written as a map. */
  function mapFormBody(properties: unknown = { label: { type: 'string', required: true }, amount: { type: 'number', description: 'Net' } }) {
    const base = buildTemplate();
    const { pageSize: _dropped, ...schema } = base.schema as Record<string, unknown>;
    const variables = (base.variables as Array<Record<string, unknown>>).map((v) =>
      v.name === 'items' ? { ...v, items: { type: 'object', properties } } : v,
    );
    return { ...base, schema, variables };
  }

  async function preview(id: string, format: 'pdf' | 'excel'): Promise<Buffer> {
    const res = await fetch(`${app.url}/api/templates/${id}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ format, variables: { customer: 'Ada', items: [{ label: 'Analytical engine', amount: 1500.5 }] } }),
    });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  it('creates a template from the map form and without pageSize, stores the list form and A4, and renders it on A4', async () => {
    const created = await asUser('POST', '/api/templates', mapFormBody());
    expect(created.status).toBe(201);
    const read = await asUser('GET', `/api/templates/${created.body.id}`);
    expect(read.body.schema.pageSize).toBe('A4');
    expect(read.body.variables.find((v: any) => v.name === 'items').items).toEqual({
      type: 'object',
      properties: [
        { name: 'label', type: 'string', required: true },
        { name: 'amount', type: 'number', description: 'Net' },
      ],
    });
    const [row] = await app.services.db.query(`SELECT draft FROM templates WHERE id = $1`, [created.body.id]);
    expect(row.draft.schema.pageSize).toBe('A4');
    expect(Array.isArray(row.draft.variables[2].items.properties)).toBe(true);

    const pdf = await preview(created.body.id, 'pdf');
    expect((await pdfInfo(pdf)).pageSize).toMatch(/\(A4\)/);
    expect(await pdfText(pdf)).toContain('Analytical engine');
  });

  it('an edit with the map form is stored as the list too', async () => {
    const created = await asUser('POST', '/api/templates', buildTemplate());
    const edited = await asUser('PUT', `/api/templates/${created.body.id}`, { variables: mapFormBody({ label: { type: 'string' }, amount: { type: 'integer' } }).variables });
    expect(edited.status).toBe(200);
    const read = await asUser('GET', `/api/templates/${created.body.id}`);
    expect(read.body.variables[2].items.properties).toEqual([
      expect.objectContaining({ name: 'label', type: 'string' }),
      expect.objectContaining({ name: 'amount', type: 'integer' }),
    ]);
  });

  it('validate-variables and validate-schema take the map form and check columns against it', async () => {
    const { variables, constants, calculatedVariables, schema } = mapFormBody();
    const vars = await asUser('POST', '/api/templates/validate-variables', { variables, constants, calculatedVariables });
    expect([vars.status, vars.body]).toEqual([200, { valid: true, errors: [], warnings: [] }]);
    const checked = await asUser('POST', '/api/templates/validate-schema', { templateType: 'pdf', schema, variables, constants, calculatedVariables });
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({ valid: true, errors: [] });
    expect(checked.body.warnings.filter((w: any) => w.path.includes('columns'))).toEqual([]);
    // A column reading a field the map does not declare is pointed out, as with the list form.
    const labelOnly = mapFormBody({ label: { type: 'string' } });
    const warned = await asUser('POST', '/api/templates/validate-schema', {
      templateType: 'pdf',
      schema: labelOnly.schema,
      variables: labelOnly.variables,
      constants,
      calculatedVariables,
    });
    expect(warned.status).toBe(200);
    expect(warned.body.warnings).toContainEqual({ path: 'sections[0].components[2].props.columns[1].field', message: expect.stringContaining("'amount'") });
  });

  it('refuses a map whose entries are not fields, with the path of the problem (400 ERR_TMPL_008)', async () => {
    for (const properties of [
      { qty: 'number' },
      { 'not a name': { type: 'string' } },
      { qty: { type: 'decimal' } },
      { qty: { type: 'number', min: 1 } },
      { qty: { type: 'number', name: 'other' } },
    ]) {
      const res = await asUser('POST', '/api/templates', mapFormBody(properties));
      expect([res.status, res.body.code]).toEqual([400, 'ERR_TMPL_008']);
      expect(res.body.relatedInfo.path).toMatch(/^variables\[2\]\.items\.properties(\[0\]|\.qty)/);
    }
    const badPage = await asUser('POST', '/api/templates', { ...buildTemplate(), schema: { ...(buildTemplate().schema as object), pageSize: 'B7' } });
    expect([badPage.status, badPage.body.code, badPage.body.relatedInfo.path]).toEqual([400, 'ERR_TMPL_008', 'schema.pageSize']);
  });

  it("import-schema turns the template's fields into the gate's map, whichever form they were written in", async () => {
    const created = await asUser('POST', '/api/templates', mapFormBody());
    const gate = await createGate(app, ws.key, { name: 'From a map-form template' });
    const res = await app.request('POST', `/api/flow/gates/${gate.id}/import-schema`, { token: ws.key, body: { templateId: created.body.id } });
    expect(res.status).toBe(200);
    expect(res.body.schema.properties.items).toEqual({
      type: 'array',
      items: { type: 'object', properties: { label: { type: 'string', required: true }, amount: { type: 'number', description: 'Net' } } },
    });
  });
});
