import puppeteer, { type Browser } from 'puppeteer';
import { startTestApp, type TestApp } from '../../support/app';
import { approvalMail, approverEmail, magicToken, manualGate, runOf, submit, waitForRunStatus } from '../../support/approvals';
import { flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

/** External approvers: the review API, the review page in a real Chromium, and owners' notices. */
describe('Flow review (external approvers)', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    [app, receiver] = await Promise.all([startTestApp({ env: { FLOW_MINUTE_MS: '1000', OUTBOUND_ALLOWLIST: '127.0.0.1' } }), startWebhookReceiver()]);
    ws = await flowWorkspace(app, 'starter');
  });
  afterAll(async () => {
    await receiver.stop();
    await app.close();
  });

  /** A run waiting for `approvers`, and each approver's magic-link token. */
  const inReview = async (approvers: string[], gateExtra: Record<string, unknown> = {}, payload?: Record<string, unknown>) => {
    const gate = await manualGate(app, ws, { approvers: approvers.map((email) => ({ email })), timeoutMinutes: 120, onTimeout: 'reject' }, gateExtra);
    const runId = await submit(app, ws, gate, payload);
    const tokens = await Promise.all(approvers.map(async (email) => magicToken(await approvalMail(app, email))));
    return { gate, runId, tokens };
  };
  const authenticate = (token: string, email: string) => app.request('POST', '/api/flow/review/authenticate', { body: { token, email } });
  const signIn = async (token: string, email: string): Promise<string> => {
    const res = await authenticate(token, email);
    if (res.status !== 200) throw new Error(`authenticate: ${res.status} ${res.text}`);
    return res.body.reviewToken;
  };

  it('validate → e-mail → authenticate → inbox → detail → approve → delivered', async () => {
    const email = approverEmail();
    const payload = { customer: 'Ada <b>', amount: 42 };
    const { gate, runId, tokens } = await inReview([email], { deliveryChannels: [{ type: 'webhook', url: `${receiver.url}/hook`, secret: 'a-long-secret' }] }, payload);
    const auth = await authenticate(tokens[0], email.toUpperCase());
    expect(auth.status).toBe(200);
    expect(auth.body).toEqual({ reviewToken: expect.stringMatching(/^fmrv_/), expiresIn: expect.any(Number), approvalId: expect.any(String) });
    // FLOW_REVIEW_TOKEN_TTL_SECONDS (1 h), capped by the approval window (120 "minutes" of 1 s here).
    expect(auth.body.expiresIn).toBeGreaterThan(100);
    expect(auth.body.expiresIn).toBeLessThanOrEqual(120);
    const reviewToken = auth.body.reviewToken;

    const inbox = await app.request('GET', '/api/flow/review/inbox', { token: reviewToken });
    expect(inbox.body.data).toEqual([expect.objectContaining({ runId, gateName: gate.name, approverEmail: email, status: 'pending' })]);
    const id = inbox.body.data[0].id;
    const detail = await app.request('GET', `/api/flow/review/approvals/${id}`, { token: reviewToken });
    expect(detail.body).toMatchObject({ id, runId, status: 'pending', payload, artefactUrl: null });

    const res = await app.request('POST', `/api/flow/review/approvals/${id}/approve`, { token: reviewToken, body: { comment: 'ok' } });
    expect([res.status, res.body]).toEqual([200, { success: true, decision: 'approved' }]);
    await waitForRunStatus(app, ws, runId, ['completed']);
    expect(receiver.requests.filter((r) => r.path === '/hook')).toHaveLength(1);
    // Tokens die with the decision: the session has nothing left, and the link is spent.
    const after = await app.request('GET', '/api/flow/review/inbox', { token: reviewToken });
    expect([after.status, after.body.code]).toEqual([401, 'FLOW.REVIEW_TOKEN_INVALID']);
    expect((await authenticate(tokens[0], email)).body.code).toBe('FLOW.REVIEW_LINK_INVALID');
  });

  it('rejects through the review API', async () => {
    const email = approverEmail();
    const { runId, tokens } = await inReview([email]);
    const reviewToken = await signIn(tokens[0], email);
    const [approval] = (await app.request('GET', '/api/flow/review/inbox', { token: reviewToken })).body.data;
    const res = await app.request('POST', `/api/flow/review/approvals/${approval.id}/reject`, { token: reviewToken, body: { comment: 'wrong amount' } });
    expect(res.body).toEqual({ success: true, decision: 'rejected' });
    await waitForRunStatus(app, ws, runId, ['rejected']);
  });

  it('refuses a wrong e-mail, an unknown or expired link, and scopes a review token to its e-mail', async () => {
    const [a, b] = [approverEmail(), approverEmail()];
    const { tokens } = await inReview([a, b]);
    for (const [token, email] of [
      [tokens[0], b],
      ['not-a-token', a],
    ]) {
      const res = await authenticate(token, email);
      expect([res.status, res.body.code]).toEqual([401, 'FLOW.REVIEW_LINK_INVALID']);
    }
    const tokenA = await signIn(tokens[0], a);
    const [{ id: idB }] = (await app.request('GET', '/api/flow/review/inbox', { token: await signIn(tokens[1], b) })).body.data;
    for (const [method, path] of [
      ['GET', `/api/flow/review/approvals/${idB}`],
      ['POST', `/api/flow/review/approvals/${idB}/approve`],
    ]) {
      const res = await app.request(method, path, { token: tokenA, body: method === 'POST' ? {} : undefined });
      expect([res.status, res.body.code]).toEqual([404, 'FLOW.APPROVAL_NOT_FOUND']);
    }
    // Review tokens only open review endpoints, and API keys do not open them.
    expect((await app.request('GET', '/api/flow/approvals', { token: tokenA })).status).toBe(403);
    expect((await app.request('GET', '/api/flow/review/inbox', { token: ws.key })).status).toBe(403);
    expect((await app.request('GET', '/api/flow/review/inbox')).status).toBe(401);
    expect((await app.request('GET', '/api/flow/review/inbox', { token: 'fmrv_unknown' })).body.code).toBe('FLOW.REVIEW_TOKEN_INVALID');

    await app.services.db.query(`UPDATE flow_approvals SET magic_token_expires_at = now() - interval '1 second' WHERE approver_email = $1`, [a]);
    expect((await authenticate(tokens[0], a)).body.code).toBe('FLOW.REVIEW_LINK_INVALID');
    // Plain tokens are never stored.
    const stored = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_approvals WHERE magic_token_hash = $1`, [tokens[1]]);
    expect(stored[0].n).toBe(0);
  });

  it('a review token opens only the approvals of its e-mail in the project whose link minted it', async () => {
    const email = approverEmail('two-tenants');
    const other = await flowWorkspace(app, 'starter');
    const mine = await inReview([email]);
    const foreignGate = await manualGate(app, other, { approvers: [{ email }], timeoutMinutes: 120, onTimeout: 'reject' });
    const foreignRun = await submit(app, other, foreignGate);
    const foreignToken = magicToken(await approvalMail(app, email, 2));
    const [{ id: foreignId }] = await app.services.db.query(`SELECT id FROM flow_approvals WHERE run_id = $1`, [foreignRun]);

    const reviewToken = await signIn(mine.tokens[0], email);
    const inbox = await app.request('GET', '/api/flow/review/inbox', { token: reviewToken });
    expect(inbox.body.data.map((a: any) => a.runId)).toEqual([mine.runId]);
    expect(inbox.body.meta.total).toBe(1);
    for (const [method, path] of [
      ['GET', `/api/flow/review/approvals/${foreignId}`],
      ['POST', `/api/flow/review/approvals/${foreignId}/approve`],
    ]) {
      const res = await app.request(method, path, { token: reviewToken, body: method === 'POST' ? {} : undefined });
      expect([res.status, res.body.code]).toEqual([404, 'FLOW.APPROVAL_NOT_FOUND']);
    }
    const [row] = await app.services.db.query(`SELECT status FROM flow_approvals WHERE id = $1`, [foreignId]);
    expect(row.status).toBe('pending');
    // The other project's own link opens its approval, and only that one.
    const otherToken = await signIn(foreignToken, email);
    const otherInbox = await app.request('GET', '/api/flow/review/inbox', { token: otherToken });
    expect(otherInbox.body.data.map((a: any) => a.id)).toEqual([foreignId]);
    const res = await app.request('POST', `/api/flow/review/approvals/${foreignId}/reject`, { token: otherToken, body: {} });
    expect(res.body).toEqual({ success: true, decision: 'rejected' });
    await waitForRunStatus(app, other, foreignRun, ['rejected']);
    // Deciding there did not end the first session: its own approval is still pending in it.
    expect((await app.request('GET', '/api/flow/review/inbox', { token: reviewToken })).body.data.map((a: any) => a.runId)).toEqual([mine.runId]);
  });

  it('re-sends the magic link on request, rate limited per e-mail', async () => {
    const email = approverEmail();
    let { tokens: [token] } = await inReview([email]);
    for (let n = 2; n <= 4; n += 1) {
      const res = await app.request('POST', '/api/flow/review/resend', { body: { token, email } });
      expect([res.status, res.body]).toEqual([200, { success: true }]);
      const next = magicToken(await approvalMail(app, email, n));
      expect((await authenticate(token, email)).status).toBe(401);
      token = next;
    }
    const limited = await app.request('POST', '/api/flow/review/resend', { body: { token, email } });
    expect([limited.status, limited.body.code]).toEqual([429, 'ERR_QUOTA_003']);
    expect((await authenticate(token, email)).status).toBe(200);
  });

  it('a link opens one session; what became of it is read without changing it; a used or replaced link sends a new one', async () => {
    const email = approverEmail();
    const { runId, tokens: [token] } = await inReview([email]);
    const link = async (t: string) => (await app.request('POST', '/api/flow/review/link', { body: { token: t } })).body;
    const resend = (t: string, e = email) => app.request('POST', '/api/flow/review/resend', { body: { token: t, email: e } });
    expect(await link(token)).toEqual({ state: 'valid', canResend: true, decision: null, decidedAt: null, expiresAt: expect.any(String) });
    expect(await link(token)).toMatchObject({ state: 'valid' });
    expect(await link('not-a-token')).toEqual({ state: 'invalid', canResend: false, decision: null, decidedAt: null, expiresAt: null });
    expect((await app.request('POST', '/api/flow/review/link', { body: {} })).body.code).toBe('ERR_VALID_005');
    for (const body of [{ token: 'x'.repeat(201) }, { token: { $ne: null } }, { token: ['a'] }, { token, email }]) {
      const refused = await app.request('POST', '/api/flow/review/link', { body });
      expect([refused.status, refused.body.code]).toEqual([400, 'ERR_VALID_001']);
    }

    await signIn(token, email);
    expect((await authenticate(token, email)).body.code).toBe('FLOW.REVIEW_LINK_INVALID');
    expect(await link(token)).toMatchObject({ state: 'used', canResend: true });
    // Another address cannot make a used link send anything.
    expect((await resend(token, approverEmail())).body.code).toBe('FLOW.REVIEW_LINK_INVALID');
    expect((await resend(token)).body).toEqual({ success: true });
    const second = magicToken(await approvalMail(app, email, 2));
    expect(await link(second)).toMatchObject({ state: 'valid' });
    expect((await resend(second)).status).toBe(200);
    const third = magicToken(await approvalMail(app, email, 3));
    expect(await link(second)).toMatchObject({ state: 'replaced', canResend: true });
    expect((await authenticate(second, email)).status).toBe(401);

    const reviewToken = await signIn(third, email);
    const [approval] = (await app.request('GET', '/api/flow/review/inbox', { token: reviewToken })).body.data;
    await app.request('POST', `/api/flow/review/approvals/${approval.id}/reject`, { token: reviewToken, body: { comment: 'no' } });
    await waitForRunStatus(app, ws, runId, ['rejected']);
    for (const t of [token, second, third]) expect(await link(t)).toMatchObject({ state: 'decided', canResend: false, decision: 'rejected', decidedAt: expect.any(String) });
    expect((await resend(third)).body.code).toBe('FLOW.REVIEW_LINK_INVALID');
    // Only hashes of the links are kept.
    const [{ n }] = await app.services.db.query(`SELECT count(*)::int AS n FROM flow_review_links WHERE token_hash = ANY($1)`, [[token, second, third]]);
    expect(n).toBe(0);
  });

  it('a link whose time to decide ran out says expired and offers no new link', async () => {
    const email = approverEmail();
    const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 2, onTimeout: 'reject' });
    const runId = await submit(app, ws, gate);
    const token = magicToken(await approvalMail(app, email));
    await waitForRunStatus(app, ws, runId, ['expired']);
    const status = await app.request('POST', '/api/flow/review/link', { body: { token } });
    expect(status.body).toMatchObject({ state: 'expired', canResend: false, decision: 'expired', expiresAt: expect.any(String) });
    expect((await app.request('POST', '/api/flow/review/resend', { body: { token, email } })).body.code).toBe('FLOW.REVIEW_LINK_INVALID');
  });

  it('a browser session keeps the review token in an HttpOnly cookie, read only with the session header from this origin', async () => {
    const email = approverEmail();
    const { tokens: [token] } = await inReview([email]);
    const post = (path: string, headers: Record<string, string>, body?: unknown) =>
      fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    const session = { 'X-Formwork-Session': 'cookie' };
    // Another site's page is refused before the link is spent.
    const foreign = await post('/api/flow/review/authenticate', { ...session, Origin: 'https://elsewhere.example' }, { token, email });
    expect(foreign.status).toBe(403);
    const res = await post('/api/flow/review/authenticate', { ...session, Origin: app.url }, { token, email });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ expiresIn: expect.any(Number), approvalId: expect.any(String) });
    const setCookie = res.headers.get('set-cookie')!.toLowerCase();
    expect(setCookie).toMatch(/^formwork_review=fmrv_/);
    for (const attribute of ['path=/api/flow/review', 'samesite=strict', 'httponly']) expect(setCookie).toContain(attribute);
    const cookie = res.headers.get('set-cookie')!.split(';')[0];

    const inbox = (headers: Record<string, string>) => fetch(`${app.url}/api/flow/review/inbox`, { headers: { cookie, ...headers } });
    const listed = await inbox(session);
    expect(listed.status).toBe(200);
    const [approval] = (await listed.json()).data;
    expect((await inbox({})).status).toBe(401);
    expect((await inbox({ ...session, Origin: 'https://elsewhere.example' })).status).toBe(403);
    const detail = await (await fetch(`${app.url}/api/flow/review/approvals/${approval.id}`, { headers: { cookie, ...session } })).json();
    expect(detail).toMatchObject({ id: approval.id, payload: { customer: 'Ada', amount: 42 }, schema: null, document: null, submittedAt: expect.any(String) });
    const noDocument = await fetch(`${app.url}/api/flow/review/approvals/${approval.id}/document`, { headers: { cookie, ...session } });
    expect(noDocument.status).toBe(404);

    expect((await post('/api/flow/review/sign-out', { ...session, cookie })).status).toBe(204);
    const after = await inbox(session);
    expect([after.status, (await after.json()).code]).toEqual([401, 'FLOW.REVIEW_TOKEN_INVALID']);
  });

  it('notifies the gate owners at once in immediate mode, and in a digest otherwise', async () => {
    const owner = ws.user.email;
    const immediate = await inReview([approverEmail()], { notificationMode: 'immediate' });
    const run = await runOf(app, ws, immediate.runId);
    const notice = await app.smtp!.waitForMessage((m) => m.to.includes(owner) && m.subject === `Run ${run.shortId} needs review`);
    expect(notice.text).toContain(immediate.runId);

    const gate = await manualGate(app, ws, { approvers: [{ email: approverEmail() }], timeoutMinutes: 120, onTimeout: 'reject' }, { notificationMode: 'digest', notificationDigestMinutes: 2 });
    const [r1, r2] = [await submit(app, ws, gate), await submit(app, ws, gate)];
    const digest = await app.smtp!.waitForMessage((m) => m.to.includes(owner) && m.text.includes(r1), 15_000);
    expect(digest.subject).toBe('2 runs need review');
    expect(digest.text).toContain(r2);
  });

  describe('the review page in a real browser', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await puppeteer.launch({
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
      });
    });
    afterAll(() => browser.close());

    it('opens the e-mailed link, confirms the e-mail, reads the payload, approves with a comment', async () => {
      const email = approverEmail();
      const payload = { customer: '<script>alert(1)</script>', amount: 42 };
      const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 120, onTimeout: 'reject' });
      const runId = await submit(app, ws, gate, payload);
      const mail = await approvalMail(app, email);
      // The link opens the dashboard's page when the app is built; the page without script is the same form.
      const link = /https?:\/\/\S+\/review\?token=\S+/.exec(mail.text)![0].replace('/review?', '/no-script/review?');

      const page = await browser.newPage();
      try {
        const first = await page.goto(link);
        expect(first!.headers()['content-security-policy']).toContain("default-src 'none'");
        await page.type('#email', email);
        await Promise.all([page.waitForNavigation(), page.click('#continue')]);
        expect(page.url()).toMatch(/\/review\/approvals\/[0-9a-f-]{36}$/);
        const shown = await page.$eval('#payload', (el) => el.textContent);
        expect(JSON.parse(shown!)).toEqual(payload);
        expect(await page.$('script')).toBeNull();
        await page.type('#comment-approve', 'Checked in the browser');
        await Promise.all([page.waitForNavigation(), page.click('#approve')]);
        expect(await page.$eval('#result', (el) => el.textContent)).toContain('approved');
        const cookies = await page.cookies();
        expect(cookies.find((c) => c.name === 'fm_review')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/review' });
      } finally {
        await page.close();
      }
      const run = await waitForRunStatus(app, ws, runId, ['approved', 'delivering', 'completed']);
      expect(['approved', 'delivering', 'completed']).toContain(run.status);
      const [row] = await app.services.db.query(`SELECT status, comment FROM flow_approvals WHERE run_id = $1`, [runId]);
      expect(row).toEqual({ status: 'approved', comment: 'Checked in the browser' });
    });

    it('shows an error page for a wrong e-mail', async () => {
      const email = approverEmail();
      const { tokens } = await inReview([email]);
      const page = await browser.newPage();
      try {
        await page.goto(`${app.url}/no-script/review?token=${encodeURIComponent(tokens[0])}`);
        await page.type('#email', approverEmail('someone-else'));
        const [res] = await Promise.all([page.waitForNavigation(), page.click('#continue')]);
        expect(res!.status()).toBe(401);
        expect(await page.$eval('[role=alert]', (el) => el.textContent)).toContain('do not match');
      } finally {
        await page.close();
      }
      await waitFor(async () => (await runOf(app, ws, (await app.services.db.query(`SELECT run_id FROM flow_approvals WHERE approver_email = $1`, [email]))[0].run_id)).status === 'review_required');
    });
  });
});
