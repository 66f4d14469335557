import type { ApprovalConfig } from './gate-settings';

/** How a run's approval ended (docs/flow.md, "Approvals"); the run's status and `approvalStatus` take it. */
export type ApprovalOutcome = 'approved' | 'rejected' | 'expired';

/** The decided approvals of one run. */
export interface ApprovalCount {
  approved: number;
  rejected: number;
}

/**
 * The gate's rule, while the window is open: one rejection rejects, `requiredApprovals` approvals
 * approve; otherwise the run is not decided yet (undefined).
 */
export function decidedOutcome(count: ApprovalCount, requiredApprovals: number): 'approved' | 'rejected' | undefined {
  if (count.rejected > 0) return 'rejected';
  if (count.approved >= requiredApprovals) return 'approved';
  return undefined;
}

/**
 * The outcome once the window is closed and no further decision can be recorded: the decisions,
 * and where they decide nothing, `onTimeout` (`timedOut` then says so).
 */
export function closedOutcome(count: ApprovalCount, requiredApprovals: number, onTimeout: ApprovalConfig['onTimeout']): { outcome: ApprovalOutcome; timedOut: boolean } {
  const decided = decidedOutcome(count, requiredApprovals);
  if (decided) return { outcome: decided, timedOut: false };
  return { outcome: onTimeout === 'approve' ? 'approved' : 'expired', timedOut: true };
}
