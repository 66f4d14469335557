import { startTestApp, type TestApp } from '../../support/app';
import { buildSignup, linkToken, signUp, type SignedUpUser } from '../../support/factories';
import { createTeam, invitationMail, invite } from '../../support/teams';
import { waitFor } from '../../support/wait';

/**
 * No lost mail for accounts (docs/identity.md): a verification link, a password-reset link and an
 * invitation whose first delivery the mail server refuses (450, busy) are sent again once it
 * accepts: each recipient gets exactly one message, and the link in it works.
 */
describe('account e-mails and invitations with a mail server that refuses, then accepts', () => {
  let app: TestApp;
  let owner: SignedUpUser;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await signUp(app, { verified: true });
  });
  afterAll(() => app?.close());

  const to = (email: string) => app.smtp!.messages.filter((m) => m.to.includes(email));

  /** Refuses `email` until the server has refused it once, then accepts. */
  async function refuseOnce(email: string): Promise<void> {
    await waitFor(() => (app.smtp!.refusals(email) >= 1 ? true : undefined), { timeoutMs: 30_000, what: `the server to refuse ${email}` });
    app.smtp!.refuseRecipient(email, null);
  }

  it('sends one working verification link, reset link and invitation each', async () => {
    const signup = buildSignup();
    const resetUser = await signUp(app, { verified: true });
    const invitee = `invitee-${Date.now()}@example.com`;
    for (const email of [signup.email, resetUser.email, invitee]) app.smtp!.refuseRecipient(email, 450);

    expect((await app.request('POST', '/api/auth/signup', { body: signup })).status).toBe(201);
    expect((await app.request('POST', '/api/auth/forgot-password', { body: { email: resetUser.email } })).status).toBe(200);
    const team = await createTeam(app, owner, { name: 'Refused Mail Ltd' });
    const invitation = await invite(app, owner, team.id, invitee);
    await Promise.all([signup.email, resetUser.email, invitee].map(refuseOnce));

    // The activity's retry sends each message once the server accepts.
    const verifyMail = await app.smtp!.waitForMessage((m) => m.to.includes(signup.email), 60_000);
    const resetMail = await app.smtp!.waitForMessage((m) => m.to.includes(resetUser.email) && /reset/i.test(m.subject), 60_000);
    const { token: invitationToken } = await invitationMail(app, invitation.id);

    const verified = await app.request('POST', '/api/auth/verify-email', { body: { token: linkToken(verifyMail, '/verify-email') } });
    expect(verified.status).toBe(200);
    const reset = await app.request('POST', '/api/auth/reset-password', { body: { token: linkToken(resetMail, '/reset-password'), newPassword: 'An0ther-Secret-Passw0rd!' } });
    expect(reset.status).toBe(200);
    const member = await signUp(app, { verified: true, overrides: { email: invitee } });
    const accepted = await app.request('POST', `/api/teams/invitations/${invitation.id}/accept`, { token: member.accessToken, body: { token: invitationToken } });
    expect(accepted.status).toBe(200);

    // Exactly one message each: the refused attempt sent nothing, its retry sent the one that works.
    expect([to(signup.email).length, to(resetUser.email).filter((m) => /reset/i.test(m.subject)).length, to(invitee).filter((m) => m.text.includes('/invitations/')).length]).toEqual([1, 1, 1]);
  });
});
