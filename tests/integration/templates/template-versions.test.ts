import { randomUUID } from 'node:crypto';
import { findTemplate, loadPublishedVersion } from '../../../db/templates/template-lookup';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { activityTypes, createTemplate, personalProjectId, publish } from '../../support/templates';

/** Publish, versions, a version's state, restore (spec, "Versioning" §2), and the lookups generation uses. */
describe('Templates: publishing and versions', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let projectId: string;
  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    alice = await signUp(app, { overrides: { name: 'Alice Publisher' } });
    projectId = await personalProjectId(app, alice.id);
  });
  afterAll(() => app.close());

  const token = () => alice.accessToken;
  const rename = (ref: string, text: string) =>
    app.request('PUT', `/api/templates/${ref}`, { token: token(), body: { schema: { pageSize: 'A4', sections: [{ id: 'main', components: [{ id: 't', type: 'text', props: { text } }] }] }, variables: [], calculatedVariables: [] } });

  it('publishes the draft as versions 1, 2, 3… with {id, version, publishedAt}', async () => {
    const t = await createTemplate(app, token());
    const first = await app.request('POST', `/api/templates/${t.id}/publish`, { token: token(), body: { releaseNotes: 'First cut' } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), templateId: t.id, version: 1, publishedAt: expect.any(String) });
    const after = (await app.request('GET', `/api/templates/${t.id}`, { token: token() })).body;
    expect(after).toMatchObject({ isPublished: true, latestVersion: 1, publishedAt: first.body.publishedAt });
    expect((await rename(t.id, 'second')).status).toBe(200);
    expect((await publish(app, token(), t.shortId)).version).toBe(2);
    expect((await rename(t.id, 'third')).status).toBe(200);
    expect((await publish(app, token(), t.slug)).version).toBe(3);
    const entries = (await activityTypes(app, projectId, 'template_published')).filter((e) => e.data.template.id === t.id);
    expect(entries.map((e) => e.data.version)).toEqual([1, 2, 3]);
  });

  it('refuses to publish a draft equal to the latest version: 409 ERR_TMPL_020', async () => {
    const t = await createTemplate(app, token());
    await publish(app, token(), t.id);
    const res = await app.request('POST', `/api/templates/${t.id}/publish`, { token: token(), body: {} });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'ERR_TMPL_020', relatedInfo: { latestVersion: 1 } });
    // A metadata-only edit is not a new definition either; a changed output format is.
    await app.request('PUT', `/api/templates/${t.id}`, { token: token(), body: { description: 'only words' } });
    expect((await app.request('POST', `/api/templates/${t.id}/publish`, { token: token() })).body.code).toBe('ERR_TMPL_020');
    await app.request('PUT', `/api/templates/${t.id}`, { token: token(), body: { outputFormats: ['pdf'] } });
    expect((await publish(app, token(), t.id)).version).toBe(2);
  });

  it('serialises concurrent publishes of one draft: one version, the other finds nothing new', async () => {
    const t = await createTemplate(app, token());
    const results = await Promise.all([1, 2].map(() => app.request('POST', `/api/templates/${t.id}/publish`, { token: token(), body: {} })));
    // The second saw the first's version: identical draft, so it is refused rather than duplicated.
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const versions = await app.services.db.query(`SELECT version FROM template_versions WHERE template_id = $1`, [t.id]);
    expect(versions).toEqual([{ version: 1 }]);
  });

  it('lists versions newest first: {id, version, releaseNotes, publishedAt, publishedBy (display name)}', async () => {
    const t = await createTemplate(app, token());
    await publish(app, token(), t.id, 'Initial');
    await rename(t.id, 'v2');
    await publish(app, token(), t.id);
    const res = await app.request('GET', `/api/templates/${t.slug}/versions`, { token: token() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: expect.any(String), version: 2, releaseNotes: null, publishedAt: expect.any(String), publishedBy: 'Alice Publisher' },
      { id: expect.any(String), version: 1, releaseNotes: 'Initial', publishedAt: expect.any(String), publishedBy: 'Alice Publisher' },
    ]);
    const unpublished = await createTemplate(app, token());
    expect((await app.request('GET', `/api/templates/${unpublished.id}/versions`, { token: token() })).body).toEqual([]);
  });

  it('answers a version\'s state by version number or version id; the draft moves on without changing it', async () => {
    const t = await createTemplate(app, token());
    const v1 = await publish(app, token(), t.id, 'one');
    const original = (await app.request('GET', `/api/templates/${t.id}`, { token: token() })).body;
    await rename(t.id, 'changed later');
    await app.request('PUT', `/api/templates/${t.id}`, { token: token(), body: { name: `${t.name} renamed` } });
    for (const param of ['1', v1.id]) {
      const res = await app.request('GET', `/api/templates/${t.id}/versions/${param}`, { token: token() });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: v1.id,
        version: 1,
        releaseNotes: 'one',
        publishedAt: v1.publishedAt,
        publishedBy: 'Alice Publisher',
        templateId: t.id,
        shortId: t.shortId,
        slug: t.slug,
        name: t.name,
        description: original.description,
        outputFormats: original.outputFormats,
        schema: original.schema,
        variables: original.variables,
        constants: original.constants,
        calculatedVariables: original.calculatedVariables,
      });
    }
  });

  it('refuses bad version parameters (400 ERR_TMPL_023), unknown versions (404 ERR_TMPL_013) and other templates\' (ERR_TMPL_014)', async () => {
    const t = await createTemplate(app, token());
    await publish(app, token(), t.id);
    const other = await createTemplate(app, token());
    const otherV1 = await publish(app, token(), other.id);
    for (const bad of ['0', '-1', '1.5', 'latest', 'v1', '99999999999']) {
      const res = await app.request('GET', `/api/templates/${t.id}/versions/${bad}`, { token: token() });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ERR_TMPL_023', relatedInfo: { field: 'versionId' } });
    }
    for (const unknown of ['2', randomUUID()]) {
      const res = await app.request('GET', `/api/templates/${t.id}/versions/${unknown}`, { token: token() });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('ERR_TMPL_013');
    }
    const foreign = await app.request('GET', `/api/templates/${t.id}/versions/${otherV1.id}`, { token: token() });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 'ERR_TMPL_014', relatedInfo: { versionId: otherV1.id, templateId: t.id } });
    const restore = await app.request('POST', `/api/templates/${t.id}/versions/${otherV1.id}/restore`, { token: token(), body: {} });
    expect(restore.body.code).toBe('ERR_TMPL_014');
    expect((await app.request('POST', `/api/templates/${t.id}/versions/nope/restore`, { token: token(), body: {} })).body.code).toBe('ERR_TMPL_023');
  });

  it('restores: the old definition becomes the draft and is published as a new version', async () => {
    const t = await createTemplate(app, token());
    const v1State = (await app.request('GET', `/api/templates/${t.id}`, { token: token() })).body;
    await publish(app, token(), t.id);
    await rename(t.id, 'version two');
    await publish(app, token(), t.id);
    const res = await app.request('POST', `/api/templates/${t.id}/versions/1/restore`, { token: token(), body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, newVersion: 3, message: 'Version 1 restored and published as version 3' });
    const draft = (await app.request('GET', `/api/templates/${t.id}`, { token: token() })).body;
    expect(draft).toMatchObject({ schema: v1State.schema, variables: v1State.variables, latestVersion: 3 });
    const versions = (await app.request('GET', `/api/templates/${t.id}/versions`, { token: token() })).body;
    expect(versions[0]).toMatchObject({ version: 3, releaseNotes: 'Restored from version 1' });
    const v3 = (await app.request('GET', `/api/templates/${t.id}/versions/3`, { token: token() })).body;
    expect(v3.schema).toEqual(v1State.schema);
    // Restoring with notes, and restoring the newest version: each restore takes a new number.
    const again = await app.request('POST', `/api/templates/${t.id}/versions/3/restore`, { token: token(), body: { releaseNotes: 'again' } });
    expect(again.body.newVersion).toBe(4);
    const unknown = await app.request('POST', `/api/templates/${t.id}/versions/9/restore`, { token: token(), body: {} });
    expect(unknown.body.code).toBe('ERR_TMPL_013');
  });

  it('loadPublishedVersion: the newest version for generation, 422 ERR_TMPL_021 before the first publish', async () => {
    const t = await createTemplate(app, token());
    await expect(loadPublishedVersion(app.services.db, projectId, t.slug)).rejects.toMatchObject({ code: 'ERR_TMPL_021', status: 422 });
    await publish(app, token(), t.id);
    await rename(t.id, 'second version text');
    const v2 = await publish(app, token(), t.id);
    // A draft edited after the publish is not what generation renders.
    await rename(t.id, 'unpublished draft');
    const loaded = await loadPublishedVersion(app.services.db, projectId, t.shortId);
    expect(loaded).toMatchObject({ version: 2, versionId: v2.id, outputFormats: ['pdf', 'excel'] });
    expect(loaded.template.id).toBe(t.id);
    expect(JSON.stringify(loaded.definition)).toContain('second version text');
    expect((await findTemplate(app.services.db, projectId, t.id)).draft.schema.sections[0].components[0].props.text).toBe('unpublished draft');
    // Another project cannot load it; a deleted template is gone for generation too.
    const bob = await signUp(app);
    await expect(loadPublishedVersion(app.services.db, await personalProjectId(app, bob.id), t.id)).rejects.toMatchObject({ code: 'ERR_TMPL_001' });
    await app.request('DELETE', `/api/templates/${t.id}`, { token: token() });
    await expect(loadPublishedVersion(app.services.db, projectId, t.id)).rejects.toMatchObject({ code: 'ERR_TMPL_001', status: 404 });
  });
});
