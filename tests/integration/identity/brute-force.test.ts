import { randomBytes, scryptSync } from 'node:crypto';
import { startTestApp, type TestApp, type TestResponse } from '../../support/app';
import { buildSignup, signUp, type SignedUpUser } from '../../support/factories';
import { createTeam, invitationMail, invite } from '../../support/teams';
import { totp } from '../../support/totp';
import { waitFor } from '../../support/wait';

/**
 * Attempt limits on the sign-in steps and on the e-mails anyone can trigger (docs/security.md,
 * "Credentials: brute force and client addresses"): per address or account, whatever the client
 * address, exponential back-off, a catalogued 429 and an e-mail to the owner when it locks.
 */
describe('brute force: attempt limits', () => {
  /**
   * The first lock, in seconds: long, so that no test's lock can end while a slow machine runs it.
   * Back-off (a lock that ends, then a longer one) is shown on an app of its own with short locks.
   */
  const LOCK = 600;
  let app: TestApp;
  let shortLocks: TestApp;
  beforeAll(async () => {
    // Behind one proxy, so X-Forwarded-For is read.
    app = await startTestApp({ env: { TRUST_PROXY: '1', AUTH_LOCK_SECONDS: String(LOCK), AUTH_LOCK_MAX_SECONDS: '3600' } });
    // A 5 s first lock, so back-off is observable; 5 s is the slack a loaded machine has between two requests.
    shortLocks = await startTestApp({ env: { TRUST_PROXY: '1', AUTH_LOCK_SECONDS: '5', AUTH_LOCK_MAX_SECONDS: '600' } });
  });
  afterAll(async () => {
    await app.close();
    await shortLocks.close();
  });

  let n = 0;
  /** A fresh client address on every call, as a botnet or a client rotating X-Forwarded-For would have. */
  const rotating = () => ({ 'X-Forwarded-For': `198.51.100.${++n % 250}, 203.0.113.${n % 250}` });
  const loginOn = (on: TestApp) => (email: string, password: string, code?: string) =>
    on.request('POST', '/api/auth/login', { body: { email, password, ...(code ? { code } : {}) }, headers: rotating() });
  const login = (email: string, password: string, code?: string) => loginOn(app)(email, password, code);
  const lockMails = (on: TestApp, email: string) => on.smtp!.messages.filter((m) => m.to.includes(email) && m.subject === 'Sign-in to your account was paused');

  /** A locked answer whose wait is at most `lock` seconds and more than `shorterThan` (time passes while the request runs). */
  function expectLocked(res: TestResponse, code: 'ERR_AUTH_015' | 'ERR_AUTH_016', lock: number, path = '/api/auth/login', shorterThan = 0) {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      statusCode: 429,
      code,
      message: code === 'ERR_AUTH_015' ? 'Too many failed attempts; try again later' : 'Too many e-mails requested; try again later',
      timestamp: expect.any(String),
      path,
      retryAfter: expect.any(Number),
      relatedInfo: { retryAfter: expect.any(Number) },
    });
    const { retryAfter } = res.body.relatedInfo;
    expect(res.body.retryAfter).toBe(retryAfter);
    expect(retryAfter).toBeLessThanOrEqual(lock);
    expect(retryAfter).toBeGreaterThan(shorterThan);
    expect(res.headers.get('retry-after')).toBe(String(retryAfter));
  }

  it('locks an address after 5 wrong passwords, whatever X-Forwarded-For says, doubles the lock, and e-mails the owner once', async () => {
    const app = shortLocks;
    const login = loginOn(app);
    const user = await signUp(app);
    for (let i = 0; i < 5; i++) {
      const wrong = await login(user.email, `wrong password ${i}`);
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('ERR_AUTH_001');
    }
    // Locked even for the right password, from yet another address.
    expectLocked(await login(user.email, user.password), 'ERR_AUTH_015', 5);

    const mail = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Sign-in to your account was paused');
    expect(mail.text).toContain('wrong password for your Formwork account several times');
    expect(mail.text).toContain('paused for 5 seconds');

    // Once the lock ends, one more guess is checked (401) and locks for twice as long.
    const after = await waitFor(async () => {
      const res = await login(user.email, 'still wrong');
      return res.status === 429 ? undefined : res;
    }, { what: 'the first lock to end' });
    expect(after.status).toBe(401);
    // Twice the first lock: more than 5 s left.
    expectLocked(await login(user.email, user.password), 'ERR_AUTH_015', 10, '/api/auth/login', 5);

    // The right password after the lock signs in and forgets the failures: the next wrong one is a plain 401.
    const signedIn = await waitFor(async () => {
      const res = await login(user.email, user.password);
      return res.status === 429 ? undefined : res;
    }, { what: 'the second lock to end' });
    expect(signedIn.status).toBe(200);
    expect((await login(user.email, 'wrong again')).status).toBe(401);
    expect((await login(user.email, 'wrong again')).status).toBe(401);
    expect(lockMails(app, user.email)).toHaveLength(1);
  });

  it('limits addresses without an account the same way (no account probing) and sends nothing', async () => {
    const email = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    for (let i = 0; i < 5; i++) expect((await login(email, `guess ${i}`)).status).toBe(401);
    expectLocked(await login(email, 'guess 5'), 'ERR_AUTH_015', LOCK);
    // Case and spaces do not make a new address.
    expectLocked(await login(`  ${email.toUpperCase()} `, 'guess 6'), 'ERR_AUTH_015', LOCK);
  });

  it('checks at most the free attempts of a parallel burst', async () => {
    const user = await signUp(app);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(user.email, `burst ${i}`)));
    const checked = answers.filter((r) => r.status === 401).length;
    const refused = answers.filter((r) => r.status === 429);
    // 5 free attempts, plus at most the one that the lock lets through at a time.
    expect(checked).toBeGreaterThanOrEqual(5);
    expect(checked).toBeLessThanOrEqual(6);
    expect(refused).toHaveLength(20 - checked);
    for (const r of refused) expect(r.body.code).toBe('ERR_AUTH_015');
  });

  describe('second factor', () => {
    async function withTwoFactor(): Promise<SignedUpUser & { secret: string }> {
      const user = await signUp(app);
      const setup = await app.request('POST', '/api/users/me/2fa/enable', { token: user.accessToken });
      expect(setup.status).toBe(200);
      const verified = await app.request('POST', '/api/users/me/2fa/verify', { token: user.accessToken, body: { code: totp(setup.body.secret) } });
      expect(verified.status).toBe(200);
      return { ...user, secret: setup.body.secret };
    }

    it('locks the account after 5 wrong TOTP or backup codes, even for the right code, and tells the owner', async () => {
      const user = await withTwoFactor();
      // The first step of a two-step login sends no code: that is not a failure.
      const needsCode = await login(user.email, user.password);
      expect(needsCode.status).toBe(401);
      expect(needsCode.body.code).toBe('ERR_AUTH_012');

      const wrongCodes = [totp(user.secret, Date.now() + 10 * 60_000), '000000', 'aaaa-bbbb', 'ABCD1234', totp(user.secret, Date.now() - 10 * 60_000)];
      for (const code of wrongCodes) {
        const res = await login(user.email, user.password, code);
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('ERR_AUTH_012');
      }
      expectLocked(await login(user.email, user.password, totp(user.secret)), 'ERR_AUTH_015', LOCK);

      const mail = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Sign-in to your account was paused');
      expect(mail.text).toContain('correct password but a wrong two-factor code');

      // The password step is not what locked: without a code the answer is still "code required".
      const stillAsks = await login(user.email, user.password);
      expect(stillAsks.status).toBe(401);
      expect(stillAsks.body.code).toBe('ERR_AUTH_012');
    });
  });

  it('shares one password limit between login, restore-account and the invitation page', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app);
    const team = await createTeam(app, owner);
    const inv = await invite(app, owner, team.id, invitee.email);
    const { token } = await invitationMail(app, inv.id);
    const form = (password: string) =>
      app.request('POST', `/invitations/${inv.id}`, {
        rawBody: new URLSearchParams({ token, email: invitee.email, password, decision: 'accept' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...rotating() },
      });
    const restore = (password: string) => app.request('POST', '/api/auth/restore-account', { body: { email: invitee.email, password }, headers: rotating() });

    expect((await login(invitee.email, 'wrong 1')).status).toBe(401);
    expect((await login(invitee.email, 'wrong 2')).status).toBe(401);
    const r1 = await restore('wrong 3');
    expect(r1.status).toBe(400);
    expect(r1.body.code).toBe('ERR_USER_006');
    expect((await restore('wrong 4')).body.code).toBe('ERR_USER_006');
    const page = await form('wrong 5');
    expect(page.status).toBe(400);
    expect(page.text).toContain('Invalid email or password');

    expectLocked(await restore(invitee.password), 'ERR_AUTH_015', LOCK, '/api/auth/restore-account');
    const lockedPage = await form(invitee.password);
    expect(lockedPage.status).toBe(429);
    const wait = lockedPage.headers.get('retry-after');
    expect(Number(wait)).toBeGreaterThan(LOCK - 60);
    expect(Number(wait)).toBeLessThanOrEqual(LOCK);
    expect(lockedPage.headers.get('content-type')).toContain('text/html');
    expect(lockedPage.text).toContain(`Too many failed attempts; try again later (in ${wait} seconds).`);
    const [membership] = await app.services.db.query(`SELECT 1 FROM memberships WHERE project_id = $1 AND user_id = $2`, [team.id, invitee.id]);
    expect(membership).toBeUndefined();
    await app.smtp!.waitForMessage((m) => m.to.includes(invitee.email) && m.subject === 'Sign-in to your account was paused');
  });

  describe('forgot-password', () => {
    const forgot = (email: string) => app.request('POST', '/api/auth/forgot-password', { body: { email }, headers: rotating() });

    it('answers byte for byte the same whether or not the address has an account, and mails only the account', async () => {
      const user = await signUp(app);
      const unknown = `nobody-${randomBytes(4).toString('hex')}@example.com`;
      const known = await forgot(user.email);
      const stranger = await forgot(unknown);
      expect(known.status).toBe(200);
      expect(stranger.status).toBe(known.status);
      expect(stranger.text).toBe(known.text);
      expect(stranger.headers.get('content-type')).toBe(known.headers.get('content-type'));
      expect(stranger.headers.get('content-length')).toBe(known.headers.get('content-length'));

      const mail = await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && m.subject === 'Reset your password');
      expect(mail.text).toContain('/reset-password?token=');
      // Both requests started the same e-mail workflow; the one for the unknown address ends without a message.
      const client = app.services.temporal;
      const query = `WorkflowType = 'sendAccountEmailWorkflow' AND TaskQueue = '${app.services.taskQueues.main}' AND FormworkKind = 'account-email:reset_password'`;
      await waitFor(async () => {
        const statuses: string[] = [];
        for await (const wf of client.workflow.list({ query })) statuses.push(wf.status.name);
        return statuses.length === 2 && statuses.every((s) => s === 'COMPLETED');
      }, { what: 'both reset e-mail workflows to complete' });
      expect(app.smtp!.messages.filter((m) => m.to.includes(unknown) || m.envelopeTo.includes(unknown))).toEqual([]);
    });

    it('limits e-mails per address, with or without an account: 3, then ERR_AUTH_016 with back-off', async () => {
      const user = await signUp(app);
      const unknown = `nobody-${randomBytes(4).toString('hex')}@example.com`;
      for (const email of [user.email, unknown]) {
        for (let i = 0; i < 3; i++) expect((await forgot(email)).status).toBe(200);
        expectLocked(await forgot(email), 'ERR_AUTH_016', LOCK, '/api/auth/forgot-password');
      }
      await waitFor(() => app.smtp!.messages.filter((m) => m.to.includes(user.email) && m.subject === 'Reset your password').length === 3, { what: '3 reset e-mails' });
      // No lock notice for e-mail limits: that would be one more e-mail.
      expect(lockMails(app, user.email)).toEqual([]);
    });
  });

  it('limits resend-verification per account', async () => {
    const user = await signUp(app);
    const resend = () => app.request('POST', '/api/auth/resend-verification', { token: user.accessToken, headers: rotating() });
    for (let i = 0; i < 3; i++) expect((await resend()).status).toBe(200);
    expectLocked(await resend(), 'ERR_AUTH_016', LOCK, '/api/auth/resend-verification');
  });
});

