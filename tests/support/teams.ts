import type { TestApp } from './app';
import { linkToken, signUp, type SignedUpUser } from './factories';
import type { ParsedMail } from './smtp-server';

/** Headers that make `user`'s call act on project `teamId` (contract §2). */
export const inTeam = (teamId: string) => ({ 'X-Team-Id': teamId });

/** Creates a team project through the API as `owner`; returns the 201 body. */
export async function createTeam(app: TestApp, owner: SignedUpUser, body: Record<string, unknown> = {}): Promise<{ id: string; name: string; slug: string; createdAt: string }> {
  const res = await app.request('POST', '/api/teams', { token: owner.accessToken, body: { name: `Team ${Math.random().toString(36).slice(2, 8)}`, ...body } });
  if (res.status !== 201) throw new Error(`create team failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Sends an invitation as `inviter` into `teamId`; returns the 201 invitation body. */
export async function invite(app: TestApp, inviter: SignedUpUser, teamId: string, email: string, role?: string): Promise<any> {
  const res = await app.request('POST', '/api/teams/members/invite', { token: inviter.accessToken, headers: inTeam(teamId), body: role ? { email, role } : { email } });
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Waits for the invitation e-mail of `invitationId` and returns it with the token of its link. */
export async function invitationMail(app: TestApp, invitationId: string): Promise<{ mail: ParsedMail; token: string }> {
  const mail = await app.smtp!.waitForMessage((m) => m.text.includes(`/invitations/${invitationId}?token=`));
  return { mail, token: linkToken(mail, `/invitations/${invitationId}`) };
}

/**
 * A new verified user who joined `teamId` with `role` the way a real one does: invited by
 * `owner`, e-mailed, and accepting with the link's token.
 */
export async function addMember(app: TestApp, owner: SignedUpUser, teamId: string, role: 'admin' | 'member' | 'viewer'): Promise<SignedUpUser> {
  const user = await signUp(app, { verified: true });
  const invitation = await invite(app, owner, teamId, user.email, role);
  const { token } = await invitationMail(app, invitation.id);
  const res = await app.request('POST', `/api/teams/invitations/${invitation.id}/accept`, { token: user.accessToken, body: { token } });
  if (res.status !== 200) throw new Error(`accept failed: ${res.status} ${res.text}`);
  return user;
}
