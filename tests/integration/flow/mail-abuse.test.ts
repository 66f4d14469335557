import { startTestApp, type TestApp } from '../../support/app';
import { approvalMail, approverEmail, magicToken, manualGate, submit, waitForRunStatus } from '../../support/approvals';
import { signUp } from '../../support/factories';
import { flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { personalProjectId } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * No open relay (docs/security.md, "Uploads, output and mail"): only a verified account makes the
 * service e-mail approvers, and re-sends (approval links, verification e-mails) are rate limited
 * per recipient (RESEND_PER_RECIPIENT_PER_HOUR) and per project (RESEND_PER_PROJECT_PER_HOUR).
 */
describe('Mail abuse: verified senders and re-send limits', () => {
  const PER_RECIPIENT = 2;
  const PER_PROJECT = 3;
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      env: {
        RESEND_PER_RECIPIENT_PER_HOUR: String(PER_RECIPIENT),
        RESEND_PER_PROJECT_PER_HOUR: String(PER_PROJECT),
        // The per-account e-mail back-off of sign-in protection is tested elsewhere; keep it out of the way.
        AUTH_EMAILS_BEFORE_LOCK: '100',
      },
    });
  });
  afterAll(() => app.close());

  const approval = (email: string) => ({ approvers: [{ email }], timeoutMinutes: 60, onTimeout: 'reject' });
  const mailsTo = (email: string) => app.smtp!.messages.filter((m) => m.to.includes(email));
  const gateCount = async (projectId: string) => (await app.services.db.query(`SELECT count(*)::int AS n FROM flow_gates WHERE project_id = $1`, [projectId]))[0].n;

  it('an unverified account cannot name approvers (403 ERR_AUTH_006); a gate without approvers is fine', async () => {
    const user = await signUp(app);
    const projectId = await personalProjectId(app, user.id);
    const victim = approverEmail('victim');
    const refused = await app.request('POST', '/api/flow/gates', { token: user.accessToken, body: { name: 'Spam', approvalMode: 'manual', approvalConfig: approval(victim) } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'ERR_AUTH_006', relatedInfo: { required: 'caller' } });
    expect(await gateCount(projectId)).toBe(0);

    const plain = await app.request('POST', '/api/flow/gates', { token: user.accessToken, body: { name: 'Plain' } });
    expect(plain.status).toBe(201);
    const update = await app.request('PUT', `/api/flow/gates/${plain.body.id}`, { token: user.accessToken, body: { approvalMode: 'manual', approvalConfig: approval(victim) } });
    expect(update.status).toBe(403);
    expect(update.body.code).toBe('ERR_AUTH_006');
    expect(mailsTo(victim)).toEqual([]);
  });

  it("an API key counts as its project owner's: refused while the owner's address is unverified", async () => {
    const ws = await flowWorkspace(app);
    // The owner's verification lapses (e.g. an account from before verification was required).
    await app.services.db.query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [ws.user.id]);
    const victim = approverEmail('victim');
    const refused = await app.request('POST', '/api/flow/gates', { token: ws.key, body: { name: 'Spam', approvalMode: 'manual', approvalConfig: approval(victim) } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'ERR_AUTH_006', relatedInfo: { required: 'project_owner' } });
    await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [ws.user.id]);
    expect((await app.request('POST', '/api/flow/gates', { token: ws.key, body: { name: 'Fine', approvalMode: 'manual', approvalConfig: approval(victim) } })).status).toBe(201);
  });

  describe('approval-link re-sends', () => {
    let ws: FlowWorkspace;
    beforeAll(async () => {
      ws = await flowWorkspace(app);
    });

    async function runInReview(email: string): Promise<string> {
      const gate = await manualGate(app, ws, approval(email));
      const runId = await submit(app, ws, gate);
      await waitForRunStatus(app, ws, runId, ['review_required']);
      await approvalMail(app, email);
      return runId;
    }
    const resend = (runId: string, token = ws.key) => app.request('POST', `/api/flow/approvals/resend/${runId}`, { token });

    it(`per recipient (${PER_RECIPIENT} an hour: 429 ERR_LIMIT_012) and per project (${PER_PROJECT} an hour: 429 ERR_LIMIT_013)`, async () => {
      const first = approverEmail('first');
      const runId = await runInReview(first);
      for (let i = 0; i < PER_RECIPIENT; i++) {
        const ok = await resend(runId);
        expect(ok.status).toBe(200);
        expect(ok.body).toMatchObject({ success: true, sentCount: 1 });
      }
      await approvalMail(app, first, 1 + PER_RECIPIENT, /approval/i);
      const tooMany = await resend(runId);
      expect(tooMany.status).toBe(429);
      expect(tooMany.body).toMatchObject({ code: 'ERR_LIMIT_012', relatedInfo: { limit: PER_RECIPIENT, retryAfter: expect.any(Number) } });

      // That refused call spent the project's third re-send: another approver of the project waits too.
      const second = approverEmail('second');
      const other = await runInReview(second);
      const projectSpent = await resend(other);
      expect(projectSpent.status).toBe(429);
      expect(projectSpent.body).toMatchObject({ code: 'ERR_LIMIT_013', relatedInfo: { limit: PER_PROJECT } });
      expect(mailsTo(first)).toHaveLength(1 + PER_RECIPIENT);
      expect(mailsTo(second)).toHaveLength(1);
    });

    it('the approver\'s own re-send (POST /api/flow/review/resend) spends the same per-recipient budget', async () => {
      const own = await flowWorkspace(app);
      const email = approverEmail('own');
      const gate = await manualGate(app, own, approval(email));
      const runId = await submit(app, own, gate);
      await waitForRunStatus(app, own, runId, ['review_required']);
      for (let n = 1; n <= PER_RECIPIENT; n++) {
        const token = magicToken(await approvalMail(app, email, n, /approval/i));
        const ok = await app.request('POST', '/api/flow/review/resend', { body: { token, email } });
        expect(ok.status).toBe(200);
      }
      const latest = magicToken(await approvalMail(app, email, 1 + PER_RECIPIENT, /approval/i));
      const refused = await app.request('POST', '/api/flow/review/resend', { body: { token: latest, email } });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'ERR_LIMIT_012', relatedInfo: { limit: PER_RECIPIENT } });
      // The workspace's re-send reaches nobody new either.
      const workspace = await app.request('POST', `/api/flow/approvals/resend/${runId}`, { token: own.key });
      expect(workspace.status).toBe(429);
      expect(workspace.body.code).toBe('ERR_LIMIT_012');
      expect(mailsTo(email)).toHaveLength(1 + PER_RECIPIENT);
    });

    it('needs a verified account behind the call: 403 ERR_AUTH_006', async () => {
      const other = await flowWorkspace(app);
      const email = approverEmail('third');
      const gate = await manualGate(app, other, approval(email));
      const runId = await submit(app, other, gate);
      await waitForRunStatus(app, other, runId, ['review_required']);
      await approvalMail(app, email);
      await app.services.db.query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [other.user.id]);
      const refused = await app.request('POST', `/api/flow/approvals/resend/${runId}`, { token: other.key });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('ERR_AUTH_006');
      expect(mailsTo(email)).toHaveLength(1);
    });
  });

  it(`verification re-sends: ${PER_RECIPIENT} an hour per address, then 429 ERR_LIMIT_012`, async () => {
    const user = await signUp(app);
    await app.smtp!.waitForMessage((m) => m.to.includes(user.email) && /confirm/i.test(m.subject));
    for (let i = 0; i < PER_RECIPIENT; i++) {
      const ok = await app.request('POST', '/api/auth/resend-verification', { token: user.accessToken });
      expect(ok.status).toBe(200);
    }
    const refused = await app.request('POST', '/api/auth/resend-verification', { token: user.accessToken });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'ERR_LIMIT_012', relatedInfo: { limit: PER_RECIPIENT } });
    const confirmations = () => mailsTo(user.email).filter((m) => /confirm/i.test(m.subject));
    await waitFor(() => confirmations().length >= 1 + PER_RECIPIENT || undefined, { what: 'the re-sent confirmations' });
    expect(confirmations()).toHaveLength(1 + PER_RECIPIENT);
  });
});
