import { createInvitationEmailActivity } from '../../../activities/identity/invitation-email.activity';
import type { Mailer, MailMessage } from '../../../adapters/mail/mailer';
import { sha256Hex } from '../../../domain/signing';
import { startTestApp, type TestApp } from '../../support/app';
import { buildSignup, linkToken, signUp, type SignedUpUser } from '../../support/factories';
import { addMember, createTeam, inTeam, invitationMail, invite } from '../../support/teams';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const DAY_MS = 24 * 3600 * 1000;

/** Spec, "Projects (JWT only)" and "Invitation" states: invite, e-mail, accept, reject, cancel. */
describe('project invitations', () => {
  let app: TestApp;
  let owner: SignedUpUser;
  let ownerName: string;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await signUp(app, { verified: true });
    ownerName = (await app.services.db.query(`SELECT name FROM users WHERE id = $1`, [owner.id]))[0].name;
  });
  afterAll(() => app.close());

  const expire = (id: string) => app.services.db.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  it('invites, e-mails a working link through the workflow, and the invitee joins with its token', async () => {
    const team = await createTeam(app, owner, { name: 'Invoices Inc' });
    const invitee = await signUp(app, { verified: true });
    const before = Date.now();
    const res = await app.request('POST', '/api/teams/members/invite', { token: owner.accessToken, headers: inTeam(team.id), body: { email: invitee.email.toUpperCase(), role: 'viewer' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), email: invitee.email, role: 'viewer', status: 'pending', expiresAt: expect.any(String) });
    // INVITATION_TTL_SECONDS defaults to 7 days.
    expect(Date.parse(res.body.expiresAt) - before).toBeGreaterThanOrEqual(7 * DAY_MS - 1000);
    expect(Date.parse(res.body.expiresAt) - Date.now()).toBeLessThanOrEqual(7 * DAY_MS);

    const { mail, token } = await invitationMail(app, res.body.id);
    expect(mail.to).toEqual([invitee.email]);
    expect(mail.subject).toBe('You are invited to join Invoices Inc on Formwork');
    expect(mail.text).toContain(`${ownerName} invited you to join the project "Invoices Inc" on Formwork as viewer.`);
    expect(mail.text).toContain(`${app.url}/invitations/${res.body.id}?token=`);
    expect(mail.html).toContain('View invitation');
    // Only the token's hash is stored.
    const [row] = await app.services.db.query(`SELECT * FROM invitations WHERE id = $1`, [res.body.id]);
    expect(row.token_hash).toBe(sha256Hex(token));
    expect(JSON.stringify(row)).not.toContain(token);

    const mine = await app.request('GET', '/api/teams/invitations/my', { token: invitee.accessToken });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([{ id: res.body.id, teamId: team.id, teamName: 'Invoices Inc', role: 'viewer', invitedBy: ownerName, expiresAt: res.body.expiresAt }]);

    const accepted = await app.request('POST', `/api/teams/invitations/${res.body.id}/accept`, { token: invitee.accessToken, body: { token } });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ message: expect.any(String) });

    const project = await app.request('GET', `/api/teams/${team.id}`, { token: invitee.accessToken });
    expect(project.body).toMatchObject({ id: team.id, role: 'viewer', memberCount: 2 });
    expect((await app.request('GET', '/api/teams/invitations/my', { token: invitee.accessToken })).body.data).toEqual([]);
    const again = await app.request('POST', `/api/teams/invitations/${res.body.id}/accept`, { token: invitee.accessToken, body: { token } });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('ERR_TEAM_009');
    const [decided] = await app.services.db.query(`SELECT status, decided_at FROM invitations WHERE id = $1`, [res.body.id]);
    expect(decided).toEqual({ status: 'accepted', decided_at: expect.any(Date) });
  });

  it('lets someone without an account yet sign up and accept with the e-mailed token', async () => {
    const team = await createTeam(app, owner);
    const input = buildSignup();
    const inv = await invite(app, owner, team.id, input.email);
    expect(inv.role).toBe('member');
    const { token } = await invitationMail(app, inv.id);

    const newcomer = await signUp(app, { overrides: input });
    // Unverified: the address is not proven theirs, so neither listing nor token-less accepting works.
    const mine = await app.request('GET', '/api/teams/invitations/my', { token: newcomer.accessToken });
    expect(mine.status).toBe(403);
    expect(mine.body.code).toBe('ERR_AUTH_006');
    const noToken = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: newcomer.accessToken });
    expect(noToken.status).toBe(403);
    expect(noToken.body.code).toBe('ERR_AUTH_006');
    const wrong = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: newcomer.accessToken, body: { token: 'guess' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ERR_AUTH_007');

    // The right token is not enough: joining needs a verified account with the invited address.
    const unverified = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: newcomer.accessToken, body: { token } });
    expect(unverified.status).toBe(403);
    expect(unverified.body.code).toBe('ERR_AUTH_006');
    expect(await app.services.db.query(`SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2`, [team.id, newcomer.id])).toEqual([]);
    const confirm = await app.smtp!.waitForMessage((m) => m.to.includes(input.email) && /confirm/i.test(m.subject));
    expect((await app.request('POST', '/api/auth/verify-email', { body: { token: linkToken(confirm, '/verify-email') } })).status).toBe(200);

    // Verified, with the invited address, but without the e-mailed token (or with a wrong one): refused, nothing joins.
    for (const body of [undefined, {}, { token: 'guess' }]) {
      const tokenless = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: newcomer.accessToken, body });
      expect([tokenless.status, tokenless.body.code]).toEqual([400, 'ERR_AUTH_007']);
    }
    expect(await app.services.db.query(`SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2`, [team.id, newcomer.id])).toEqual([]);
    expect((await app.services.db.query(`SELECT status FROM invitations WHERE id = $1`, [inv.id]))[0].status).toBe('pending');

    const ok = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: newcomer.accessToken, body: { token } });
    expect(ok.status).toBe(200);
    const members = await app.request('GET', '/api/teams/members', { token: newcomer.accessToken, headers: inTeam(team.id) });
    expect(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([[owner.email, 'owner'], [input.email, 'member']]);
  });

  it('lets a verified invitee reject; a rejected invitation cannot be accepted afterwards', async () => {
    const team = await createTeam(app, owner);
    const invitee = await signUp(app, { verified: true });
    const inv = await invite(app, owner, team.id, invitee.email, 'admin');
    const res = await app.request('POST', `/api/teams/invitations/${inv.id}/reject`, { token: invitee.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    const accept = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: invitee.accessToken });
    expect(accept.body.code).toBe('ERR_TEAM_009');
    expect((await app.request('GET', `/api/teams/${team.id}`, { token: invitee.accessToken })).body.code).toBe('ERR_TEAM_001');
    const [row] = await app.services.db.query(`SELECT status FROM invitations WHERE id = $1`, [inv.id]);
    expect(row.status).toBe('rejected');
  });

  it('answers 404 ERR_TEAM_009 for unknown ids and for invitations addressed to someone else, even with the token', async () => {
    const team = await createTeam(app, owner);
    const invitee = await signUp(app, { verified: true });
    const thief = await signUp(app, { verified: true });
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);
    for (const action of ['accept', 'reject']) {
      for (const [id, user] of [[inv.id, thief], [UNKNOWN_ID, invitee], ['not-a-uuid', invitee]] as const) {
        const res = await app.request('POST', `/api/teams/invitations/${id}/${action}`, { token: user.accessToken, body: { token } });
        expect([action, id, res.status, res.body.code]).toEqual([action, id, 404, 'ERR_TEAM_009']);
      }
    }
    expect((await app.request('GET', '/api/teams/invitations/my', { token: thief.accessToken })).body.data).toEqual([]);
    expect((await app.request('GET', `/api/teams/${team.id}`, { token: thief.accessToken })).body.code).toBe('ERR_TEAM_001');
  });

  it('refuses an expired invitation with 410 ERR_TEAM_010, hides it, and lets the owner invite again', async () => {
    const team = await createTeam(app, owner);
    const invitee = await signUp(app, { verified: true });
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);
    await expire(inv.id);
    for (const action of ['accept', 'reject']) {
      const res = await app.request('POST', `/api/teams/invitations/${inv.id}/${action}`, { token: invitee.accessToken, body: { token } });
      expect(res.status).toBe(410);
      expect(res.body).toMatchObject({ statusCode: 410, code: 'ERR_TEAM_010' });
    }
    expect((await app.request('GET', '/api/teams/invitations/my', { token: invitee.accessToken })).body.data).toEqual([]);

    const fresh = await invite(app, owner, team.id, invitee.email);
    expect(fresh.id).not.toBe(inv.id);
    const [old] = await app.services.db.query(`SELECT status FROM invitations WHERE id = $1`, [inv.id]);
    expect(old.status).toBe('cancelled');
    const { token: freshToken } = await invitationMail(app, fresh.id);
    const ok = await app.request('POST', `/api/teams/invitations/${fresh.id}/accept`, { token: invitee.accessToken, body: { token: freshToken } });
    expect(ok.status).toBe(200);
  });

  it('refuses members (409 ERR_TEAM_007), a second pending invitation (409 ERR_TEAM_008) and bad input (400)', async () => {
    const team = await createTeam(app, owner);
    const member = await addMember(app, owner, team.id, 'member');
    const call = (body: unknown) => app.request('POST', '/api/teams/members/invite', { token: owner.accessToken, headers: inTeam(team.id), body });

    for (const email of [member.email, owner.email.toUpperCase()]) {
      const res = await call({ email });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'ERR_TEAM_007', relatedInfo: { field: 'email' } });
    }
    const email = `pending-${Date.now()}@example.com`;
    expect((await call({ email })).status).toBe(201);
    const dup = await call({ email: email.toUpperCase(), role: 'viewer' });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: 'ERR_TEAM_008', relatedInfo: { field: 'email' } });

    const badEmail = await call({ email: 'not-an-email' });
    expect(badEmail.body).toMatchObject({ statusCode: 400, code: 'ERR_USER_003', relatedInfo: { field: 'email' } });
    const owners = await call({ email: 'x@example.com', role: 'owner' });
    expect(owners.body).toMatchObject({ statusCode: 400, code: 'ERR_VALID_001', relatedInfo: { field: 'role' } });
    const missing = await call({ role: 'member' });
    expect(missing.body).toMatchObject({ statusCode: 400, relatedInfo: { field: 'email' } });
  });

  it('needs a verified e-mail to invite: 403 ERR_AUTH_006, and nothing is sent', async () => {
    const unverified = await signUp(app);
    const team = await createTeam(app, unverified);
    const email = `never-${Date.now()}@example.com`;
    const res = await app.request('POST', '/api/teams/members/invite', { token: unverified.accessToken, headers: inTeam(team.id), body: { email } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ERR_AUTH_006');
    expect(await app.services.db.query(`SELECT 1 FROM invitations WHERE email = $1`, [email])).toEqual([]);
  });

  it('lets owners and admins invite; members and viewers get 403 ERR_AUTH_005 {required: admin}', async () => {
    const team = await createTeam(app, owner);
    const [admin, member, viewer] = [await addMember(app, owner, team.id, 'admin'), await addMember(app, owner, team.id, 'member'), await addMember(app, owner, team.id, 'viewer')];
    for (const [user, role] of [[member, 'member'], [viewer, 'viewer']] as const) {
      const res = await app.request('POST', '/api/teams/members/invite', { token: user.accessToken, headers: inTeam(team.id), body: { email: `by-${role}@example.com` } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'ERR_AUTH_005', relatedInfo: { required: 'admin', granted: role } });
      const list = await app.request('GET', '/api/teams/invitations', { token: user.accessToken, headers: inTeam(team.id) });
      expect(list.body.code).toBe('ERR_AUTH_005');
    }
    const byAdmin = await invite(app, admin, team.id, `by-admin-${Date.now()}@example.com`, 'admin');
    const list = await app.request('GET', '/api/teams/invitations', { token: admin.accessToken, headers: inTeam(team.id) });
    expect(list.body.data).toEqual([byAdmin]);
    // The invitation e-mail names the admin who sent it.
    const { mail } = await invitationMail(app, byAdmin.id);
    const [adminRow] = await app.services.db.query(`SELECT name FROM users WHERE id = $1`, [admin.id]);
    expect(mail.text).toContain(`${adminRow.name} invited you`);
  });

  it('shows the invitation behind an e-mailed link to whoever holds its token, signed in or not, and changes nothing', async () => {
    const team = await createTeam(app, owner, { name: 'Link Readers' });
    const invitee = await signUp(app, { verified: true });
    const inv = await invite(app, owner, team.id, invitee.email, 'admin');
    const { token } = await invitationMail(app, inv.id);
    const read = (id: string, query: string, as?: SignedUpUser) => app.request('GET', `/api/teams/invitations/${id}${query}`, as ? { token: as.accessToken } : {});
    const shown = { id: inv.id, teamId: team.id, teamName: 'Link Readers', role: 'admin', email: invitee.email, invitedBy: ownerName, expiresAt: inv.expiresAt };

    const anonymous = await read(inv.id, `?token=${encodeURIComponent(token)}`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual(shown);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    // Signed in as someone else, the link still shows what it is (answering it is refused: the test above).
    expect((await read(inv.id, `?token=${encodeURIComponent(token)}`, await signUp(app))).body).toEqual(shown);

    // A wrong token, another invitation's id or a malformed one: not found, alike; no token: a validation error.
    for (const [id, query] of [[inv.id, '?token=guess'], [UNKNOWN_ID, `?token=${token}`], ['nope', `?token=${token}`]]) {
      const res = await read(id, query);
      expect([id, query, res.status, res.body.code]).toEqual([id, query, 404, 'ERR_TEAM_009']);
    }
    expect((await read(inv.id, '')).body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'token' } });
    const [row] = await app.services.db.query(`SELECT status, decided_at FROM invitations WHERE id = $1`, [inv.id]);
    expect(row).toEqual({ status: 'pending', decided_at: null });

    // Expired: 410 with the right token (the wrong one still learns nothing); answered: 404.
    await expire(inv.id);
    expect((await read(inv.id, `?token=${token}`)).body.code).toBe('ERR_TEAM_010');
    expect((await read(inv.id, '?token=guess')).body.code).toBe('ERR_TEAM_009');
    const other = await invite(app, owner, team.id, (await signUp(app, { verified: true })).email);
    const { token: otherToken } = await invitationMail(app, other.id);
    await app.request('DELETE', `/api/teams/members/${other.id}/invitation`, { token: owner.accessToken, headers: inTeam(team.id) });
    expect((await read(other.id, `?token=${otherToken}`)).body.code).toBe('ERR_TEAM_009');
  });

  it('lets the owner cancel a pending invitation; its link stops working', async () => {
    const team = await createTeam(app, owner);
    const admin = await addMember(app, owner, team.id, 'admin');
    const invitee = await signUp(app, { verified: true });
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);

    const byAdmin = await app.request('DELETE', `/api/teams/members/${inv.id}/invitation`, { token: admin.accessToken, headers: inTeam(team.id) });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body).toMatchObject({ code: 'ERR_TEAM_003', relatedInfo: { required: 'owner', granted: 'admin' } });
    // From another project (here the owner's personal one) the invitation does not exist.
    const elsewhere = await app.request('DELETE', `/api/teams/members/${inv.id}/invitation`, { token: owner.accessToken });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe('ERR_TEAM_009');

    const res = await app.request('DELETE', `/api/teams/members/${inv.id}/invitation`, { token: owner.accessToken, headers: inTeam(team.id) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    const accept = await app.request('POST', `/api/teams/invitations/${inv.id}/accept`, { token: invitee.accessToken, body: { token } });
    expect(accept.body.code).toBe('ERR_TEAM_009');
    for (const id of [inv.id, UNKNOWN_ID, 'nope']) {
      const again = await app.request('DELETE', `/api/teams/members/${id}/invitation`, { token: owner.accessToken, headers: inTeam(team.id) });
      expect([id, again.status, again.body.code]).toEqual([id, 404, 'ERR_TEAM_009']);
    }
  });

  it('sends nothing for an invitation cancelled, expired or of a deleted project by the time the activity runs', async () => {
    const sent: MailMessage[] = [];
    const mailer: Mailer = { send: async (m) => (sent.push(m), { messageId: 'x' }), check: async () => undefined };
    const sendInvitationEmail = createInvitationEmailActivity({ db: app.services.db, mailer, publicUrl: 'https://formwork.test' });
    const team = await createTeam(app, owner);
    const row = async (fields: string) => {
      const [r] = await app.services.db.query(
        `INSERT INTO invitations (id, project_id, email, role, status, invited_by, expires_at)
         SELECT gen_random_uuid(), $1, 'quiet-' || gen_random_uuid() || '@example.com', 'member', 'pending', $2, now() + interval '1 day'
         RETURNING id`,
        [team.id, owner.id],
      );
      if (fields) await app.services.db.query(`UPDATE invitations SET ${fields} WHERE id = $1`, [r.id]);
      return r.id as string;
    };
    for (const id of [await row(`status = 'cancelled'`), await row(`expires_at = now() - interval '1 second'`)]) {
      await sendInvitationEmail({ invitationId: id });
      const [after] = await app.services.db.query(`SELECT token_hash FROM invitations WHERE id = $1`, [id]);
      expect(after.token_hash).toBeNull();
    }
    const live = await row('');
    await sendInvitationEmail({ invitationId: live });
    expect(sent).toHaveLength(1);
    expect(sent[0].text).toContain(`https://formwork.test/invitations/${live}?token=`);

    await app.services.db.query(`UPDATE projects SET deleted_at = now() WHERE id = $1`, [team.id]);
    await sendInvitationEmail({ invitationId: await row('') });
    expect(sent).toHaveLength(1);
  });
});
