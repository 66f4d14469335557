import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember, createTeam, inTeam, invitationMail } from '../../support/teams';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Spec, "Projects (JWT only)": the project itself (create, list, read, update, delete). */
describe('projects (teams)', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let mallory: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp();
    [alice, mallory] = await Promise.all([signUp(app, { verified: true }), signUp(app, { verified: true })]);
  });
  afterAll(() => app.close());

  it('creates a project with a slug derived from its name; the caller becomes its owner', async () => {
    const name = `Acme Docs ${Date.now()}`;
    const res = await app.request('POST', '/api/teams', { token: alice.accessToken, body: { name } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name, slug: `acme-docs-${name.split(' ')[2]}`, createdAt: expect.stringMatching(ISO) });

    const got = await app.request('GET', `/api/teams/${res.body.id}`, { token: alice.accessToken });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...res.body, isPersonal: false, role: 'owner', memberCount: 1 });

    // The same name again: the plain slug is taken, so a suffixed one is generated.
    const again = await app.request('POST', '/api/teams', { token: alice.accessToken, body: { name } });
    expect(again.status).toBe(201);
    expect(again.body.slug).toMatch(new RegExp(`^${res.body.slug}-[a-z0-9]{6}$`));
  });

  it('takes a given slug (lower-cased), refuses a taken one with 409 ERR_TEAM_002 and a malformed one with 400', async () => {
    const slug = `given-${Date.now()}`;
    const created = await app.request('POST', '/api/teams', { token: alice.accessToken, body: { name: 'Given', slug: slug.toUpperCase() } });
    expect(created.status).toBe(201);
    expect(created.body.slug).toBe(slug);

    const taken = await app.request('POST', '/api/teams', { token: mallory.accessToken, body: { name: 'Other', slug } });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ statusCode: 409, code: 'ERR_TEAM_002', relatedInfo: { field: 'slug' } });

    for (const bad of ['has space', '-leading', 'double--dash', 'ümlaut', 'x'.repeat(65)]) {
      const res = await app.request('POST', '/api/teams', { token: alice.accessToken, body: { name: 'Bad', slug: bad } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field: 'slug' } });
    }
    const noName = await app.request('POST', '/api/teams', { token: alice.accessToken, body: { slug: 'no-name' } });
    expect(noName.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_005', relatedInfo: { field: 'name' } });
    const unknown = await app.request('POST', '/api/teams', { token: alice.accessToken, body: { name: 'x', plan: 'scale' } });
    expect(unknown.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_001', relatedInfo: { field: 'plan' } });
  });

  it('lists every live project of the caller, personal first, with role and member count', async () => {
    const user = await signUp(app, { verified: true });
    const team = await createTeam(app, user, { name: 'Listed' });
    // A project the user was invited into, as admin.
    const other = await createTeam(app, alice, { name: 'Alice shares' });
    const owner = alice;
    const res0 = await app.request('POST', '/api/teams/members/invite', { token: owner.accessToken, headers: inTeam(other.id), body: { email: user.email, role: 'admin' } });
    expect(res0.status).toBe(201);
    const { token: invitationToken } = await invitationMail(app, res0.body.id);
    await app.request('POST', `/api/teams/invitations/${res0.body.id}/accept`, { token: user.accessToken, body: { token: invitationToken } });

    const list = await app.request('GET', '/api/teams', { token: user.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      { id: expect.any(String), name: expect.stringContaining("'s project"), slug: expect.any(String), isPersonal: true, role: 'owner', memberCount: 1, createdAt: expect.stringMatching(ISO) },
      { ...team, isPersonal: false, role: 'owner', memberCount: 1 },
      { ...other, isPersonal: false, role: 'admin', memberCount: 2 },
    ]);
  });

  it('reads a project only for its members: unknown, malformed and foreign ids are 404 ERR_TEAM_001 alike', async () => {
    const team = await createTeam(app, alice);
    for (const id of [UNKNOWN_ID, 'not-a-uuid', team.id]) {
      const res = await app.request('GET', `/api/teams/${id}`, { token: mallory.accessToken });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, code: 'ERR_TEAM_001', path: `/api/teams/${id}` });
      expect(res.text).not.toContain(team.name);
    }
    // Nor can a stranger change or delete it.
    const put = await app.request('PUT', `/api/teams/${team.id}`, { token: mallory.accessToken, body: { name: 'mine now' } });
    expect(put.body.code).toBe('ERR_TEAM_001');
    const del = await app.request('DELETE', `/api/teams/${team.id}`, { token: mallory.accessToken });
    expect(del.body.code).toBe('ERR_TEAM_001');
    const still = await app.request('GET', `/api/teams/${team.id}`, { token: alice.accessToken });
    expect(still.body.name).toBe(team.name);
  });

  it('lets the owner rename a project and change its slug', async () => {
    const team = await createTeam(app, alice, { name: 'Before' });
    const slug = `after-${Date.now()}`;
    const res = await app.request('PUT', `/api/teams/${team.id}`, { token: alice.accessToken, body: { name: 'After', slug } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: team.id, name: 'After', slug, isPersonal: false, role: 'owner', memberCount: 1, createdAt: team.createdAt });
    const empty = await app.request('PUT', `/api/teams/${team.id}`, { token: alice.accessToken, body: {} });
    expect(empty.body.name).toBe('After');

    const other = await createTeam(app, alice);
    const taken = await app.request('PUT', `/api/teams/${other.id}`, { token: alice.accessToken, body: { slug } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('ERR_TEAM_002');
    const bad = await app.request('PUT', `/api/teams/${other.id}`, { token: alice.accessToken, body: { name: '' } });
    expect(bad.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_001', relatedInfo: { field: 'name' } });
  });

  it('renames a personal project but keeps its slug: 400 ERR_TEAM_005', async () => {
    const [personal] = (await app.request('GET', '/api/teams', { token: alice.accessToken })).body.data;
    expect(personal.isPersonal).toBe(true);
    const slug = await app.request('PUT', `/api/teams/${personal.id}`, { token: alice.accessToken, body: { slug: `moved-${Date.now()}` } });
    expect(slug.status).toBe(400);
    expect(slug.body).toMatchObject({ code: 'ERR_TEAM_005', relatedInfo: { field: 'slug' } });
    const same = await app.request('PUT', `/api/teams/${personal.id}`, { token: alice.accessToken, body: { name: 'My own', slug: personal.slug } });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: 'My own', slug: personal.slug, isPersonal: true });
  });

  it('keeps update and delete for the owner: an admin gets 403 ERR_TEAM_003 {required: owner, granted: admin}', async () => {
    const team = await createTeam(app, alice, { name: 'Owned' });
    const admin = await addMember(app, alice, team.id, 'admin');
    const viewer = await addMember(app, alice, team.id, 'viewer');

    const read = await app.request('GET', `/api/teams/${team.id}`, { token: viewer.accessToken });
    expect(read.body).toMatchObject({ id: team.id, role: 'viewer', memberCount: 3 });

    for (const [method, body] of [['PUT', { name: 'Taken over' }], ['DELETE', undefined]] as const) {
      const res = await app.request(method, `/api/teams/${team.id}`, { token: admin.accessToken, body });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ statusCode: 403, code: 'ERR_TEAM_003', relatedInfo: { required: 'owner', granted: 'admin' } });
    }
    const put = await app.request('PUT', `/api/teams/${team.id}`, { token: viewer.accessToken, body: { name: 'x' } });
    expect(put.body).toMatchObject({ code: 'ERR_TEAM_003', relatedInfo: { required: 'owner', granted: 'viewer' } });
    const unchanged = await app.request('GET', `/api/teams/${team.id}`, { token: alice.accessToken });
    expect(unchanged.body.name).toBe('Owned');
  });

  it('soft-deletes a team project: gone for every member, kept in the database, its API keys stopped', async () => {
    const team = await createTeam(app, alice);
    const member = await addMember(app, alice, team.id, 'member');
    const key = await app.request('POST', '/api/api-keys', { token: alice.accessToken, headers: inTeam(team.id), body: { name: 'doomed' } });
    expect(key.status).toBe(201);

    const res = await app.request('DELETE', `/api/teams/${team.id}`, { token: alice.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });

    for (const user of [alice, member]) {
      expect((await app.request('GET', `/api/teams/${team.id}`, { token: user.accessToken })).body.code).toBe('ERR_TEAM_001');
      const list = await app.request('GET', '/api/teams', { token: user.accessToken });
      expect(list.body.data.map((p: { id: string }) => p.id)).not.toContain(team.id);
      const scoped = await app.request('GET', '/api/teams/members', { token: user.accessToken, headers: inTeam(team.id) });
      expect(scoped.status).toBe(403);
    }
    const [row] = await app.services.db.query(`SELECT deleted_at FROM projects WHERE id = $1`, [team.id]);
    expect(row.deleted_at).toBeInstanceOf(Date);
    // The key is deactivated, so it fails before any route looks at it.
    const withKey = await app.request('GET', '/api/teams', { token: key.body.plainKey });
    expect(withKey.status).toBe(401);
    expect(withKey.body.code).toBe('ERR_AKEY_003');
    const [k] = await app.services.db.query(`SELECT is_active FROM api_keys WHERE id = $1`, [key.body.id]);
    expect(k.is_active).toBe(false);

    const twice = await app.request('DELETE', `/api/teams/${team.id}`, { token: alice.accessToken });
    expect(twice.body.code).toBe('ERR_TEAM_001');
  });

  it('refuses to delete a personal project: 400 ERR_TEAM_004', async () => {
    const [personal] = (await app.request('GET', '/api/teams', { token: mallory.accessToken })).body.data;
    const res = await app.request('DELETE', `/api/teams/${personal.id}`, { token: mallory.accessToken });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, code: 'ERR_TEAM_004' });
    expect((await app.request('GET', `/api/teams/${personal.id}`, { token: mallory.accessToken })).status).toBe(200);
  });

  it('needs a user session: 401 ERR_AUTH_003 without a credential, 403 ERR_AUTH_005 for an API key', async () => {
    const team = await createTeam(app, alice);
    const key = await app.request('POST', '/api/api-keys', { token: alice.accessToken, headers: inTeam(team.id), body: { name: 'k' } });
    const endpoints: Array<[string, string, unknown?]> = [
      ['POST', '/api/teams', { name: 'x' }],
      ['GET', '/api/teams'],
      ['GET', `/api/teams/${team.id}`],
      ['PUT', `/api/teams/${team.id}`, { name: 'x' }],
      ['DELETE', `/api/teams/${team.id}`],
      ['GET', '/api/teams/members'],
      ['POST', '/api/teams/members/invite', { email: 'a@example.com' }],
      ['DELETE', `/api/teams/members/${UNKNOWN_ID}`],
      ['PATCH', `/api/teams/members/${UNKNOWN_ID}/role`, { role: 'viewer' }],
      ['GET', '/api/teams/invitations/my'],
      ['POST', `/api/teams/invitations/${UNKNOWN_ID}/accept`],
      ['POST', `/api/teams/invitations/${UNKNOWN_ID}/reject`],
      ['DELETE', `/api/teams/members/${UNKNOWN_ID}/invitation`],
      ['GET', '/api/teams/activity'],
    ];
    for (const [method, path, body] of endpoints) {
      const anonymous = await app.request(method, path, { body });
      expect([path, anonymous.status, anonymous.body.code]).toEqual([path, 401, 'ERR_AUTH_003']);
      const withKey = await app.request(method, path, { token: key.body.plainKey, body });
      expect([path, withKey.status, withKey.body.code, withKey.body.relatedInfo]).toEqual([path, 403, 'ERR_AUTH_005', { required: 'jwt', granted: 'apiKey' }]);
    }
    expect((await app.request('GET', `/api/teams/${team.id}`, { token: alice.accessToken })).status).toBe(200);
  });
});
