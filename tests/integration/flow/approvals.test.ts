import { workflowIds } from '../../../domain/temporal-names';
import { startTestApp, type TestApp } from '../../support/app';
import { approvalMail, approverEmail, approverIn, magicToken, manualGate, myApprovals, runOf, submit, teamFlowWorkspace, waitForRunStatus, type Approver } from '../../support/approvals';
import { createKey } from '../../support/api-keys';
import { flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';

/** A "minute" is a second here (FLOW_MINUTE_MS), so timeouts of 2 minutes take 2 s. */
describe('Flow approvals (API key)', () => {
  let app: TestApp;
  let ws: FlowWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ env: { FLOW_MINUTE_MS: '1000' } });
    ws = await teamFlowWorkspace(app, 'starter');
  });
  afterAll(() => app.close());

  const reviewing = async (approvers: string[], extra: Record<string, unknown> = {}, gateExtra: Record<string, unknown> = {}) => {
    const gate = await manualGate(app, ws, { approvers: approvers.map((email) => ({ email, name: 'Approver' })), timeoutMinutes: 120, onTimeout: 'reject', ...extra }, gateExtra);
    const runId = await submit(app, ws, gate);
    await waitForRunStatus(app, ws, runId, ['review_required']);
    return { gate, runId };
  };
  // Approvals are decided by people: each approver address belongs to a member of the workspace.
  const people = new Map<string, Promise<Approver>>();
  const person = (email: string) => {
    const key = email.toLowerCase();
    if (!people.has(key)) people.set(key, approverIn(app, ws, key));
    return people.get(key)!;
  };
  const approvalOf = async (email: string) => {
    const who = await person(email);
    return (await waitFor(async () => (await myApprovals(app, who))[0], { what: `approval of ${email}` })) as any;
  };
  const decide = async (email: string, id: string, action: 'approve' | 'reject', body: Record<string, unknown> = {}) => {
    const who = await person(email);
    return app.request('POST', `/api/flow/approvals/${id}/${action}`, { token: who.token, headers: who.headers, body });
  };
  /**
   * The run's workflow (its Temporal history) has handled a decision signal: after the signal it
   * read the tally again and then started waiting again (a timer) instead of closing the approval.
   */
  const waitsAgainAfterSignal = async (runId: string) => {
    const events = (await app.services.temporal.workflow.getHandle(workflowIds.flowRun(runId)).fetchHistory()).events ?? [];
    const signal = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
    if (signal < 0) return false;
    const after = events.slice(signal);
    const tallyReads = new Set(after.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'readApprovalTally').map((e) => String(e.eventId)));
    const read = after.findIndex((e) => tallyReads.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)));
    return read >= 0 && after.slice(read).some((e) => e.timerStartedEventAttributes);
  };

  it('e-mails a magic link, lists the pending approval, and an approval moves the run on', async () => {
    const email = approverEmail();
    const { runId, gate } = await reviewing([email.toUpperCase()]);
    const mail = await approvalMail(app, email);
    expect(mail.text).toContain(`${app.url}/review?token=`);
    expect(magicToken(mail)).toHaveLength(43);
    const approval = await approvalOf(email);
    expect(approval).toMatchObject({ runId, gateId: gate.id, gateName: gate.name, approverEmail: email, status: 'pending', sentCount: 1 });
    expect((await runOf(app, ws, runId)).status).toBe('review_required');

    const res = await decide(email, approval.id, 'approve', { comment: 'Looks right' });
    expect([res.status, res.body]).toEqual([200, { success: true, decision: 'approved' }]);
    await waitForRunStatus(app, ws, runId, ['completed']);
    const [row] = await app.services.db.query(`SELECT status, comment, magic_token_hash FROM flow_approvals WHERE id = $1`, [approval.id]);
    expect(row).toEqual({ status: 'approved', comment: 'Looks right', magic_token_hash: null });
    expect(await myApprovals(app, await person(email))).toEqual([]);
  });

  it('a decision whose signal cannot be sent keeps its nudge mark; the outbox sweep tells the run, long before its reminder', async () => {
    const email = approverEmail();
    // 120 "minutes" (120 s): without a nudge the run would look again only at its reminder, at 96 s.
    const { runId } = await reviewing([email]);
    const approval = await approvalOf(email);
    const client = app.services.temporal.workflow;
    const original = client.getHandle.bind(client);
    // Temporal refuses signals (unreachable), everything else works.
    const refused = jest
      .spyOn(client, 'getHandle')
      .mockImplementation((...args: Parameters<typeof original>) => Object.assign(Object.create(original(...args)), { signal: () => Promise.reject(new Error('Temporal unavailable')) }));
    try {
      const res = await decide(email, approval.id, 'approve');
      expect([res.status, res.body]).toEqual([200, { success: true, decision: 'approved' }]);
      expect(await app.services.db.query(`SELECT status, signal_pending FROM flow_approvals WHERE id = $1`, [approval.id])).toEqual([{ status: 'approved', signal_pending: true }]);
      expect((await runOf(app, ws, runId)).status).toBe('review_required');
    } finally {
      refused.mockRestore();
    }
    expect(await app.services.outbox.sweep(0)).toBeGreaterThanOrEqual(1);
    await waitForRunStatus(app, ws, runId, ['completed']);
    expect(await app.services.db.query(`SELECT signal_pending FROM flow_approvals WHERE id = $1`, [approval.id])).toEqual([{ signal_pending: false }]);
  });

  it('rejects with one rejection; a second decision is 409; unknown ids are 404', async () => {
    const [a, b] = [approverEmail(), approverEmail()];
    const { runId } = await reviewing([a, b], { requiredApprovals: 2 });
    const approval = await approvalOf(a);
    expect((await decide(a, approval.id, 'reject', { comment: 'No' })).body).toEqual({ success: true, decision: 'rejected' });
    const again = await decide(a, approval.id, 'approve');
    expect([again.status, again.body.code]).toEqual([409, 'FLOW.APPROVAL_ALREADY_DECIDED']);
    const run = await waitForRunStatus(app, ws, runId, ['rejected']);
    expect(run.status).toBe('rejected');
    const [other] = await app.services.db.query(`SELECT status FROM flow_approvals WHERE run_id = $1 AND approver_email = $2`, [runId, b]);
    expect(other.status).toBe('expired');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await decide(a, id, 'approve');
      expect([res.status, res.body.code]).toEqual([404, 'FLOW.APPROVAL_NOT_FOUND']);
    }
  });

  it('refuses a comment over 1000 characters, and another workspace cannot see or decide', async () => {
    const email = approverEmail();
    await reviewing([email]);
    const approval = await approvalOf(email);
    const long = await decide(email, approval.id, 'approve', { comment: 'x'.repeat(1001) });
    expect(long.status).toBe(400);
    const other = await flowWorkspace(app);
    const foreign = await app.request('POST', `/api/flow/approvals/${approval.id}/approve`, { token: other.key, body: {} });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'FLOW.APPROVAL_NOT_FOUND']);
    expect((await app.request('GET', '/api/flow/approvals', { token: other.key })).body.data).toEqual([]);
  });

  it('only the approver on record decides: a non-approver member, the owner\'s key and a fellow approver get 403', async () => {
    const [a, b] = [approverEmail(), approverEmail()];
    const { runId } = await reviewing([a, b], { requiredApprovals: 2 });
    const mine = await approvalOf(a);
    await approvalOf(b);
    // Each person lists only their own approvals; the owner (no approver) lists none.
    expect((await myApprovals(app, await person(a))).map((x) => x.approverEmail)).toEqual([a]);
    expect((await app.request('GET', '/api/flow/approvals', { token: ws.key })).body.data).toEqual([]);
    const outsider = await approverIn(app, ws, approverEmail('outsider'));
    const attempts = [
      await app.request('POST', `/api/flow/approvals/${mine.id}/approve`, { token: outsider.token, headers: outsider.headers, body: {} }),
      await app.request('POST', `/api/flow/approvals/${mine.id}/approve`, { token: ws.key, body: {} }),
      await app.request('POST', `/api/flow/approvals/${mine.id}/approve`, { token: ws.user.accessToken, headers: { 'X-Team-Id': ws.projectId }, body: {} }),
      await decide(b, mine.id, 'approve'),
    ];
    for (const res of attempts) {
      expect([res.status, res.body.code, res.body.relatedInfo?.required]).toEqual([403, 'ERR_AUTH_005', 'approver']);
    }
    // Nothing was recorded for a, and b's own decision cannot count twice.
    const [row] = await app.services.db.query(`SELECT status FROM flow_approvals WHERE id = $1`, [mine.id]);
    expect(row.status).toBe('pending');
    const bId = (await approvalOf(b)).id;
    expect((await decide(b, bId, 'approve')).status).toBe(200);
    expect((await decide(b, bId, 'approve')).status).toBe(409);
    expect((await runOf(app, ws, runId)).status).toBe('review_required');
    expect((await decide(a, mine.id, 'approve')).status).toBe(200);
    await waitForRunStatus(app, ws, runId, ['completed']);
  });

  it('an API key acts for the user who created it; an unverified address decides nothing', async () => {
    const a = approverEmail();
    const admin = await approverIn(app, ws, a, 'admin');
    people.set(a, Promise.resolve(admin));
    const key = (await createKey(app, admin.token, { name: 'approver key' }, ws.projectId)).plainKey;
    const { runId } = await reviewing([a]);
    const [listed] = await waitFor(async () => {
      const data = (await app.request('GET', '/api/flow/approvals', { token: key })).body.data;
      return data.length > 0 ? data : undefined;
    });
    expect(listed).toMatchObject({ runId, approverEmail: a, status: 'pending' });
    await app.services.db.query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [admin.userId]);
    const unverified = await app.request('POST', `/api/flow/approvals/${listed.id}/approve`, { token: key, body: {} });
    expect([unverified.status, unverified.body.code]).toEqual([403, 'ERR_AUTH_006']);
    await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [admin.userId]);
    const res = await app.request('POST', `/api/flow/approvals/${listed.id}/approve`, { token: key, body: { comment: 'by key' } });
    expect([res.status, res.body]).toEqual([200, { success: true, decision: 'approved' }]);
    await waitForRunStatus(app, ws, runId, ['completed']);
  });

  it('requiredApprovals counts distinct approvers: one address twice (any case) is one person', async () => {
    const a = approverEmail();
    const res = await app.request('POST', '/api/flow/gates', {
      token: ws.key,
      body: { name: 'Twice', approvalMode: 'manual', approvalConfig: { approvers: [{ email: a }, { email: a.toUpperCase() }], requiredApprovals: 2, timeoutMinutes: 5, onTimeout: 'reject' } },
    });
    expect([res.status, res.body.code, res.body.relatedInfo.field]).toEqual([400, 'ERR_VALID_001', 'approvalConfig.requiredApprovals']);
  });

  it('needs requiredApprovals approvals: one of two is not enough', async () => {
    const [a, b, c] = [approverEmail(), approverEmail(), approverEmail()];
    const { runId } = await reviewing([a, b, c], { requiredApprovals: 2 });
    expect((await decide(a, (await approvalOf(a)).id, 'approve')).status).toBe(200);
    // The API recorded a's approval before answering; what counts is what the run does with it.
    // Once the workflow has handled the signal (re-read the tally, then waits again) the run is still in review.
    await waitFor(() => waitsAgainAfterSignal(runId), { what: `run ${runId} waiting again after the first approval` });
    expect(await runOf(app, ws, runId)).toMatchObject({ status: 'review_required', approvalStatus: 'pending', completedAt: null });
    expect((await decide(b, (await approvalOf(b)).id, 'approve')).status).toBe(200);
    const done = await waitForRunStatus(app, ws, runId, ['completed']);
    expect(done).toMatchObject({ status: 'completed', approvalStatus: 'approved' });
    const [rest] = await app.services.db.query(`SELECT status FROM flow_approvals WHERE run_id = $1 AND approver_email = $2`, [runId, c]);
    expect(rest.status).toBe('expired');
  });

  it('two racing decisions: exactly one 200 and one 409', async () => {
    const email = approverEmail();
    const { runId } = await reviewing([email]);
    const approval = await approvalOf(email);
    const results = await Promise.all([decide(email, approval.id, 'approve'), decide(email, approval.id, 'reject'), decide(email, approval.id, 'approve')]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const winner = results.find((r) => r.status === 200)!.body.decision;
    await waitForRunStatus(app, ws, runId, [winner === 'approved' ? 'completed' : 'rejected']);
  });

  it('resend: sentCount and totalApprovers; 404 unknown run; 409 when not in review', async () => {
    const [a, b] = [approverEmail(), approverEmail()];
    const { runId } = await reviewing([a, b], { requiredApprovals: 2 });
    await approvalMail(app, a);
    await decide(a, (await approvalOf(a)).id, 'approve');
    const res = await app.request('POST', `/api/flow/approvals/resend/${runId}`, { token: ws.key });
    expect([res.status, res.body]).toEqual([200, { success: true, sentCount: 1, totalApprovers: 2 }]);
    const second = await approvalMail(app, b, 2);
    const first = await approvalMail(app, b, 1);
    expect(magicToken(second)).not.toEqual(magicToken(first));
    expect((await approvalOf(b)).sentCount).toBe(2);
    const missing = await app.request('POST', `/api/flow/approvals/resend/00000000-0000-4000-8000-000000000000`, { token: ws.key });
    expect([missing.status, missing.body.code]).toEqual([404, 'FLOW.RUN_NOT_FOUND']);
    await decide(b, (await approvalOf(b)).id, 'approve');
    await waitForRunStatus(app, ws, runId, ['completed']);
    const done = await app.request('POST', `/api/flow/approvals/resend/${runId}`, { token: ws.key });
    expect([done.status, done.body.code]).toEqual([409, 'FLOW.RUN_NOT_IN_REVIEW']);
  });

  it('times out: onTimeout reject expires the run (after a reminder), onTimeout approve approves it', async () => {
    const [a, b] = [approverEmail(), approverEmail()];
    // 20 test minutes of 1 s: the reminder at 16 s, 4 s before the deadline. A workflow task that a busy
    // machine delays past the deadline rightly sends no reminder (it did with 4 minutes, 0.8 s apart).
    const rejecting = await manualGate(app, ws, { approvers: [{ email: a }], timeoutMinutes: 20, onTimeout: 'reject' });
    const approving = await manualGate(app, ws, { approvers: [{ email: b }], timeoutMinutes: 20, onTimeout: 'approve' });
    const [r1, r2] = [await submit(app, ws, rejecting), await submit(app, ws, approving)];
    const reminder = await approvalMail(app, a, 1, /reminder/i);
    expect(reminder.text).toContain('/review?token=');
    const expired = await waitForRunStatus(app, ws, r1, ['expired']);
    expect(expired.status).toBe('expired');
    await waitForRunStatus(app, ws, r2, ['completed']);
    const rows = await app.services.db.query(`SELECT run_id, status FROM flow_approvals WHERE run_id = ANY($1::uuid[]) ORDER BY approver_email`, [[r1, r2]]);
    expect(rows.map((r: any) => r.status)).toEqual(['expired', 'expired']);
  });

  it('a decision made while no worker runs is picked up by the next worker', async () => {
    const email = approverEmail();
    const { runId } = await reviewing([email]);
    await app.stopWorker();
    try {
      const res = await decide(email, (await approvalOf(email)).id, 'approve', { comment: 'while the worker was away' });
      expect(res.status).toBe(200);
      expect((await runOf(app, ws, runId)).status).toBe('review_required');
    } finally {
      await app.startWorker();
    }
    await waitForRunStatus(app, ws, runId, ['completed']);
  });

  const approvalIdOf = async (runId: string) => (await waitFor(async () => (await app.services.db.query(`SELECT id FROM flow_approvals WHERE run_id = $1`, [runId]))[0]))!.id as string;
  const approvalRow = async (id: string) => (await app.services.db.query(`SELECT status, comment FROM flow_approvals WHERE id = $1`, [id]))[0];

  it('a decision after the window closed is refused with 409 expired, and the run stays as it ended', async () => {
    const email = approverEmail();
    await person(email);
    const gate = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 2, onTimeout: 'reject' });
    const runId = await submit(app, ws, gate);
    const id = await approvalIdOf(runId);
    await waitForRunStatus(app, ws, runId, ['expired']);
    for (const action of ['approve', 'reject'] as const) {
      const late = await decide(email, id, action, { comment: 'too late' });
      expect([late.status, late.body.code, late.body.relatedInfo]).toEqual([409, 'FLOW.APPROVAL_ALREADY_DECIDED', { approvalId: id, status: 'expired' }]);
    }
    expect(await approvalRow(id)).toEqual({ status: 'expired', comment: null });
    expect(await runOf(app, ws, runId)).toMatchObject({ status: 'expired', approvalStatus: 'expired' });
  });

  it('a decision after its link expired is refused even before the run closes, so the run cannot end otherwise', async () => {
    const email = approverEmail();
    const { runId } = await reviewing([email]);
    const approval = await approvalOf(email);
    await app.services.db.query(`UPDATE flow_approvals SET magic_token_expires_at = now() - interval '1 second' WHERE id = $1`, [approval.id]);
    const late = await decide(email, approval.id, 'approve');
    expect([late.status, late.body.code, late.body.relatedInfo]).toEqual([409, 'FLOW.APPROVAL_ALREADY_DECIDED', { approvalId: approval.id, status: 'expired' }]);
    expect(await approvalRow(approval.id)).toEqual({ status: 'pending', comment: null });
    expect(await runOf(app, ws, runId)).toMatchObject({ status: 'review_required', approvalStatus: 'pending' });
  });

  it('through a review link: a decision on an approval whose window closed is refused (review API 409, review page 409 page)', async () => {
    const email = approverEmail('reviewer');
    const open = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 120, onTimeout: 'reject' });
    const closing = await manualGate(app, ws, { approvers: [{ email }], timeoutMinutes: 2, onTimeout: 'reject' });
    await submit(app, ws, open);
    // The session comes from the open run's link, so it outlives the other run's window.
    const token = magicToken(await approvalMail(app, email, 1));
    const runId = await submit(app, ws, closing);
    const id = await approvalIdOf(runId);
    await waitForRunStatus(app, ws, runId, ['expired']);

    const auth = await app.request('POST', '/api/flow/review/authenticate', { body: { token, email } });
    expect(auth.status).toBe(200);
    const api = await app.request('POST', `/api/flow/review/approvals/${id}/approve`, { token: auth.body.reviewToken, body: {} });
    expect([api.status, api.body.code, api.body.relatedInfo]).toEqual([409, 'FLOW.APPROVAL_ALREADY_DECIDED', { approvalId: id, status: 'expired' }]);

    // A link opens one session: the review page signs in with a fresh one (asked for from the used link).
    expect((await app.request('POST', '/api/flow/review/resend', { body: { token, email } })).status).toBe(200);
    const fresh = magicToken(await approvalMail(app, email, 2, new RegExp(`^Approval needed for ${open.name}$`)));
    const signIn = await fetch(`${app.url}/review`, { method: 'POST', body: new URLSearchParams({ token: fresh, email }), redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const page = await fetch(`${app.url}/review/approvals/${id}/decision`, { method: 'POST', body: new URLSearchParams({ decision: 'approve' }), headers: { cookie } });
    expect(page.status).toBe(409);
    expect(await page.text()).toContain('The time to decide this approval has run out');
    expect(await approvalRow(id)).toEqual({ status: 'expired', comment: null });
    expect(await runOf(app, ws, runId)).toMatchObject({ status: 'expired', approvalStatus: 'expired' });
  });

  it('enforces the plan limit on approvers per gate', async () => {
    const free = await flowWorkspace(app);
    const approvers = Array.from({ length: 6 }, () => ({ email: approverEmail() }));
    const res = await app.request('POST', '/api/flow/gates', { token: free.key, body: { name: 'Too many', approvalMode: 'manual', approvalConfig: { approvers, timeoutMinutes: 5, onTimeout: 'reject' } } });
    expect([res.status, res.body.code]).toEqual([403, 'ERR_FLOW_LIMIT_004']);
  });
});
