import type { DataSource } from 'typeorm';
import type { Mailer } from '../../adapters/mail/mailer';
import { sendApprovalLinks } from '../../db/flow/approval-mail';
import { recordApprovalDecision } from '../../db/flow/approval-state';
import { revokeIdleReviewTokens } from '../../db/flow/review-tokens';
import { AppError } from '../../domain/errors';
import type { Logger } from '../../domain/logger';
import type { WorkflowOutbox } from '../../platform/workflow-outbox';
import type { ApprovalRow } from './approvals.presenter';
import type { ListApprovalsQuery } from './approvals.schema';
import { getRun } from './runs.service';
import { consumeOrRefuse, type ResendLimiters } from '../rate-limits';
import { isUuid } from '../../domain/ids';

export interface ApprovalDeps {
  db: DataSource;
  mailer: Mailer;
  publicUrl: string;
  logger: Logger;
  outbox: Pick<WorkflowOutbox, 'startNow'>;
}

/**
 * Whose approvals a call sees: always one workspace (the API caller's project, or the project whose
 * magic link started a review session), and, when `email` is set, only that approver's approvals
 * (the signed-in user's or the key creator's e-mail on the API; the review session's e-mail).
 */
export interface ApprovalScope {
  projectId: string;
  email?: string;
}

const SELECT_APPROVAL = `
  SELECT a.id, a.run_id, r.short_id AS run_short_id, r.status AS run_status, a.gate_id, g.name AS gate_name,
         a.approver_email, a.approver_name, a.status, a.comment, a.decided_at, a.magic_token_expires_at,
         a.sent_count, a.last_sent_at, a.created_at
    FROM flow_approvals a JOIN flow_runs r ON r.id = a.run_id JOIN flow_gates g ON g.id = a.gate_id`;

function scopeSql(scope: ApprovalScope, param: number): { sql: string; values: string[] } {
  if (scope.email === undefined) return { sql: `a.project_id = $${param}`, values: [scope.projectId] };
  return { sql: `a.project_id = $${param} AND a.approver_email = lower($${param + 1})`, values: [scope.projectId, scope.email] };
}

/**
 * Pending approvals in the scope, oldest first (what waits longest comes first); with `status: decided`,
 * the approved, rejected and expired ones instead, the latest decided first (an expired one by its deadline).
 */
