import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { addTeamProject, createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { buildTemplate, createTemplate, publish } from '../../support/templates';

/**
 * Who may do what (spec: "JWT; API key is accepted for read operations"; contract §2 roles), and
 * project isolation: another project's template is 404 ERR_TMPL_001 on every endpoint.
 */
describe('Templates: access and isolation', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp();
    [alice, bob] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
  });
  afterAll(() => app.close());

  /** Read endpoints (each answers 200 for an allowed caller on a published template). */
  const reads = (ref: string): Array<[string, string, unknown?]> => [
    ['GET', '/api/templates'],
    ['GET', `/api/templates/${ref}`],
    ['GET', `/api/v1/templates/${ref}`],
    ['GET', `/api/templates/attachment/${ref}`],
    ['GET', `/api/templates/${ref}/versions`],
    ['GET', `/api/templates/${ref}/versions/1`],
    ['GET', `/api/templates/${ref}/export`],
    ['GET', `/api/templates/${ref}/analytics`],
    ['GET', `/api/templates/${ref}/automation-fields`],
    ['POST', '/api/templates/validate-schema', { templateType: 'pdf', schema: buildTemplate().schema }],
    ['POST', '/api/templates/validate-variables', { variables: [] }],
  ];

  /** Every endpoint that changes stored templates, with a body that would succeed for a member. */
  const writes = (ref: string): Array<[string, string, unknown?]> => [
    ['POST', '/api/templates', buildTemplate()],
    ['POST', '/api/v1/templates', buildTemplate()],
    ['PUT', `/api/templates/${ref}`, { description: 'changed' }],
    ['POST', `/api/templates/${ref}/publish`, {}],
    ['POST', `/api/templates/${ref}/versions/1/restore`, {}],
    ['POST', `/api/templates/${ref}/duplicate`],
    ['POST', '/api/templates/bulk-delete', { ids: [ref] }],
    ['DELETE', `/api/templates/${ref}`],
    ['DELETE', `/api/templates/attachment/${ref}`],
  ];

  it('needs a credential: 401 ERR_AUTH_003 without one', async () => {
    for (const [method, path, body] of [...reads('x'), ...writes('x'), ['POST', '/api/templates/import'] as [string, string]]) {
      const res = await app.request(method, path, { body });
      expect([path, res.status, res.body.code]).toEqual([path, 401, 'ERR_AUTH_003']);
    }
  });

  it('lets an API key with read_templates read, and refuses it every write with 403 ERR_AUTH_005', async () => {
    const t = await createTemplate(app, alice.accessToken);
    await publish(app, alice.accessToken, t.id);
    const key = await createKey(app, alice.accessToken, { name: 'reader', permissions: { read_templates: true, generate_documents: true } });
    for (const [method, path, body] of reads(t.id)) {
      const res = await app.request(method, path, { token: key.plainKey, body });
      expect([method, path, res.status]).toEqual([method, path, 200]);
    }
    const previewed = await fetch(`${app.url}/api/templates/${t.id}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.plainKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ variables: { customer: 'Key holder' } }),
    });
    expect(previewed.status).toBe(200);
    expect(previewed.headers.get('content-type')).toBe('application/pdf');
    for (const [method, path, body] of writes(t.id)) {
      const res = await app.request(method, path, { token: key.plainKey, body });
      expect([path, res.status, res.body.code]).toEqual([path, 403, 'ERR_AUTH_005']);
      // The spec: the permission name `manage_templates` appears in permission errors. No key flag grants it.
      expect(res.body.relatedInfo).toEqual({ required: 'manage_templates', granted: 'read_templates,generate_documents' });
    }
    const form = new FormData();
    form.append('file', new Blob([JSON.stringify(buildTemplate())]), 't.json');
    const imported = await fetch(`${app.url}/api/templates/import`, { method: 'POST', headers: { authorization: `Bearer ${key.plainKey}` }, body: form });
    expect(imported.status).toBe(403);
    expect(await imported.json()).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'manage_templates' } });
    // No key can be given the flag (docs/identity.md): only a member's JWT writes templates.
    const claims = await app.request('POST', '/api/api-keys', { token: alice.accessToken, body: { name: 'claims', permissions: { manage_templates: true } } });
    expect([claims.status, claims.body.code]).toEqual([400, 'ERR_VALID_001']);
    // Nothing changed.
    const after = (await app.request('GET', `/api/templates/${t.id}`, { token: alice.accessToken })).body;
    expect(after).toMatchObject({ latestVersion: 1, description: buildTemplate().description });
  });

  it('refuses an API key without read_templates with 403 ERR_AUTH_005 {required: read_templates}', async () => {
    const t = await createTemplate(app, alice.accessToken);
    const key = await createKey(app, alice.accessToken, { name: 'generator', permissions: { generate_documents: true } });
    const res = await app.request('GET', `/api/templates/${t.id}`, { token: key.plainKey });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'read_templates', granted: 'generate_documents' } });
  });

  it('lets a viewer read but not write; a member writes (contract §2)', async () => {
    const [viewer, member] = await Promise.all([signUp(app), signUp(app)]);
    const teamId = await addTeamProject(app.services.db, alice.id, [
      { userId: viewer.id, role: 'viewer' },
      { userId: member.id, role: 'member' },
    ]);
    const inTeam = { 'X-Team-Id': teamId };
    const created = await app.request('POST', '/api/templates', { token: member.accessToken, headers: inTeam, body: buildTemplate({ name: 'Team Template' }) });
    expect(created.status).toBe(201);
    const ref = created.body.id;
    await app.request('POST', `/api/templates/${ref}/publish`, { token: member.accessToken, headers: inTeam, body: {} });
    for (const [method, path, body] of reads(ref)) {
      const res = await app.request(method, path, { token: viewer.accessToken, headers: inTeam, body });
      expect([path, res.status]).toEqual([path, 200]);
    }
    for (const [method, path, body] of writes(ref)) {
      const res = await app.request(method, path, { token: viewer.accessToken, headers: inTeam, body });
      expect([path, res.status, res.body.code]).toEqual([path, 403, 'ERR_AUTH_005']);
      expect(res.body.relatedInfo).toEqual({ required: 'member', granted: 'viewer' });
    }
    // The team's template is not in the member's personal project.
    expect((await app.request('GET', `/api/templates/${ref}`, { token: member.accessToken })).body.code).toBe('ERR_TMPL_001');
    const edited = await app.request('PUT', `/api/templates/${ref}`, { token: member.accessToken, headers: inTeam, body: { description: 'by member' } });
    expect(edited.status).toBe(200);
  });

  it('answers an unknown template under /api/templates/attachment/* with 404 ERR_TMPL_003, a known one as /api/templates does', async () => {
    const t = await createTemplate(app, alice.accessToken, { name: 'Attachment Known' });
    await publish(app, alice.accessToken, t.id);
    const unknown = ['no-such-template', 'etpl_nosuchtemplate', randomUUID(), "x' OR '1'='1", '%2e%2e%2fetc'];
    const routes = (ref: string): Array<[string, string, unknown?]> => [
      ['GET', `/api/templates/attachment/${ref}`],
      ['PUT', `/api/templates/attachment/${ref}`, { description: 'changed' }],
      ['DELETE', `/api/templates/attachment/${ref}`],
      ['POST', `/api/templates/attachment/${ref}/publish`, {}],
      ['GET', `/api/templates/attachment/${ref}/export`],
      ['GET', `/api/templates/attachment/${ref}/versions`],
      ['GET', `/api/templates/attachment/${ref}/versions/1`],
      ['POST', `/api/templates/attachment/${ref}/versions/1/restore`, {}],
      ['POST', `/api/templates/attachment/${ref}/preview`, {}],
    ];
    for (const ref of unknown) {
      for (const [method, path, body] of routes(ref)) {
        const res = await app.request(method, path, { token: alice.accessToken, body });
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'ERR_TMPL_003']);
        expect(res.body).toMatchObject({ statusCode: 404, message: 'Attachment template not found', path: expect.stringContaining('/api/templates/attachment/') });
      }
    }
    // The same unknown reference outside the alias keeps ERR_TMPL_001.
    for (const prefix of ['/api/templates', '/api/v1/templates']) {
      const res = await app.request('GET', `${prefix}/no-such-template`, { token: alice.accessToken });
      expect([prefix, res.status, res.body.code]).toEqual([prefix, 404, 'ERR_TMPL_001']);
    }
    // A known template answers under the alias; its other errors keep their codes.
    for (const ref of [t.id, t.shortId, t.slug]) {
      const res = await app.request('GET', `/api/templates/attachment/${ref}`, { token: alice.accessToken });
      expect([ref, res.status, res.body.id]).toEqual([ref, 200, t.id]);
    }
    const noVersion = await app.request('GET', `/api/templates/attachment/${t.id}/versions/9`, { token: alice.accessToken });
    expect([noVersion.status, noVersion.body.code]).toEqual([404, 'ERR_TMPL_013']);
  });

  it('isolates projects: Bob gets 404 ERR_TMPL_001 for Alice\'s template on every endpoint, by any reference', async () => {
    const t = await createTemplate(app, alice.accessToken, { name: 'Private Plans' });
    const v1 = await publish(app, alice.accessToken, t.id);
    const key = await createKey(app, bob.accessToken, { name: 'bob reader', permissions: { read_templates: true } });
    for (const ref of [t.id, t.shortId, t.slug]) {
      for (const [method, path, body] of [...reads(ref), ...writes(ref), ['POST', `/api/templates/${ref}/preview`, {}] as [string, string, unknown]]) {
        if (!path.includes(ref)) continue;
        const res = await app.request(method, path, { token: bob.accessToken, body });
        // The legacy alias has the spec's own code for it: ERR_TMPL_003 "attachment template not found".
        const code = path.startsWith('/api/templates/attachment/') ? 'ERR_TMPL_003' : 'ERR_TMPL_001';
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, code]);
      }
      const viaKey = await app.request('GET', `/api/templates/${ref}`, { token: key.plainKey });
      expect(viaKey.body.code).toBe('ERR_TMPL_001');
    }
    // Bob's own template cannot reach Alice's version by id either: unknown to him, not "another template's".
    const own = await createTemplate(app, bob.accessToken);
    const res = await app.request('GET', `/api/templates/${own.id}/versions/${v1.id}`, { token: bob.accessToken });
    expect([res.status, res.body.code]).toEqual([404, 'ERR_TMPL_013']);
    // Bulk delete treats her ids as unknown; Bob's list does not show her template; nothing of hers changed.
    const bulk = await app.request('POST', '/api/templates/bulk-delete', { token: bob.accessToken, body: { ids: [t.id, randomUUID()] } });
    expect(bulk.body).toMatchObject({ deleted: 0, errors: [{ id: t.id, reason: 'Template not found' }, expect.anything()] });
    const list = await app.request('GET', '/api/templates?search=Private', { token: bob.accessToken });
    expect(list.body.meta.total).toBe(0);
    const mine = await app.request('GET', `/api/templates/${t.id}`, { token: alice.accessToken });
    expect(mine.body).toMatchObject({ name: 'Private Plans', latestVersion: 1 });
    // Bob may use the same name in his own project.
    expect((await createTemplate(app, bob.accessToken, { name: 'Private Plans' })).slug).toBe('private-plans');
  });
});
