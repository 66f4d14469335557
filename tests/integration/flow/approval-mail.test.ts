import { createHash } from 'node:crypto';
import { approvalMail, approverEmail, magicToken, manualGate, submit, teamFlowWorkspace, waitForRunStatus } from '../../support/approvals';
import { startTestApp, type TestApp } from '../../support/app';
import type { FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';

/**
 * No lost mail (docs/flow.md "Approvals"): an approval link counts as sent only once the mail server
 * accepted it. A server that refuses an approver (450, busy) and then accepts gets exactly one link to
 * each approver, and the link in it is the one that works.
 */
describe('approval links and a mail server that refuses, then accepts', () => {
  let app: TestApp;
  let ws: FlowWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ env: { FLOW_MINUTE_MS: '1000' } });
    ws = await teamFlowWorkspace(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  const sentTo = (email: string) => app.smtp!.messages.filter((m) => m.to.includes(email) && /approval needed/i.test(m.subject));

  it('mails each approver exactly one working link', async () => {
    // 'a-…' sorts first, so the refused approver is the first one the activity mails.
    const busy = approverEmail('a-busy');
    const fine = approverEmail('b-fine');
    app.smtp!.refuseRecipient(busy, 450);
    const gate = await manualGate(app, ws, { approvers: [{ email: busy }, { email: fine }], requiredApprovals: 1, timeoutMinutes: 600, onTimeout: 'reject' });
    const runId = await submit(app, ws, gate);
    await waitFor(() => (app.smtp!.refusals(busy) >= 1 ? true : undefined), { timeoutMs: 20_000, what: 'the server to refuse the first link' });
    app.smtp!.refuseRecipient(busy, null);

    const mail = await approvalMail(app, busy);
    await approvalMail(app, fine);
    await waitForRunStatus(app, ws, runId, ['review_required']);
    const rows: Array<{ approver_email: string; sent_count: number; magic_token_hash: string }> = await waitFor(
      async () => {
        const r = await app.services.db.query(`SELECT approver_email, sent_count, magic_token_hash FROM flow_approvals WHERE run_id = $1 ORDER BY approver_email`, [runId]);
        return r.every((x: { sent_count: number }) => x.sent_count === 1) ? r : undefined;
      },
      { timeoutMs: 20_000, what: 'both approvals marked sent' },
    );
    expect(rows.map((r) => [r.approver_email, r.sent_count])).toEqual([
      [busy, 1],
      [fine, 1],
    ]);
    expect([sentTo(busy).length, sentTo(fine).length]).toEqual([1, 1]);
    // The one link the busy approver got is the one that works.
    expect(createHash('sha256').update(magicToken(mail)).digest('hex')).toBe(rows[0].magic_token_hash);
  });
});