describe('password hash cost', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ smtp: false });
  });
  afterAll(() => app.close());

  it('hashes new passwords at an OWASP scrypt cost (N=2^14, r=8, p=5)', async () => {
    const user = await signUp(app);
    const [row] = await app.services.db.query(`SELECT password_hash FROM users WHERE id = $1`, [user.id]);
    expect(row.password_hash).toMatch(/^scrypt\$16384\$8\$5\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
  });

  it('upgrades an old, cheaper hash at the next successful login, and only then', async () => {
    const input = buildSignup();
    const user = await signUp(app, { overrides: input });
    const salt = randomBytes(16);
    const old = ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync(input.password.normalize('NFKC'), salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
    await app.services.db.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [user.id, old]);

    expect((await app.request('POST', '/api/auth/login', { body: { email: input.email, password: 'not it at all' } })).status).toBe(401);
    const [untouched] = await app.services.db.query(`SELECT password_hash FROM users WHERE id = $1`, [user.id]);
    expect(untouched.password_hash).toBe(old);

    const ok = await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password } });
    expect(ok.status).toBe(200);
    const [upgraded] = await app.services.db.query(`SELECT password_hash FROM users WHERE id = $1`, [user.id]);
    expect(upgraded.password_hash).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect(upgraded.password_hash).not.toContain(input.password);
    expect((await app.request('POST', '/api/auth/login', { body: { email: input.email, password: input.password } })).status).toBe(200);
  });
});

describe('attempt limits with REDIS_URL', () => {
  // Two API replicas of one deployment: the same Redis and the same key prefix (TEMPORAL_TASK_QUEUE_PREFIX).
  const env = { REDIS_URL: 'redis://127.0.0.1:6379', TEMPORAL_TASK_QUEUE_PREFIX: `t-${randomBytes(4).toString('hex')}`, AUTH_LOCK_SECONDS: '30' };
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    first = await startTestApp({ worker: false, smtp: false, env });
    second = await startTestApp({ worker: false, smtp: false, env });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it('shares the count and the lock between replicas', async () => {
    const email = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    for (let i = 0; i < 5; i++) {
      const replica = i % 2 === 0 ? first : second;
      expect((await replica.request('POST', '/api/auth/login', { body: { email, password: `guess ${i}` } })).status).toBe(401);
    }
    for (const replica of [first, second]) {
      const locked = await replica.request('POST', '/api/auth/login', { body: { email, password: 'guess 5' } });
      expect(locked.status).toBe(429);
      expect(locked.body.code).toBe('ERR_AUTH_015');
      expect(locked.body.relatedInfo.retryAfter).toBeGreaterThan(25);
    }
  });
});
