import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ApprovalConfig, NotificationMode } from '../../db/flow/gate.entity';
import { modifyReturning, type Queryable } from '../../db/sql';
import type { Mailer } from '../mail/mailer';
import { sendApprovalLinks, sendReviewNotices } from './approval-mail';

export interface ApprovalActivityDeps {
  db: DataSource;
  mailer: Mailer;
  publicUrl: string;
  /** FLOW_MINUTE_MS: milliseconds in a minute of approval timeouts and digests. */
  flowMinuteMs: number;
}

export interface OpenApprovalInput {
  runId: string;
  projectId: string;
  gateId: string;
  approvalConfig: ApprovalConfig;
  minuteMs?: number;
}

export interface OpenedApproval {
  minuteMs: number;
  requiredApprovals: number;
  notificationMode: NotificationMode;
  digestMinutes: number;
}

export interface ApprovalTally {
  approved: number;
  rejected: number;
  pending: number;
}

/** Activities of workflows/flow/approval.ts (docs/flow.md, "Approvals"). All are safe to retry. */
export function createApprovalActivities(deps: ApprovalActivityDeps) {
  return {
    /**
     * One approval per distinct approver (ON CONFLICT: a retry adds nothing), the run in
     * `review_required`, magic links to approvers not yet mailed, and the owners' notice
     * (sent now in `immediate` mode; left for the gate's digest otherwise).
     */
    async openApproval(input: OpenApprovalInput): Promise<OpenedApproval> {
      const minuteMs = input.minuteMs ?? deps.flowMinuteMs;
      const windowMs = Math.max(1, input.approvalConfig.timeoutMinutes) * minuteMs;
      const approvers = new Map<string, string | null>();
      for (const a of input.approvalConfig.approvers) {
        const email = a.email.trim().toLowerCase();
        if (!approvers.has(email)) approvers.set(email, a.name ?? null);
      }
      await deps.db.transaction(async (m) => {
        for (const [email, name] of approvers) {
          await m.query(
            `INSERT INTO flow_approvals (id, run_id, gate_id, project_id, approver_email, approver_name, status, magic_token_expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'pending', now() + $7 * interval '1 millisecond')
             ON CONFLICT (run_id, approver_email) DO NOTHING`,
            [randomUUID(), input.runId, input.gateId, input.projectId, email, name, windowMs],
          );
        }
        await m.query(
          `UPDATE flow_runs SET status = 'review_required', approval_status = 'pending', updated_at = now()
            WHERE id = $1 AND status IN ('validated', 'rendering')`,
          [input.runId],
        );
        await m.query(
          `INSERT INTO flow_review_notices (run_id, gate_id, project_id) VALUES ($1, $2, $3) ON CONFLICT (run_id) DO NOTHING`,
          [input.runId, input.gateId, input.projectId],
        );
      });
      await sendApprovalLinks(deps, input.runId, 'request', { unsentOnly: true });
      const [gate]: Array<{ notification_mode: NotificationMode; notification_digest_minutes: number }> = await deps.db.query(
        `SELECT notification_mode, notification_digest_minutes FROM flow_gates WHERE id = $1`,
        [input.gateId],
      );
      const notificationMode = gate?.notification_mode ?? 'digest';
      if (notificationMode === 'immediate') await sendReviewNotices(deps, { runId: input.runId });
      return {
        minuteMs,
        requiredApprovals: Math.min(Math.max(1, input.approvalConfig.requiredApprovals ?? 1), approvers.size),
        notificationMode,
        digestMinutes: gate?.notification_digest_minutes ?? 5,
      };
    },

    /** The decisions recorded so far (the API writes them before signalling). */
    async readApprovalTally(input: { runId: string }): Promise<ApprovalTally> {
      const rows: Array<{ status: string; n: number }> = await deps.db.query(
        `SELECT status, count(*)::int AS n FROM flow_approvals WHERE run_id = $1 GROUP BY status`,
        [input.runId],
      );
      const n = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
      return { approved: n('approved'), rejected: n('rejected'), pending: n('pending') };
    },

    /** Before the timeout: a fresh link to each approver still pending (once per approval). */
    async sendApprovalReminders(input: { runId: string }): Promise<number> {
      return sendApprovalLinks(deps, input.runId, 'reminder');
    },

    /**
     * Records the outcome: approvals still pending become `expired` (the window closed, or the run
     * was decided without them), their links stop working, review sessions with nothing left to
     * decide are revoked, and the run moves on from `review_required`. Rejected and expired runs end here.
     */
    async closeApproval(input: { runId: string; outcome: 'approved' | 'rejected' | 'expired'; timedOut: boolean }): Promise<void> {
      await deps.db.transaction(async (m) => {
        const expired = await modifyReturning<{ approver_email: string }>(
          m,
          `UPDATE flow_approvals SET status = 'expired', decided_at = now(), magic_token_hash = NULL
            WHERE run_id = $1 AND status = 'pending' RETURNING approver_email`,
          [input.runId],
        );
        await m.query(`UPDATE flow_approvals SET magic_token_hash = NULL WHERE run_id = $1`, [input.runId]);
        if (expired.length > 0) await revokeIdleReviewTokens(m, expired.map((e) => e.approver_email));
        const final = input.outcome !== 'approved';
        await m.query(
          `UPDATE flow_runs SET status = $2, approval_status = $2, updated_at = now(),
                  completed_at = CASE WHEN $3 THEN now() ELSE completed_at END
            WHERE id = $1 AND status = 'review_required'`,
          [input.runId, input.outcome, final],
        );
      });
    },

    /** One digest of a gate: every run that entered review since the last one. */
    async sendReviewDigest(input: { gateId: string }): Promise<{ sent: number; gateLive: boolean }> {
      const sent = await sendReviewNotices(deps, { gateId: input.gateId });
      const [gate]: Array<{ live: boolean }> = await deps.db.query(
        `SELECT (deleted_at IS NULL AND notification_mode = 'digest') AS live FROM flow_gates WHERE id = $1`,
        [input.gateId],
      );
      return { sent, gateLive: gate?.live ?? false };
    },
  };
}
export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;

/** Review sessions of these e-mails that have no pending approval left in their project die (docs/flow.md). */
export async function revokeIdleReviewTokens(db: Queryable, emails: string[]): Promise<void> {
  await db.query(
    `UPDATE flow_review_tokens t SET revoked_at = now()
      WHERE t.email = ANY($1::text[]) AND t.revoked_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM flow_approvals a WHERE a.approver_email = t.email AND a.project_id = t.project_id AND a.status = 'pending')`,
    [emails],
  );
}
