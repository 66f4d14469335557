import { randomUUID } from 'node:crypto';
import { closedOutcome, type ApprovalOutcome } from '../../domain/flow/approval-outcome';
import { approvalMachine } from '../../domain/flow/approval-status';
import type { ApprovalConfig } from '../../domain/flow/gate-settings';
import { modifyReturning, type Queryable } from '../sql';

/**
 * The only writer of `flow_approvals.status` (docs/architecture.md, "State machines"). Approvals are
 * opened `pending` and moved by a conditional UPDATE from the statuses domain/flow/approval-status.ts
 * allows to reach the target: a decided approval is never decided again.
 */

export interface OpenApprovals {
  runId: string;
  gateId: string;
  projectId: string;
  /** Lower-case e-mail → name, one entry per distinct approver. */
  approvers: Map<string, string | null>;
  /** How long the magic links work, from now. */
  windowMs: number;
}

/** One pending approval per approver (ON CONFLICT: a retry adds nothing). */
export async function openApprovals(db: Queryable, input: OpenApprovals): Promise<void> {
  const [initial] = approvalMachine.initial;
  for (const [email, name] of input.approvers) {
    await db.query(
      `INSERT INTO flow_approvals (id, run_id, gate_id, project_id, approver_email, approver_name, status, magic_token_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + $8 * interval '1 millisecond')
       ON CONFLICT (run_id, approver_email) DO NOTHING`,
      [randomUUID(), input.runId, input.gateId, input.projectId, email, name, initial, input.windowMs],
    );
  }
}

/**
 * The approver's decision, if the approval can still take one and `approverEmail` is its approver's.
 * It can while it is pending and its window (`magic_token_expires_at`) is open: the conditional
 * UPDATE is the arbiter of two racing decisions, and of a decision racing the run's close
 * (closeRunApprovals locks the rows; whichever commits first wins). Returns the decided row, or
 * undefined when nothing moved.
 */
export async function recordApprovalDecision(
  db: Queryable,
  input: { approvalId: string; approverEmail: string; decision: 'approved' | 'rejected'; comment: string | null },
): Promise<{ run_id: string; approver_email: string } | undefined> {
  const [row] = await modifyReturning<{ run_id: string; approver_email: string }>(
    db,
    `UPDATE flow_approvals SET status = $2, comment = $3, decided_at = now(), magic_token_hash = NULL, signal_pending = true
      WHERE id = $1 AND approver_email = $4 AND status = ANY($5::text[])
        AND (magic_token_expires_at IS NULL OR magic_token_expires_at > now())
      RETURNING run_id, approver_email`,
    [input.approvalId, input.decision, input.comment, input.approverEmail, approvalMachine.sourcesOf(input.decision)],
  );
  return row;
}

/**
 * The end of a run's approval: approvals still open become `expired` and no magic link of the run
 * works any more. Returns the e-mails of the approvals that expired.
 */
export async function expireOpenApprovals(db: Queryable, runId: string): Promise<string[]> {
  const expired = await modifyReturning<{ approver_email: string }>(
    db,
    `UPDATE flow_approvals SET status = 'expired', decided_at = now(), magic_token_hash = NULL
      WHERE run_id = $1 AND status = ANY($2::text[]) RETURNING approver_email`,
    [runId, approvalMachine.sourcesOf('expired')],
  );
  await db.query(`UPDATE flow_approvals SET magic_token_hash = NULL WHERE run_id = $1`, [runId]);
  return expired.map((e) => e.approver_email);
}

export interface ClosedApprovals {
  outcome: ApprovalOutcome;
  /** No decision settled it: the window's end did (`onTimeout`). */
  timedOut: boolean;
  /** The e-mails of the approvals that expired now. */
  expired: string[];
}

/**
 * Closes a run's approval and decides its outcome from the rows, in the caller's transaction: the
 * run's approvals are locked, those still open expire, and the decided ones are counted against the
 * gate's rule (domain/flow/approval-outcome.ts). A decision committed before the lock is counted; one
 * arriving after it finds its approval expired and is refused, so the outcome and every decision's
 * answer agree. Run it again and it answers the same (nothing is pending any more).
 */
export async function closeRunApprovals(
  db: Queryable,
  input: { runId: string; requiredApprovals: number; onTimeout: ApprovalConfig['onTimeout'] },
): Promise<ClosedApprovals> {
  await db.query(`SELECT id FROM flow_approvals WHERE run_id = $1 ORDER BY id FOR UPDATE`, [input.runId]);
  const expired = await expireOpenApprovals(db, input.runId);
  const [count]: Array<{ approved: number; rejected: number }> = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'approved')::int AS approved, count(*) FILTER (WHERE status = 'rejected')::int AS rejected
       FROM flow_approvals WHERE run_id = $1`,
    [input.runId],
  );
  return { ...closedOutcome(count, input.requiredApprovals, input.onTimeout), expired };
}
