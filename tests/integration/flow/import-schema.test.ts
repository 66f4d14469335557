import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';

/**
 * Templates are inserted as rows (the templates domain owns its API); the gate side only reads
 * them through the templates domain's lookup (id, shortId `etpl_…` or slug).
 */
async function insertTemplate(app: TestApp, projectId: string, variables: unknown[], slug = `tpl-${randomUUID().slice(0, 8)}`) {
  const id = randomUUID();
  const shortId = `etpl_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const draft = { schema: { pageSize: 'A4', sections: [] }, variables };
  await app.services.db.query(
    `INSERT INTO templates (id, project_id, short_id, slug, name, output_formats, draft) VALUES ($1, $2, $3, $4, $5, '{pdf}', $6)`,
    [id, projectId, shortId, slug, slug, JSON.stringify(draft)],
  );
  return { id, shortId, slug };
}

describe('Flow import-schema and render templates', () => {
  let app: TestApp;
  let ws: FlowWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app, 'growth');
  });
  afterAll(() => app.close());

  it('copies a template’s variables into a new schema version, by id, shortId or slug', async () => {
    const tpl = await insertTemplate(app, ws.projectId, [
      { name: 'customer', type: 'string', required: true },
      { name: 'total', type: 'number', required: false, description: 'Sum' },
      { name: 'issued', type: 'date', required: true },
      { name: 'items', type: 'array', required: true, items: { type: 'object', properties: [{ name: 'sku', type: 'string', required: true }, { name: 'qty', type: 'integer' }] } },
    ]);
    const gate = await createGate(app, ws.key, { name: 'Imported', businessRules: [{ id: 'r', expression: 'true', message: 'm' }] });
    let version = 1;
    for (const ref of [tpl.id, tpl.shortId, tpl.slug]) {
      const res = await app.request('POST', `/api/flow/gates/${gate.id}/import-schema`, { token: ws.key, body: { templateId: ref } });
      expect(res.status).toBe(200);
      version += 1;
      expect(res.body.schemaVersion).toBe(version);
      expect(res.body.businessRules).toHaveLength(1);
      expect(res.body.schema).toEqual({
        type: 'object',
        properties: {
          customer: { type: 'string', required: true },
          total: { type: 'number', description: 'Sum' },
          issued: { type: 'string', required: true, description: 'date (ISO 8601)' },
          items: { type: 'array', required: true, items: { type: 'object', properties: { sku: { type: 'string', required: true }, qty: { type: 'integer' } } } },
        },
      });
    }
    const versions = await app.request('GET', `/api/flow/gates/${gate.id}/versions`, { token: ws.key });
    expect(versions.body.data[1]).toMatchObject({ source: 'import', sourceTemplateId: tpl.id });
    const check = await app.request('POST', `/api/flow/gates/${gate.id}/validate`, { token: ws.key, body: { customer: 'Ada', issued: '2024-01-01', items: [{ qty: 1 }] } });
    expect(check.status).toBe(422);
    expect(check.body.error.details).toEqual([expect.objectContaining({ field: 'items[0].sku', code: 'REQUIRED' })]);
  });

  it('answers FLOW.TEMPLATE_NOT_FOUND and FLOW.TEMPLATE_HAS_NO_VARIABLES', async () => {
    const gate = await createGate(app, ws.key, { name: 'Import errors' });
    const missing = await app.request('POST', `/api/flow/gates/${gate.id}/import-schema`, { token: ws.key, body: { templateId: 'nope' } });
    expect([missing.status, missing.body.code]).toEqual([404, 'FLOW.TEMPLATE_NOT_FOUND']);
    const other = await flowWorkspace(app);
    const foreign = await insertTemplate(app, other.projectId, [{ name: 'a', type: 'string', required: true }]);
    expect((await app.request('POST', `/api/flow/gates/${gate.id}/import-schema`, { token: ws.key, body: { templateId: foreign.id } })).body.code).toBe('FLOW.TEMPLATE_NOT_FOUND');
    const empty = await insertTemplate(app, ws.projectId, []);
    const none = await app.request('POST', `/api/flow/gates/${gate.id}/import-schema`, { token: ws.key, body: { templateId: empty.slug } });
    expect([none.status, none.body.code]).toEqual([422, 'FLOW.TEMPLATE_HAS_NO_VARIABLES']);
    expect((await app.request('POST', `/api/flow/gates/${gate.id}/import-schema`, { token: ws.key, body: {} })).status).toBe(400);
  });

  it('a native-render gate needs a template of its workspace and stores its id', async () => {
    const tpl = await insertTemplate(app, ws.projectId, [{ name: 'a', type: 'string', required: true }]);
    const gate = await createGate(app, ws.key, { name: 'Rendered', renderMode: 'native', renderTemplateId: tpl.shortId, renderConfig: { format: 'pdf' } });
    expect(gate).toMatchObject({ renderMode: 'native', renderTemplateId: tpl.id });
    const other = await flowWorkspace(app);
    const foreign = await insertTemplate(app, other.projectId, []);
    const res = await app.request('PUT', `/api/flow/gates/${gate.id}`, { token: ws.key, body: { renderTemplateId: foreign.id } });
    expect([res.status, res.body.code]).toEqual([404, 'FLOW.TEMPLATE_NOT_FOUND']);
  });
});
