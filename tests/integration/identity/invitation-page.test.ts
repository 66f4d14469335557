import { startTestApp, type TestApp } from '../../support/app';
import { signUp } from '../../support/factories';
import { createTeam, invitationMail, invite } from '../../support/teams';

/**
 * The invitation page without script (`/no-script/invitations/<id>`): read the invitation, sign in,
 * accept or decline. The e-mailed link itself opens the dashboard's page when the app is built, this
 * page when it is not (docs/web.md "Links in e-mails"; tests/integration/web/account-links.test.ts).
 */
describe('invitation page without script', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const form = (path: string, fields: Record<string, string>) =>
    app.request('POST', path, { rawBody: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

  it('shows the invitation from the e-mailed link and joins the invitee after sign-in', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app, { verified: true });
    const team = await createTeam(app, owner, { name: 'Accounts <Payable>' });
    const inv = await invite(app, owner, team.id, invitee.email, 'viewer');
    const { mail, token } = await invitationMail(app, inv.id);
    const link = /https?:\/\/\S+\/invitations\/\S+/.exec(mail.text)![0].replace(app.url, `${app.url}/no-script`);

    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('Accounts &lt;Payable&gt;');
    expect(html).toContain('<strong>viewer</strong>');
    expect(html).not.toContain('<script');
    expect(html).toContain(`<form method="post" action="/invitations/${inv.id}">`);
    // Opening the link (a mail scanner does) answers nothing.
    expect((await fetch(link)).status).toBe(200);
    expect((await app.services.db.query(`SELECT status FROM invitations WHERE id = $1`, [inv.id]))[0].status).toBe('pending');

    const wrong = await form(`/invitations/${inv.id}`, { token, email: invitee.email, password: 'not the password', decision: 'accept' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Invalid email or password');

    const joined = await form(`/invitations/${inv.id}`, { token, email: invitee.email, password: invitee.password, decision: 'accept' });
    expect(joined.status).toBe(200);
    expect(joined.text).toContain('You are now a viewer of Accounts &lt;Payable&gt;');
    const [m] = await app.services.db.query(`SELECT role FROM memberships WHERE project_id = $1 AND user_id = $2`, [team.id, invitee.id]);
    expect(m.role).toBe('viewer');

    expect((await fetch(link)).status).toBe(404);
  });

  it('does not let an unverified account join, even with the right token and password', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app);
    const team = await createTeam(app, owner);
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);
    const res = await form(`/invitations/${inv.id}`, { token, email: invitee.email, password: invitee.password, decision: 'accept' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Verify your e-mail address before accepting an invitation');
    expect(await app.services.db.query(`SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2`, [team.id, invitee.id])).toEqual([]);
    const [row] = await app.services.db.query(`SELECT status FROM invitations WHERE id = $1`, [inv.id]);
    expect(row.status).toBe('pending');
  });

  it('refuses a wrong token and lets the invitee decline', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app);
    const team = await createTeam(app, owner);
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);
    expect((await app.request('GET', `/no-script/invitations/${inv.id}?token=forged`)).status).toBe(404);
    expect((await app.request('GET', `/no-script/invitations/not-a-uuid?token=${token}`)).status).toBe(404);

    const declined = await form(`/invitations/${inv.id}`, { token, email: invitee.email, password: invitee.password, decision: 'reject' });
    expect(declined.status).toBe(200);
    expect(declined.text).toContain('You declined the invitation');
    const [row] = await app.services.db.query(`SELECT status FROM invitations WHERE id = $1`, [inv.id]);
    expect(row.status).toBe('rejected');
  });

  it('tells someone signed in as another address that the invitation is not theirs', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app);
    const stranger = await signUp(app);
    const team = await createTeam(app, owner);
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);
    const res = await form(`/invitations/${inv.id}`, { token, email: stranger.email, password: stranger.password, decision: 'accept' });
    expect(res.status).toBe(400);
    expect(res.text).toContain(`This invitation is for ${invitee.email}`);
  });
});