export async function listPendingApprovals(
  db: DataSource,
  scope: ApprovalScope & { email: string },
  query: Pick<ListApprovalsQuery, 'page' | 'limit'> & { status?: 'pending' | 'decided' },
) {
  const s = scopeSql(scope, 1);
  const decided = query.status === 'decided';
  const where = `WHERE ${s.sql} AND ${decided ? `a.status <> 'pending'` : `a.status = 'pending'`}`;
  const order = decided ? 'COALESCE(a.decided_at, a.magic_token_expires_at, a.created_at) DESC, a.id' : 'a.created_at, a.approver_email';
  const n0 = s.values.length;
  const approvals: ApprovalRow[] = await db.query(`${SELECT_APPROVAL} ${where} ORDER BY ${order} LIMIT $${n0 + 1} OFFSET $${n0 + 2}`, [
    ...s.values,
    query.limit,
    (query.page - 1) * query.limit,
  ]);
  const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM flow_approvals a ${where}`, s.values);
  return { approvals, total: n as number };
}

/** Every approval of a run (one per approver), whatever its status, in the order they were opened. */
export async function listRunApprovals(db: DataSource, projectId: string, runId: string): Promise<ApprovalRow[]> {
  return db.query(`${SELECT_APPROVAL} WHERE a.project_id = $1 AND a.run_id = $2 ORDER BY a.created_at, a.approver_email`, [projectId, runId]);
}

/** One approval in the scope; another workspace's or another approver's is not found. */
export async function getApproval(db: DataSource, scope: ApprovalScope, id: string): Promise<ApprovalRow> {
  if (!isUuid(id)) throw new AppError('FLOW.APPROVAL_NOT_FOUND', undefined, { approvalId: id });
  const s = scopeSql(scope, 2);
  const [row] = await db.query(`${SELECT_APPROVAL} WHERE a.id = $1 AND ${s.sql}`, [id, ...s.values]);
  if (!row) throw new AppError('FLOW.APPROVAL_NOT_FOUND', undefined, { approvalId: id });
  return row as ApprovalRow;
}

/**
 * Records a decision, then tells the run's workflow. Only the approver on record decides: the
 * caller's e-mail (`approver`: the signed-in user's or the API key creator's, verified; or the
 * review session's) must be the approval's approver e-mail, otherwise 403. Each approval is one
 * approver of one run (unique per run and e-mail), so an approver decides once and
 * `requiredApprovals` counts distinct approvers. The conditional UPDATE is the arbiter: of two
 * decisions racing for one approval exactly one finds it pending; the other gets 409. A decision
 * counts only if it is recorded before the approval window closes: after the link's expiry, or once
 * the run's close has expired the approval (it locks the rows, so whoever commits first wins), it is
 * 409 `FLOW.APPROVAL_ALREADY_DECIDED` with `relatedInfo.status: "expired"`, and the run's outcome
 * never contradicts a 200. The decision is recorded with its nudge mark (`signal_pending`); the
 * workflow, which re-reads the table when signalled, is told at once, and a signal that could not be
 * sent (Temporal unreachable) is sent by a worker's outbox sweep (platform/workflow-outbox.ts), not
 * left until the run's deadline.
 */
export async function decideApproval(
  deps: Pick<ApprovalDeps, 'db' | 'logger' | 'outbox'>,
  scope: ApprovalScope,
  input: { approvalId: string; decision: 'approved' | 'rejected'; comment?: string; approver: string },
): Promise<{ success: true; decision: 'approved' | 'rejected' }> {
  const current = await getApproval(deps.db, scope, input.approvalId);
  const approver = input.approver.trim().toLowerCase();
  if (current.approver_email !== approver) {
    throw new AppError('ERR_AUTH_005', 'Only the approver this approval was sent to can decide it', { required: 'approver', granted: 'none', approvalId: current.id });
  }
  const row = await recordApprovalDecision(deps.db, { approvalId: current.id, approverEmail: approver, decision: input.decision, comment: input.comment ? input.comment : null });
  if (!row) {
    // Still pending but refused: its window has passed, and the run's close will expire it.
    const { status } = await getApproval(deps.db, scope, current.id);
    throw new AppError('FLOW.APPROVAL_ALREADY_DECIDED', undefined, { approvalId: current.id, status: status === 'pending' ? 'expired' : status });
  }
  await revokeIdleReviewTokens(deps.db, [row.approver_email]);
  try {
    await deps.outbox.startNow({ kind: 'approvalNudge', id: current.id, projectId: scope.projectId });
  } catch (err) {
    deps.logger.warn('approval decision recorded but not signalled; the outbox sweep will signal it', { runId: row.run_id, err });
  }
  return { success: true, decision: input.decision };
}

/**
 * Spec: re-sends approval e-mails to every pending approver of a run in `review_required`.
 * Rate limited (docs/security.md, "Uploads, output and mail"): one point of the project's hourly
 * budget per call (ERR_LIMIT_013), one of each approver's; an approver whose budget is spent is
 * skipped, and a call that could e-mail nobody is refused (ERR_LIMIT_012).
 */
export async function resendRunApprovals(deps: Pick<ApprovalDeps, 'db' | 'mailer' | 'publicUrl'> & { limits: ResendLimiters }, projectId: string, runRef: string) {
  const run = await getRun(deps.db, projectId, runRef);
  if (run.status !== 'review_required') throw new AppError('FLOW.RUN_NOT_IN_REVIEW', undefined, { runId: run.id, status: run.status });
  await consumeOrRefuse(deps.limits.perProject, projectId, 'ERR_LIMIT_013');
  const pending: Array<{ approver_email: string }> = await deps.db.query(
    `SELECT approver_email FROM flow_approvals WHERE run_id = $1 AND status = 'pending' AND magic_token_expires_at > now() ORDER BY approver_email`,
    [run.id],
  );
  let sentCount = 0;
  let refused: AppError | undefined;
  for (const { approver_email: email } of pending) {
    try {
      await consumeOrRefuse(deps.limits.perRecipient, email.toLowerCase(), 'ERR_LIMIT_012');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      refused = err;
      continue;
    }
    sentCount += await sendApprovalLinks(deps, run.id, 'resend', { email });
  }
  if (sentCount === 0 && refused) throw refused;
  const [{ n }] = await deps.db.query(`SELECT count(*)::int AS n FROM flow_approvals WHERE run_id = $1`, [run.id]);
  return { success: true, sentCount, totalApprovers: n as number };
}
