import { defineSignal } from '@temporalio/workflow';

/** A decision the API recorded in flow_approvals; the workflow re-reads the table when it arrives. */
export interface ApprovalDecision {
  approvalId: string;
  decision: 'approved' | 'rejected';
}

/**
 * Sent to the run's workflow (id = run id) after the decision is committed. Kept apart from the
 * workflow code so the API imports only the signal's definition.
 */
export const approvalDecisionSignal = defineSignal<[ApprovalDecision]>('approvalDecision');
