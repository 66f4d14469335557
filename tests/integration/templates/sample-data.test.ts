import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember } from '../../support/teams';

/**
 * GET and PUT /api/templates/:id/sample-data (docs/templates.md "Checks, automation fields, analytics"): what a
 * template's editors preview with.
 */
describe('sample data kept with a template', () => {
  let app: TestApp;
  let owner: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await signUp(app, { verified: true });
  });
  afterAll(() => app.close());

  async function createTemplate(name: string): Promise<{ id: string }> {
    const res = await app.request('POST', '/api/templates', { token: owner.accessToken, body: { name, outputFormats: ['pdf'], schema: { sections: [{ id: 's', components: [] }] } } });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('starts empty, keeps what a member puts, leaves the definition and its updatedAt alone', async () => {
    const template = await createTemplate('With sample data');
    const before = await app.request('GET', `/api/templates/${template.id}`, { token: owner.accessToken });
    const empty = await app.request('GET', `/api/templates/${template.id}/sample-data`, { token: owner.accessToken });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: {} });
    const data = { customer: 'Ada', lines: [{ qty: 2, price: 9.5 }], when: '2026-11-28' };
    const put = await app.request('PUT', `/api/templates/${template.id}/sample-data`, { token: owner.accessToken, body: { data } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ data });
    expect((await app.request('GET', `/api/templates/${template.id}/sample-data`, { token: owner.accessToken })).body).toEqual({ data });
    const after = await app.request('GET', `/api/templates/${template.id}`, { token: owner.accessToken });
    expect(after.body.updatedAt).toBe(before.body.updatedAt);
    expect(after.body.schema).toEqual(before.body.schema);
    expect(after.body).not.toHaveProperty('sampleData');
  });

  it('is started from an example with its sample data', async () => {
    const started = await app.request('POST', '/api/templates/examples/invoice', { token: owner.accessToken });
    expect(started.status).toBe(201);
    const kept = await app.request('GET', `/api/templates/${started.body.templateId}/sample-data`, { token: owner.accessToken });
    expect(kept.body.data).toEqual(started.body.sampleData);
    expect(kept.body.data.number).toBe('INV-2026-014');
  });

  it('refuses what is not an object, more than 256 KB, a viewer, and another project', async () => {
    const template = await createTemplate('Guarded sample data');
    for (const body of [{ data: [1, 2] }, { data: 'text' }, {}, { data: {}, extra: 1 }]) {
      const res = await app.request('PUT', `/api/templates/${template.id}/sample-data`, { token: owner.accessToken, body });
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'data' in body ? 'ERR_VALID_001' : 'ERR_VALID_005' });
    }
    const big = await app.request('PUT', `/api/templates/${template.id}/sample-data`, { token: owner.accessToken, body: { data: { text: 'x'.repeat(300 * 1024) } } });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'ERR_REQ_002', relatedInfo: { limit: 262144 } });

    const teams = await app.request('GET', '/api/teams', { token: owner.accessToken });
    const teamId = teams.body.data[0].id as string;
    const viewer = await addMember(app, owner, teamId, 'viewer');
    const asViewer = { token: viewer.accessToken, headers: { 'X-Team-Id': teamId } };
    expect((await app.request('GET', `/api/templates/${template.id}/sample-data`, asViewer)).status).toBe(200);
    const refused = await app.request('PUT', `/api/templates/${template.id}/sample-data`, { ...asViewer, body: { data: { a: 1 } } });
    expect(refused.status).toBe(403);

    const stranger = await signUp(app, { verified: true });
    const other = await app.request('PUT', `/api/templates/${template.id}/sample-data`, { token: stranger.accessToken, body: { data: { a: 1 } } });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('ERR_TMPL_001');
    expect((await app.request('GET', `/api/templates/${template.id}/sample-data`, { token: owner.accessToken })).body).toEqual({ data: {} });
  });
});
