import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember, createTeam, inTeam } from '../../support/teams';

/**
 * docs/identity.md, "Why a key is inactive": a key minted by a member stops working when that
 * member leaves the project or their account is pending deletion, and the key list says why.
 */
describe('API keys: a key ends with its creator\'s place in the project', () => {
  let app: TestApp;
  let owner: SignedUpUser;
  beforeAll(async () => {
    // Long enough that no account deleted here is purged while the tests run.
    app = await startTestApp({ env: { ACCOUNT_DELETION_GRACE_SECONDS: '600' } });
    owner = await signUp(app, { verified: true });
  });
  afterAll(() => app.close());

  /** A call only an API key can make (template reads), as the key. */
  const useKey = (plainKey: string) => app.request('GET', '/api/templates', { token: plainKey });
  const listed = async (teamId: string, id: string) => {
    const res = await app.request('GET', '/api/api-keys', { token: owner.accessToken, headers: inTeam(teamId) });
    expect(res.status).toBe(200);
    return res.body.data.find((k: { id: string }) => k.id === id);
  };

  it('stops a key at once when its creator is removed from the project; the list and the key show why', async () => {
    const team = await createTeam(app, owner);
    const admin = await addMember(app, owner, team.id, 'admin');
    const theirs = await createKey(app, admin.accessToken, { name: 'made by the admin' }, team.id);
    const ours = await createKey(app, owner.accessToken, { name: 'made by the owner' }, team.id);
    expect(theirs.inactiveReason).toBeNull();
    expect((await useKey(theirs.plainKey)).status).toBe(200);

    const removed = await app.request('DELETE', `/api/teams/members/${admin.id}`, { token: owner.accessToken, headers: inTeam(team.id) });
    expect(removed.status).toBe(200);

    const refused = await useKey(theirs.plainKey);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'ERR_AKEY_003', relatedInfo: { reason: 'creator_left_project' } });
    expect(refused.body.message).toMatch(/no longer in the project/);
    // The owner's own key of the same project is untouched.
    expect((await useKey(ours.plainKey)).status).toBe(200);

    // The key's own switch is still on; inactiveReason says why it does not work.
    expect(await listed(team.id, theirs.id)).toMatchObject({ isActive: true, inactiveReason: 'creator_left_project' });
    expect(await listed(team.id, ours.id)).toMatchObject({ isActive: true, inactiveReason: null });
    const one = await app.request('GET', `/api/api-keys/${theirs.id}`, { token: owner.accessToken, headers: inTeam(team.id) });
    expect(one.body).toMatchObject({ id: theirs.id, inactiveReason: 'creator_left_project' });
    const patched = await app.request('PATCH', `/api/api-keys/${theirs.id}`, { token: owner.accessToken, headers: inTeam(team.id), body: { isActive: true } });
    expect(patched.body).toMatchObject({ isActive: true, inactiveReason: 'creator_left_project' });
    // Switching it back on does not bring it back: the creator is still gone.
    expect((await useKey(theirs.plainKey)).status).toBe(401);
  });

  it('stops the keys of an account pending deletion in every project, and brings them back on restore', async () => {
    const team = await createTeam(app, owner);
    const admin = await addMember(app, owner, team.id, 'admin');
    const teamKey = await createKey(app, admin.accessToken, { name: 'team key' }, team.id);
    const personalKey = await createKey(app, admin.accessToken, { name: 'personal key' });
    expect((await useKey(teamKey.plainKey)).status).toBe(200);

    const del = await app.request('DELETE', '/api/users/me', { token: admin.accessToken, body: { password: admin.password } });
    expect(del.status).toBe(200);
    for (const key of [teamKey, personalKey]) {
      const res = await useKey(key.plainKey);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'ERR_AKEY_003', relatedInfo: { reason: 'creator_pending_deletion' } });
    }
    expect(await listed(team.id, teamKey.id)).toMatchObject({ isActive: true, inactiveReason: 'creator_pending_deletion' });

    const restored = await app.request('POST', '/api/auth/restore-account', { body: { email: admin.email, password: admin.password } });
    expect(restored.status).toBe(200);
    expect((await useKey(teamKey.plainKey)).status).toBe(200);
    expect((await useKey(personalKey.plainKey)).status).toBe(200);
    expect(await listed(team.id, teamKey.id)).toMatchObject({ inactiveReason: null });
  });

  it('names revoked and expired keys too, and keeps both refused with ERR_AKEY_003', async () => {
    const team = await createTeam(app, owner);
    const revoked = await createKey(app, owner.accessToken, { name: 'revoked' }, team.id);
    const expired = await createKey(app, owner.accessToken, { name: 'expired', expiresAt: new Date(Date.now() + 3_600_000).toISOString() }, team.id);
    expect((await app.request('POST', `/api/api-keys/${revoked.id}/revoke`, { token: owner.accessToken, headers: inTeam(team.id) })).status).toBe(200);
    // Time passing, without waiting for it: the expiry moves into the past.
    await app.services.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    await app.syncCredentials();

    expect(await listed(team.id, revoked.id)).toMatchObject({ isActive: false, inactiveReason: 'revoked' });
    expect(await listed(team.id, expired.id)).toMatchObject({ isActive: true, inactiveReason: 'expired' });
    for (const [key, reason] of [[revoked, 'revoked'], [expired, 'expired']] as const) {
      const res = await useKey(key.plainKey);
      expect([res.status, res.body.code, res.body.relatedInfo]).toEqual([401, 'ERR_AKEY_003', { reason }]);
    }
  });
});
