import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp } from '../../support/factories';
import { totp } from '../../support/totp';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('account deletion: the grace period passes and everything is purged (spec "User account")', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ACCOUNT_DELETION_GRACE_SECONDS: '3' } });
  });
  afterAll(() => app.close());

  async function project(ownerId: string, members: Array<[string, string]>, deleted = false): Promise<string> {
    const id = randomUUID();
    await app.services.db.query(`INSERT INTO projects (id, name, slug, is_personal, owner_id, deleted_at) VALUES ($1, 'Team', $2, false, $3, $4)`, [
      id,
      `team-${id}`,
      ownerId,
      deleted ? new Date() : null,
    ]);
    for (const [userId, role] of members) await app.services.db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [id, userId, role]);
    return id;
  }

  it('purges the user, their projects, memberships, keys, tokens and avatar file after the grace period', async () => {
    const { db, storage, temporal } = app.services;
    const user = await signUp(app, { verified: true });
    const colleague = await signUp(app);
    let token = user.accessToken;

    // Avatar, an API key in the personal project, 2FA with backup codes.
    expect((await app.request('POST', '/api/users/me/avatar', { token, body: { imageData: PNG } })).status).toBe(200);
    const [{ avatar_key: avatarKey }] = await db.query(`SELECT avatar_key FROM users WHERE id = $1`, [user.id]);
    expect(await storage.exists(avatarKey)).toBe(true);
    expect((await app.request('POST', '/api/api-keys', { token, body: { name: 'personal key' } })).status).toBe(201);
    const setup = await app.request('POST', '/api/users/me/2fa/enable', { token });
    const verify = await app.request('POST', '/api/users/me/2fa/verify', { token, body: { code: totp(setup.body.secret) } });
    expect(verify.status).toBe(200);
    // Enabling 2FA ended the earlier session (docs/security.md): continue with the one verify answered.
    token = verify.body.accessToken;

    const soleOwned = await project(user.id, [[user.id, 'owner'], [colleague.id, 'member']]);
    const softDeleted = await project(user.id, [[user.id, 'owner']], true);
    const coOwned = await project(user.id, [[user.id, 'owner'], [colleague.id, 'owner']]);
    const colleagues = await project(colleague.id, [[colleague.id, 'owner'], [user.id, 'admin']]);
    const keyInTeam = await app.request('POST', '/api/api-keys', { token, body: { name: 'team key' }, headers: { 'X-Team-Id': colleagues } });
    expect(keyInTeam.status).toBe(201);
    const [{ id: personal }] = await db.query(`SELECT id FROM projects WHERE owner_id = $1 AND is_personal`, [user.id]);

    const del = await app.request('DELETE', '/api/users/me', { token, body: { password: user.password, reason: 'not_needed' } });
    expect(del.status).toBe(200);

    const outcome = await temporal.workflow.getHandle(`account-deletion-${user.id}`).result();
    expect(outcome).toBe('purged');

    const notice = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Your Formwork account will be deleted');
    expect(notice.text).toContain(`${app.url}/api/auth/restore-account`);

    // The user is gone: login reads as unknown credentials, the old token as invalid.
    const login = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password, code: setup.body.backupCodes[0] } });
    expect(login.status).toBe(401);
    expect(login.body.code).toBe('ERR_AUTH_001');
    expect((await app.request('GET', '/api/users/me', { token })).body.code).toBe('ERR_AUTH_004');
    const restore = await app.request('POST', '/api/auth/restore-account', { body: { email: user.email, password: user.password } });
    expect(restore.body.code).toBe('ERR_USER_006');

    const count = async (sql: string, params: unknown[]) => (await db.query(sql, params))[0].n as number;
    for (const table of ['memberships', 'refresh_tokens', 'email_tokens', 'backup_codes']) {
      expect({ table, rows: await count(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [user.id]) }).toEqual({ table, rows: 0 });
    }
    expect(await count(`SELECT count(*)::int AS n FROM users WHERE id = $1`, [user.id])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM api_keys WHERE created_by = $1`, [user.id])).toBe(0);
    // Projects only the user owned are gone (the soft-deleted one too), with their other members' memberships.
    expect(await count(`SELECT count(*)::int AS n FROM projects WHERE id = ANY($1::uuid[])`, [[personal, soleOwned, softDeleted]])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM memberships WHERE project_id = $1`, [soleOwned])).toBe(0);
    // Projects with another owner stay, handed to that owner.
    expect(await db.query(`SELECT owner_id FROM projects WHERE id = $1`, [coOwned])).toEqual([{ owner_id: colleague.id }]);
    expect(await db.query(`SELECT user_id, role FROM memberships WHERE project_id = $1`, [colleagues])).toEqual([{ user_id: colleague.id, role: 'owner' }]);
    expect(await storage.exists(avatarKey)).toBe(false);

    // The colleague is untouched, and the address can sign up afresh.
    expect((await app.request('GET', '/api/users/me', { token: colleague.accessToken })).status).toBe(200);
    expect((await app.request('POST', '/api/auth/signup', { body: { email: user.email, password: 'fresh start 123', name: 'Again' } })).status).toBe(201);
  });

  it("a run still waiting on an older request's long timer takes the new request and purges on its grace period", async () => {
    const { temporal, taskQueues } = app.services;
    const user = await signUp(app);
    // A run of an earlier request whose restore signal was lost, waiting an hour.
    const stale = await temporal.workflow.start('deleteAccountWorkflow', {
      taskQueue: taskQueues.main,
      workflowId: `account-deletion-${user.id}`,
      args: [{ userId: user.id, graceSeconds: 3600, requestToken: '20260101T000000.000000' }],
    });
    expect((await app.request('DELETE', '/api/users/me', { token: user.accessToken, body: { password: user.password } })).status).toBe(200);
    // The same run, not terminated and not replaced, purges after the new request's 3 s.
    expect(await stale.result()).toBe('purged');
    expect((await temporal.workflow.getHandle(`account-deletion-${user.id}`).describe()).runId).toBe(stale.firstExecutionRunId);
    expect((await app.services.db.query(`SELECT count(*)::int AS n FROM users WHERE id = $1`, [user.id]))[0].n).toBe(0);
  });
});
