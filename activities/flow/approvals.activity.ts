import type { DataSource } from 'typeorm';
import { closeRunApprovals, expireOpenApprovals, openApprovals } from '../../db/flow/approval-state';
import { revokeIdleReviewTokens } from '../../db/flow/review-tokens';
import { moveRun } from '../../db/flow/run-state';
import type { ApprovalOutcome } from '../../domain/flow/approval-outcome';
import type { ApprovalConfig, NotificationMode } from '../../domain/flow/gate-settings';
import type { ReviewDigestInput } from '../../workflows/flow/review-digest.workflow';
import type { Mailer } from '../../adapters/mail/mailer';
import { sendApprovalLinks, sendReviewNotices } from '../../db/flow/approval-mail';

export interface ApprovalActivityDeps {
  db: DataSource;
  mailer: Mailer;
  publicUrl: string;
  /** FLOW_MINUTE_MS: milliseconds in a minute of approval timeouts and digests. */
  flowMinuteMs: number;
  /** Signal-with-start of a gate's review digest (platform/workflow-starts.ts `signalReviewDigest`). */
  signalReviewDigest: (digest: ReviewDigestInput & { projectId: string }) => Promise<void>;
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

/**
 * What closeApproval is asked: the gate's rule, by which it decides the outcome from the rows. The
 * second form is what workflow code before that scheduled (its own outcome, taken as given); a run
 * whose close was scheduled then may still have it retried by this code.
 */
export type CloseApprovalInput =
  | { runId: string; requiredApprovals: number; onTimeout: ApprovalConfig['onTimeout'] }
  | { runId: string; outcome: ApprovalOutcome; timedOut: boolean };

export interface ClosedApproval {
  outcome: ApprovalOutcome;
  timedOut: boolean;
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
        await openApprovals(m, { runId: input.runId, gateId: input.gateId, projectId: input.projectId, approvers, windowMs });
        await moveRun(m, { runId: input.runId, status: 'review_required', approvalStatus: 'pending' });
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
     * Ends the approval and decides its outcome, in one transaction: the run's approvals are locked,
     * those still pending become `expired` (the window closed, or the run was decided without them),
     * the decided ones are counted against the gate's rule, no magic link of the run works any more,
     * review sessions with nothing left to decide are revoked, and the run moves on from
     * `review_required`. Whoever commits first wins: a decision recorded before this counts, one after
     * it is refused (409), so the run never ends against what an approver was told. Rejected and
     * expired runs end here. The workflow goes on with the outcome this returns.
     */
    async closeApproval(input: CloseApprovalInput): Promise<ClosedApproval> {
      return deps.db.transaction(async (m) => {
        let closed: ClosedApproval;
        let expired: string[];
        if ('requiredApprovals' in input) {
          ({ expired, ...closed } = await closeRunApprovals(m, input));
        } else {
          expired = await expireOpenApprovals(m, input.runId);
          closed = { outcome: input.outcome, timedOut: input.timedOut };
        }
        if (expired.length > 0) await revokeIdleReviewTokens(m, expired);
        await moveRun(m, { runId: input.runId, status: closed.outcome, approvalStatus: closed.outcome, finished: closed.outcome !== 'approved' });
        return closed;
      });
    },

    /** One digest of a gate: every run that entered review since the last one. */
    /** Tells the gate's review digest of a run in review, starting it when it is not running (workflows/flow/review-digest.workflow.ts). */
    async signalReviewDigest(input: ReviewDigestInput & { projectId: string }): Promise<void> {
      await deps.signalReviewDigest(input);
    },

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

