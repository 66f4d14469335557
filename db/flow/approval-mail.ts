import type { DataSource } from 'typeorm';
import { approvalRequestEmail, reviewLink, reviewNoticeEmail, type ApprovalEmailKind, type ReviewNoticeRun } from '../../domain/flow/approval-emails';
import type { ObjectSchema } from '../../domain/flow/gate.types';
import { summaryLine } from '../../domain/flow/review-summary';
import type { EmailMessage } from '../../domain/identity/emails';
import { randomToken, sha256Hex } from '../../domain/signing';
import { modifyReturning } from '../sql';

/**
 * What sending approval mail needs; the API (resend) and the approval activities share it. The
 * mailer is the mail port (adapters/mail), named by the one method used here.
 */
export interface ApprovalMailDeps {
  db: DataSource;
  mailer: { send(message: EmailMessage): Promise<unknown> };
  publicUrl: string;
}

interface Sendable {
  id: string;
  approver_email: string;
  approver_name: string | null;
  magic_token_expires_at: Date;
  gate_name: string;
  run_short_id: string;
  payload: unknown;
  schema: ObjectSchema | null;
}

/**
 * Mints a fresh magic-link token for each chosen approval that is still pending and in its window,
 * stores only its hash, and e-mails the link. A new token replaces the previous one, so only the
 * latest e-mail's link works. The approval counts as mailed (`sent_count`, `last_sent_at`, a
 * reminder's `reminder_sent_at`) only once the mailer accepted the message: a refused or failed send
 * throws, the activity is retried, and the approver is picked again, so nobody's first link is lost
 * (a crash between the mailer's acceptance and the mark can send one twice; the later link is the one
 * that works). Returns how many e-mails went out.
 */
export async function sendApprovalLinks(
  deps: ApprovalMailDeps,
  runId: string,
  kind: ApprovalEmailKind,
  filter: { unsentOnly?: boolean; email?: string } = {},
): Promise<number> {
  const candidates: Array<{ id: string }> = await deps.db.query(
    `SELECT id FROM flow_approvals
      WHERE run_id = $1 AND status = 'pending' AND magic_token_expires_at > now()
        AND ($2::boolean IS NOT TRUE OR sent_count = 0)
        AND ($3::text IS NULL OR approver_email = $3)
        AND ($4::boolean IS NOT TRUE OR reminder_sent_at IS NULL)
      ORDER BY approver_email`,
    [runId, filter.unsentOnly ?? false, filter.email ?? null, kind === 'reminder'],
  );
  let sent = 0;
  for (const { id } of candidates) {
    const token = randomToken(32);
    const hash = sha256Hex(token);
    const [row] = await modifyReturning<Sendable>(
      deps.db,
      `UPDATE flow_approvals a SET magic_token_hash = $2
         FROM flow_gates g, flow_runs r
        WHERE a.id = $1 AND a.status = 'pending' AND g.id = a.gate_id AND r.id = a.run_id
        RETURNING a.id, a.approver_email, a.approver_name, a.magic_token_expires_at, g.name AS gate_name, r.short_id AS run_short_id,
                  r.input_payload AS payload,
                  (SELECT v.schema FROM flow_gate_schema_versions v WHERE v.gate_id = r.gate_id AND v.version = r.schema_version) AS schema`,
      [id, hash],
    );
    if (!row) continue;
    // Every link's hash is kept, so the reviewer's page can tell an old link from a wrong one.
    await deps.db.query(`INSERT INTO flow_review_links (token_hash, approval_id) VALUES ($1, $2)`, [hash, id]);
    await deps.mailer.send(
      approvalRequestEmail({
        kind,
        to: { email: row.approver_email, name: row.approver_name },
        gateName: row.gate_name,
        runShortId: row.run_short_id,
        summary: summaryLine(row.payload, row.schema),
        link: reviewLink(deps.publicUrl, token),
        expiresAt: new Date(row.magic_token_expires_at),
      }),
    );
    await deps.db.query(
      `UPDATE flow_approvals SET sent_count = sent_count + 1, last_sent_at = now(),
              reminder_sent_at = CASE WHEN $2 THEN now() ELSE reminder_sent_at END
        WHERE id = $1`,
      [id, kind === 'reminder'],
    );
    sent += 1;
  }
  return sent;
}

/**
 * Tells the owners and admins of the project of the notices not yet sent (one gate, or one run), and
 * marks them notified once every owner's message was accepted: a failed send is retried with the
 * notices still open, so none is lost (an owner may get a repeat after a partial failure).
 */
export async function sendReviewNotices(deps: ApprovalMailDeps, where: { runId?: string; gateId?: string }): Promise<number> {
  const notices: Array<{ run_id: string; project_id: string; created_at: Date }> = await deps.db.query(
    `SELECT run_id, project_id, created_at FROM flow_review_notices
      WHERE notified_at IS NULL AND ($1::uuid IS NULL OR run_id = $1) AND ($2::uuid IS NULL OR gate_id = $2)`,
    [where.runId ?? null, where.gateId ?? null],
  );
  if (notices.length === 0) return 0;
  const runs: Array<{ id: string; short_id: string; gate_name: string }> = await deps.db.query(
    `SELECT r.id, r.short_id, g.name AS gate_name FROM flow_runs r JOIN flow_gates g ON g.id = r.gate_id WHERE r.id = ANY($1::uuid[])`,
    [notices.map((n) => n.run_id)],
  );
  const byId = new Map(runs.map((r) => [r.id, r]));
  const list: ReviewNoticeRun[] = notices
    .filter((n) => byId.has(n.run_id))
    .sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime())
    .map((n) => ({ runId: n.run_id, runShortId: byId.get(n.run_id)!.short_id, gateName: byId.get(n.run_id)!.gate_name, enteredAt: new Date(n.created_at) }));
  const owners: Array<{ email: string; name: string }> = await deps.db.query(
    `SELECT u.email, u.name FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.project_id = $1 AND m.role IN ('owner', 'admin') AND u.deletion_status IS NULL ORDER BY u.email`,
    [notices[0].project_id],
  );
  for (const owner of owners) await deps.mailer.send(reviewNoticeEmail(owner, list, deps.publicUrl));
  await deps.db.query(`UPDATE flow_review_notices SET notified_at = now() WHERE notified_at IS NULL AND run_id = ANY($1::uuid[])`, [notices.map((n) => n.run_id)]);
  return list.length;
}
