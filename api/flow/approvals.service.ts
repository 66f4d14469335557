import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Mailer } from '../../activities/mail/mailer';
import { sendApprovalLinks } from '../../activities/flow/approval-mail';
import { revokeIdleReviewTokens } from '../../activities/flow/approvals.activity';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { isUuid } from '../../domain/flow/flow-ids';
import type { Logger } from '../../domain/logger';
import { workflowIds } from '../../domain/temporal-names';
import { approvalDecisionSignal } from '../../workflows/flow/approval-signals';
import type { ApprovalRow } from './approvals.presenter';
import type { ListApprovalsQuery } from './approvals.schema';
import { getRun } from './runs.service';

export interface ApprovalDeps {
  db: DataSource;
  temporal: Client;
  mailer: Mailer;
  publicUrl: string;
  logger: Logger;
}

/** Who may see or decide an approval: the workspace (API key, JWT) or the approver (review token). */
export type ApprovalScope = { projectId: string } | { email: string };

const SELECT_APPROVAL = `
  SELECT a.id, a.run_id, r.short_id AS run_short_id, r.status AS run_status, a.gate_id, g.name AS gate_name,
         a.approver_email, a.approver_name, a.status, a.comment, a.decided_at, a.magic_token_expires_at,
         a.sent_count, a.last_sent_at, a.created_at
    FROM flow_approvals a JOIN flow_runs r ON r.id = a.run_id JOIN flow_gates g ON g.id = a.gate_id`;

function scopeSql(scope: ApprovalScope, param: number): { sql: string; value: string } {
  return 'projectId' in scope ? { sql: `a.project_id = $${param}`, value: scope.projectId } : { sql: `a.approver_email = $${param}`, value: scope.email };
}

/** Pending approvals in the scope, oldest first (what waits longest comes first). */
export async function listPendingApprovals(db: DataSource, scope: ApprovalScope, query: Pick<ListApprovalsQuery, 'page' | 'limit' | 'email'>) {
  const s = scopeSql(scope, 1);
  const where = `WHERE ${s.sql} AND a.status = 'pending' AND ($2::text IS NULL OR a.approver_email = $2)`;
  const params = [s.value, query.email ?? null];
  const approvals: ApprovalRow[] = await db.query(`${SELECT_APPROVAL} ${where} ORDER BY a.created_at, a.approver_email LIMIT $3 OFFSET $4`, [
    ...params,
    query.limit,
    (query.page - 1) * query.limit,
  ]);
  const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM flow_approvals a ${where}`, params);
  return { approvals, total: n as number };
}

/** One approval in the scope; another workspace's or another approver's is not found. */
export async function getApproval(db: DataSource, scope: ApprovalScope, id: string): Promise<ApprovalRow> {
  if (!isUuid(id)) throw new AppError('FLOW.APPROVAL_NOT_FOUND', undefined, { approvalId: id });
  const s = scopeSql(scope, 2);
  const [row] = await db.query(`${SELECT_APPROVAL} WHERE a.id = $1 AND ${s.sql}`, [id, s.value]);
  if (!row) throw new AppError('FLOW.APPROVAL_NOT_FOUND', undefined, { approvalId: id });
  return row as ApprovalRow;
}

/**
 * Records a decision, then tells the run's workflow. The conditional UPDATE is the arbiter: of
 * two decisions racing for one approval exactly one finds it pending; the other gets 409. The
 * workflow re-reads the table when signalled, so a signal lost here (Temporal unreachable) is made
 * up at the next signal, reminder or timeout; the decision itself is already safe.
 */
export async function decideApproval(
  deps: Pick<ApprovalDeps, 'db' | 'temporal' | 'logger'>,
  scope: ApprovalScope,
  input: { approvalId: string; decision: 'approved' | 'rejected'; comment?: string },
): Promise<{ success: true; decision: 'approved' | 'rejected' }> {
  const current = await getApproval(deps.db, scope, input.approvalId);
  const [row] = await modifyReturning<{ run_id: string; approver_email: string }>(
    deps.db,
    `UPDATE flow_approvals SET status = $2, comment = $3, decided_at = now(), magic_token_hash = NULL
      WHERE id = $1 AND status = 'pending' RETURNING run_id, approver_email`,
    [current.id, input.decision, input.comment ? input.comment : null],
  );
  if (!row) throw new AppError('FLOW.APPROVAL_ALREADY_DECIDED', undefined, { approvalId: current.id, status: (await getApproval(deps.db, scope, current.id)).status });
  await revokeIdleReviewTokens(deps.db, [row.approver_email]);
  try {
    await deps.temporal.workflow.getHandle(workflowIds.flowRun(row.run_id)).signal(approvalDecisionSignal, { approvalId: current.id, decision: input.decision });
  } catch (err) {
    deps.logger.warn('approval decision recorded but not signalled; the run workflow picks it up at its next check', { runId: row.run_id, err });
  }
  return { success: true, decision: input.decision };
}

/** Spec: re-sends approval e-mails to every pending approver of a run in `review_required`. */
export async function resendRunApprovals(deps: Pick<ApprovalDeps, 'db' | 'mailer' | 'publicUrl'>, projectId: string, runRef: string) {
  const run = await getRun(deps.db, projectId, runRef);
  if (run.status !== 'review_required') throw new AppError('FLOW.RUN_NOT_IN_REVIEW', undefined, { runId: run.id, status: run.status });
  const sentCount = await sendApprovalLinks(deps, run.id, 'resend');
  const [{ n }] = await deps.db.query(`SELECT count(*)::int AS n FROM flow_approvals WHERE run_id = $1`, [run.id]);
  return { success: true, sentCount, totalApprovers: n as number };
}
