import { CancelledFailure } from '@temporalio/client';
import { createAccountDeletionActivities } from '../../../activities/identity/account-deletion.activity';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';

describe('account deletion: pending, restore, cancellation (spec "User account", contract §2)', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Long enough that nothing here is purged while a test runs.
    app = await startTestApp({ env: { ACCOUNT_DELETION_GRACE_SECONDS: '600' } });
  });
  afterAll(() => app.close());

  const handle = (user: SignedUpUser) => app.services.temporal.workflow.getHandle(`account-deletion-${user.id}`);
  const row = async (user: SignedUpUser) =>
    (await app.services.db.query(`SELECT deletion_status, deletion_requested_at, deletion_reason, deletion_reason_text FROM users WHERE id = $1`, [user.id]))[0];
  const deleteAccount = (user: SignedUpUser, body: unknown = { password: user.password }) => app.request('DELETE', '/api/users/me', { token: user.accessToken, body });
  const restore = (email: string, password: string) => app.request('POST', '/api/auth/restore-account', { body: { email, password } });

  it('needs the right password to delete (ERR_AUTH_002) and a password at all', async () => {
    const user = await signUp(app);
    const wrong = await deleteAccount(user, { password: 'not my password' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ code: 'ERR_AUTH_002', relatedInfo: { field: 'password' } });
    const missing = await deleteAccount(user, { reason: 'bye' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'password' } });
    expect((await row(user)).deletion_status).toBeNull();
  });

  it('locks a pending account (ERR_USER_004), and restores it within the grace period', async () => {
    const user = await signUp(app);
    const res = await deleteAccount(user, { password: user.password, reason: 'too_expensive', reasonText: 'Found something cheaper' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.stringContaining('restore-account') });
    expect(await row(user)).toMatchObject({ deletion_status: 'pending', deletion_reason: 'too_expensive', deletion_reason_text: 'Found something cheaper' });

    const me = await app.request('GET', '/api/users/me', { token: user.accessToken });
    expect(me.status).toBe(403);
    expect(me.body.code).toBe('ERR_USER_004');
    const login = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(login.status).toBe(403);
    expect(login.body.code).toBe('ERR_USER_004');
    expect((await app.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status).toBe(401);
    expect((await handle(user).describe()).status.name).toBe('RUNNING');
    const notice = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Your Formwork account will be deleted');
    expect(notice.text).toMatch(/deleted permanently/);

    // Wrong password and unknown address read the same.
    const wrong = await restore(user.email, 'wrong password');
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ERR_USER_006');
    const unknown = await restore('nobody@example.com', user.password);
    expect(unknown.body).toMatchObject({ code: 'ERR_USER_006', message: wrong.body.message });

    const ok = await restore(user.email.toUpperCase(), user.password);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ message: expect.any(String) });
    expect(await handle(user).result()).toBe('restored');
    expect(await row(user)).toEqual({ deletion_status: null, deletion_requested_at: null, deletion_reason: null, deletion_reason_text: null });

    const again = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(again.status).toBe(200);
    expect((await app.request('GET', '/api/users/me', { token: again.body.accessToken })).status).toBe(200);
    const twice = await restore(user.email, user.password);
    expect(twice.status).toBe(400);
    expect(twice.body.code).toBe('ERR_USER_007');

    // A late timer finds nothing to purge: the database decides (restore won the race).
    const activities = createAccountDeletionActivities({ ...app.services, publicUrl: app.url });
    expect(await activities.beginAccountPurge({ userId: user.id })).toBe(false);
    expect((await row(user)).deletion_status).toBeNull();
  });

  it('refuses to restore an account that is not deleted (ERR_USER_007), but only to its password holder', async () => {
    const user = await signUp(app);
    const res = await restore(user.email, user.password);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ERR_USER_007');
    expect((await restore(user.email, 'wrong password')).body.code).toBe('ERR_USER_006');
  });

  it('answers ERR_USER_005 everywhere while the purge is in progress', async () => {
    const user = await signUp(app);
    // The purge phase lasts one activity; hold the account in it to look at the answers.
    await app.services.db.query(`UPDATE users SET deletion_status = 'purging', deletion_requested_at = now() WHERE id = $1`, [user.id]);
    await app.syncCredentials();
    const me = await app.request('GET', '/api/users/me', { token: user.accessToken });
    expect(me.status).toBe(403);
    expect(me.body.code).toBe('ERR_USER_005');
    const login = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect(login.status).toBe(403);
    expect(login.body.code).toBe('ERR_USER_005');
    const res = await restore(user.email, user.password);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ERR_USER_005');
  });

  it('cancelling the workflow stops the deletion and gives the account back', async () => {
    const user = await signUp(app);
    expect((await deleteAccount(user)).status).toBe(200);
    await handle(user).cancel();
    // The run ends as cancelled only after its non-cancellable clean-up step has given the account back.
    await expect(handle(user).result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
    expect((await handle(user).describe()).status.name).toBe('CANCELLED');
    expect((await row(user)).deletion_status).toBeNull();
    expect((await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(200);
  });

  it('can be requested again after a restore; a stale run takes the new request, never terminated, never left to purge on its old timer', async () => {
    const user = await signUp(app);
    expect((await deleteAccount(user)).status).toBe(200);
    const firstRun = (await handle(user).describe()).runId;
    expect((await restore(user.email, user.password)).status).toBe(200);
    expect(await handle(user).result()).toBe('restored');

    const relogin = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    const again = { ...user, accessToken: relogin.body.accessToken };
    expect((await deleteAccount(again)).status).toBe(200);
    const secondRun = (await handle(user).describe()).runId;
    expect(secondRun).not.toBe(firstRun);

    // A restore whose signal got lost: the database is cleared but the run still waits.
    await app.services.db.query(`UPDATE users SET deletion_status = NULL WHERE id = $1`, [user.id]);
    await app.syncCredentials();
    // The request before ended every session (docs/security.md): the user signs in again.
    const third = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect((await deleteAccount({ ...user, accessToken: third.body.accessToken })).status).toBe(200);
    // The run still waiting took the new request (signal-with-start) instead of being terminated for a new one.
    const current = await handle(user).describe();
    expect([current.runId, current.status.name]).toEqual([secondRun, 'RUNNING']);
    expect((await restore(user.email, user.password)).status).toBe(200);
    expect(await handle(user).result()).toBe('restored');
  });

  it("a run of an older request whose timer runs out does not purge the account's newer pending request", async () => {
    const user = await signUp(app);
    expect((await deleteAccount(user)).status).toBe(200);
    // An operator ends the request's run, and a run of an earlier request (its restore signal lost) is
    // still there with its own short timer: when it fires, the pending deletion is not its request.
    await handle(user).terminate('test: the request run is gone');
    const stale = await app.services.temporal.workflow.start('deleteAccountWorkflow', {
      taskQueue: app.services.taskQueues.main,
      workflowId: `account-deletion-${user.id}`,
      args: [{ userId: user.id, graceSeconds: 1, requestToken: '20260101T000000.000000' }],
    });
    expect(await stale.result()).toBe('restored');
    expect((await row(user)).deletion_status).toBe('pending');
    expect((await app.services.db.query(`SELECT count(*)::int AS n FROM users WHERE id = $1`, [user.id]))[0].n).toBe(1);
  });
});
