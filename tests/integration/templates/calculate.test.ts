import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember } from '../../support/teams';

/** POST /api/templates/:id/calculate (docs/templates.md "Calculated variables"): what the designer shows beside each calculated variable. */
describe('calculated values of a draft with sample data', () => {
  let app: TestApp;
  let owner: SignedUpUser;
  let templateId: string;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await signUp(app, { verified: true });
    const created = await app.request('POST', '/api/templates', {
      token: owner.accessToken,
      body: {
        name: 'Invoice with totals',
        outputFormats: ['pdf'],
        schema: { sections: [{ id: 'main', components: [{ id: 't', type: 'text', props: { text: '{{total}}' } }] }] },
        variables: [
          { name: 'items', type: 'array', required: true, items: { type: 'object', properties: [{ name: 'qty', type: 'number', required: true }, { name: 'price', type: 'number', required: true }] } },
          { name: 'discount', type: 'number', required: false, defaultValue: 0 },
        ],
        constants: { vatRate: 0.2 },
        calculatedVariables: [
          { name: 'subtotal', expression: '$sum(items.(qty * price)) - discount' },
          { name: 'total', expression: 'subtotal * (1 + vatRate)' },
          { name: 'nothing', expression: 'items[qty > 100].price' },
        ],
      },
    });
    expect(created.status).toBe(201);
    templateId = created.body.id;
  });
  afterAll(() => app.close());

  it('answers each calculated variable in order, each seeing the ones before it, defaults and constants applied; a viewer may ask', async () => {
    const res = await app.request('POST', `/api/templates/${templateId}/calculate`, { token: owner.accessToken, body: { variables: { items: [{ qty: 2, price: 10 }, { qty: '1', price: 5 }] } } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ values: { subtotal: 25, total: 30, nothing: null } });
    expect(Object.keys(res.body.values)).toEqual(['subtotal', 'total', 'nothing']);

    const teams = await app.request('GET', '/api/teams', { token: owner.accessToken });
    const viewer = await addMember(app, owner, teams.body.data[0].id, 'viewer');
    const asViewer = await app.request('POST', `/api/templates/${templateId}/calculate`, {
      token: viewer.accessToken,
      headers: { 'X-Team-Id': teams.body.data[0].id },
      body: { variables: { items: [{ qty: 1, price: 3 }], discount: 1 } },
    });
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.values).toMatchObject({ subtotal: 2 });
  });

  it('says what is wrong with the sample data or an expression, with the codes a render answers', async () => {
    const missing = await app.request('POST', `/api/templates/${templateId}/calculate`, { token: owner.accessToken, body: { variables: {} } });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'items' } });
    const wrong = await app.request('POST', `/api/templates/${templateId}/calculate`, { token: owner.accessToken, body: { variables: { items: 'many' } } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ERR_VALID_002');
    const notObject = await app.request('POST', `/api/templates/${templateId}/calculate`, { token: owner.accessToken, body: { variables: [1, 2] } });
    expect(notObject.status).toBe(400);
    expect(notObject.body.code).toMatch(/^ERR_VALID_/);

    const failing = await app.request('POST', '/api/templates', {
      token: owner.accessToken,
      body: { name: 'Failing sum', outputFormats: ['pdf'], schema: { sections: [{ id: 'main', components: [] }] }, variables: [], calculatedVariables: [{ name: 'bad', expression: '$sum("a")' }] },
    });
    const res = await app.request('POST', `/api/templates/${failing.body.id}/calculate`, { token: owner.accessToken, body: {} });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_VALID_002', relatedInfo: { field: 'bad' } });
  });

  it("answers another project's template as not found", async () => {
    const stranger = await signUp(app, { verified: true });
    const res = await app.request('POST', `/api/templates/${templateId}/calculate`, { token: stranger.accessToken, body: { variables: {} } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('ERR_TMPL_001');
  });
});
