import { recordActivity } from '../../../db/identity/activity';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember, createTeam, inTeam, invite } from '../../support/teams';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Spec, "Projects (JWT only)": members of the active project, their roles, and the activity feed. */
describe('project members and activity', () => {
  let app: TestApp;
  let owner: SignedUpUser;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await signUp(app, { verified: true });
  });
  afterAll(() => app.close());

  const userRow = async (u: SignedUpUser) => (await app.services.db.query(`SELECT id, name, email FROM users WHERE id = $1`, [u.id]))[0] as { id: string; name: string; email: string };

  it('lists the members of the active project (X-Team-Id; default the personal one)', async () => {
    const team = await createTeam(app, owner);
    const viewer = await addMember(app, owner, team.id, 'viewer');
    const res = await app.request('GET', '/api/teams/members', { token: viewer.accessToken, headers: inTeam(team.id) });
    expect(res.status).toBe(200);
    const [o, v] = [await userRow(owner), await userRow(viewer)];
    expect(res.body.data).toEqual([
      { ...o, role: 'owner', joinedAt: expect.stringMatching(ISO) },
      { ...v, role: 'viewer', joinedAt: expect.stringMatching(ISO) },
    ]);
    const personal = await app.request('GET', '/api/teams/members', { token: viewer.accessToken });
    expect(personal.body.data).toEqual([{ ...v, role: 'owner', joinedAt: expect.stringMatching(ISO) }]);
  });

  it("never shows another user's project: X-Team-Id of a foreign, unknown or malformed id is 403 ERR_AUTH_005", async () => {
    const team = await createTeam(app, owner);
    await addMember(app, owner, team.id, 'member');
    const stranger = await signUp(app, { verified: true });
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/teams/members'],
      ['GET', '/api/teams/activity'],
      ['GET', '/api/teams/invitations'],
      ['POST', '/api/teams/members/invite', { email: 'x@example.com' }],
      ['DELETE', `/api/teams/members/${owner.id}`],
      ['PATCH', `/api/teams/members/${owner.id}/role`, { role: 'viewer' }],
      ['DELETE', `/api/teams/members/${UNKNOWN_ID}/invitation`],
    ];
    for (const teamId of [team.id, UNKNOWN_ID, 'garbage']) {
      for (const [method, path, body] of calls) {
        const res = await app.request(method, path, { token: stranger.accessToken, headers: inTeam(teamId), body });
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'ERR_AUTH_005']);
        expect(res.text).not.toContain(owner.email);
      }
    }
    expect((await app.request('GET', '/api/teams/members', { token: owner.accessToken, headers: inTeam(team.id) })).body.data).toHaveLength(2);
  });

  it('lets the owner change a role (admin, member, viewer) and answers the updated member', async () => {
    const team = await createTeam(app, owner);
    const user = await addMember(app, owner, team.id, 'viewer');
    const res = await app.request('PATCH', `/api/teams/members/${user.id}/role`, { token: owner.accessToken, headers: inTeam(team.id), body: { role: 'admin' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...(await userRow(user)), role: 'admin', joinedAt: expect.stringMatching(ISO) });
    // The new role takes effect at once: an admin may invite.
    await invite(app, user, team.id, `promoted-${Date.now()}@example.com`);
    const same = await app.request('PATCH', `/api/teams/members/${user.id}/role`, { token: owner.accessToken, headers: inTeam(team.id), body: { role: 'admin' } });
    expect(same.body.role).toBe('admin');

    for (const role of ['owner', 'superuser', undefined]) {
      const bad = await app.request('PATCH', `/api/teams/members/${user.id}/role`, { token: owner.accessToken, headers: inTeam(team.id), body: { role } });
      expect(bad.body).toMatchObject({ statusCode: 400, code: role === undefined ? 'ERR_VALID_005' : 'ERR_VALID_001', relatedInfo: { field: 'role' } });
    }
  });

  it("refuses role changes to non-owners (ERR_TEAM_003), of non-members (ERR_TEAM_011) and of the owner's own role (ERR_TEAM_013)", async () => {
    const team = await createTeam(app, owner);
    const admin = await addMember(app, owner, team.id, 'admin');
    const member = await addMember(app, owner, team.id, 'member');
    const patch = (by: SignedUpUser, id: string, role = 'viewer') => app.request('PATCH', `/api/teams/members/${id}/role`, { token: by.accessToken, headers: inTeam(team.id), body: { role } });

    for (const [by, granted] of [[member, 'member'], [admin, 'admin']] as const) {
      const res = await patch(by, owner.id, 'viewer');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'ERR_TEAM_003', relatedInfo: { required: 'owner', granted } });
    }
    expect((await patch(admin, member.id)).body.code).toBe('ERR_TEAM_003');

    const outsider = await signUp(app);
    for (const id of [outsider.id, UNKNOWN_ID, 'not-a-uuid']) {
      const res = await patch(owner, id);
      expect([id, res.status, res.body.code]).toEqual([id, 404, 'ERR_TEAM_011']);
    }
    const self = await patch(owner, owner.id, 'admin');
    expect(self.status).toBe(400);
    expect(self.body.code).toBe('ERR_TEAM_013');

    const members = await app.request('GET', '/api/teams/members', { token: owner.accessToken, headers: inTeam(team.id) });
    expect(members.body.data.map((m: { role: string }) => m.role)).toEqual(['owner', 'admin', 'member']);
  });

  it('lets the owner remove a member, who loses access at once', async () => {
    const team = await createTeam(app, owner);
    const member = await addMember(app, owner, team.id, 'member');
    const res = await app.request('DELETE', `/api/teams/members/${member.id}`, { token: owner.accessToken, headers: inTeam(team.id) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    expect((await app.request('GET', `/api/teams/${team.id}`, { token: member.accessToken })).body.code).toBe('ERR_TEAM_001');
    expect((await app.request('GET', '/api/teams/members', { token: member.accessToken, headers: inTeam(team.id) })).status).toBe(403);
    const again = await app.request('DELETE', `/api/teams/members/${member.id}`, { token: owner.accessToken, headers: inTeam(team.id) });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('ERR_TEAM_011');
  });

  it('refuses removal to non-owners (ERR_TEAM_003), of oneself (ERR_TEAM_012) and of non-members (ERR_TEAM_011)', async () => {
    const team = await createTeam(app, owner);
    const admin = await addMember(app, owner, team.id, 'admin');
    const viewer = await addMember(app, owner, team.id, 'viewer');
    const remove = (by: SignedUpUser, id: string) => app.request('DELETE', `/api/teams/members/${id}`, { token: by.accessToken, headers: inTeam(team.id) });

    const byAdmin = await remove(admin, viewer.id);
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body).toMatchObject({ code: 'ERR_TEAM_003', relatedInfo: { required: 'owner', granted: 'admin' } });
    expect((await remove(viewer, owner.id)).body).toMatchObject({ code: 'ERR_TEAM_003', relatedInfo: { granted: 'viewer' } });

    const self = await remove(owner, owner.id);
    expect(self.status).toBe(400);
    expect(self.body.code).toBe('ERR_TEAM_012');
    for (const id of [UNKNOWN_ID, (await signUp(app)).id, 'x']) {
      const res = await remove(owner, id);
      expect([id, res.status, res.body.code]).toEqual([id, 404, 'ERR_TEAM_011']);
    }
    const left = await app.request('GET', `/api/teams/${team.id}`, { token: owner.accessToken });
    expect(left.body.memberCount).toBe(3);
  });

  it('records the activity of the active project, newest first, with who did it', async () => {
    const team = await createTeam(app, owner, { name: 'Busy' });
    const joiner = await addMember(app, owner, team.id, 'viewer');
    await app.request('PATCH', `/api/teams/members/${joiner.id}/role`, { token: owner.accessToken, headers: inTeam(team.id), body: { role: 'member' } });
    // Another domain (templates) records its events through recordActivity.
    await recordActivity(app.services.db, { projectId: team.id, userId: joiner.id, type: 'template_created', data: { template: { id: 'tmpl-1', name: 'Invoice' } } });
    await app.request('DELETE', `/api/teams/members/${joiner.id}`, { token: owner.accessToken, headers: inTeam(team.id) });

    const res = await app.request('GET', '/api/teams/activity', { token: owner.accessToken, headers: inTeam(team.id) });
    expect(res.status).toBe(200);
    const [o, j] = [await userRow(owner), await userRow(joiner)];
    expect(res.body.data).toEqual([
      { type: 'member_removed', user: o, timestamp: expect.stringMatching(ISO), member: j, role: 'member' },
      { type: 'template_created', user: j, timestamp: expect.stringMatching(ISO), template: { id: 'tmpl-1', name: 'Invoice' } },
      { type: 'role_changed', user: o, timestamp: expect.stringMatching(ISO), member: j, from: 'viewer', to: 'member' },
      { type: 'member_joined', user: j, timestamp: expect.stringMatching(ISO), role: 'viewer', invitationId: expect.any(String) },
      { type: 'invitation_sent', user: o, timestamp: expect.stringMatching(ISO), invitation: { id: expect.any(String), email: j.email, role: 'viewer' } },
      { type: 'project_created', user: o, timestamp: expect.stringMatching(ISO), project: { name: 'Busy', slug: team.slug } },
    ]);
    const stamps = res.body.data.map((e: { timestamp: string }) => Date.parse(e.timestamp));
    expect([...stamps].sort((a, b) => b - a)).toEqual(stamps);

    expect(res.body.meta).toEqual({ total: 6, page: 1, limit: 50, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const limited = await app.request('GET', '/api/teams/activity?limit=2', { token: owner.accessToken, headers: inTeam(team.id) });
    expect(limited.body.data.map((e: { type: string }) => e.type)).toEqual(['member_removed', 'template_created']);
    // Paged like the other lists: each page goes on where the one before ended, and the pages together are the feed.
    const pages = [];
    for (let page = 1; page <= 3; page++) {
      const answer = await app.request('GET', `/api/teams/activity?limit=2&page=${page}`, { token: owner.accessToken, headers: inTeam(team.id) });
      expect(answer.body.meta).toEqual({ total: 6, page, limit: 2, totalPages: 3, hasNextPage: page < 3, hasPreviousPage: page > 1 });
      pages.push(...answer.body.data);
    }
    expect(pages).toEqual(res.body.data);
    const beyond = await app.request('GET', '/api/teams/activity?limit=2&page=4', { token: owner.accessToken, headers: inTeam(team.id) });
    expect(beyond.body).toEqual({ data: [], meta: { total: 6, page: 4, limit: 2, totalPages: 3, hasNextPage: false, hasPreviousPage: true } });
    const zero = await app.request('GET', '/api/teams/activity?page=0', { token: owner.accessToken, headers: inTeam(team.id) });
    expect(zero.body).toMatchObject({ statusCode: 400, relatedInfo: { field: 'page' } });
    const bad = await app.request('GET', '/api/teams/activity?limit=1000', { token: owner.accessToken, headers: inTeam(team.id) });
    expect(bad.body).toMatchObject({ statusCode: 400, relatedInfo: { field: 'limit' } });
    // A removed member no longer reads the feed; every current member (viewers included) does.
    expect((await app.request('GET', '/api/teams/activity', { token: joiner.accessToken, headers: inTeam(team.id) })).status).toBe(403);
  });

  it('keeps reserved fields of an entry from being overridden by event data', async () => {
    const team = await createTeam(app, owner);
    await recordActivity(app.services.db, { projectId: team.id, userId: owner.id, type: 'template_deleted', data: { type: 'forged', user: null, timestamp: 'never', template: { id: 't', name: 'n' } } });
    const [entry] = (await app.request('GET', '/api/teams/activity', { token: owner.accessToken, headers: inTeam(team.id) })).body.data;
    expect(entry).toMatchObject({ type: 'template_deleted', user: await userRow(owner), timestamp: expect.stringMatching(ISO), template: { id: 't', name: 'n' } });
  });
});
