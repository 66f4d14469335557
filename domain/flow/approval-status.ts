import { defineStateMachine } from '../state-machine';

/** `flow_approvals.status` (spec, Approval). Moved only by db/flow/approval-state.ts. */
const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/**
 * One approver's say on one run: opened `pending`, decided once by the approver, or `expired` when
 * the window closed or the run was decided without it. No decision is taken back.
 */
export const APPROVAL_TRANSITIONS: Readonly<Record<ApprovalStatus, readonly ApprovalStatus[]>> = {
  pending: ['approved', 'rejected', 'expired'],
  approved: [],
  rejected: [],
  expired: [],
};

export const approvalMachine = defineStateMachine(APPROVAL_STATUSES, ['pending'], APPROVAL_TRANSITIONS);
