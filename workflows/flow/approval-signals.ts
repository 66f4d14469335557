import { defineSignal } from '@temporalio/workflow';
import { signalNames } from '../../domain/temporal-names';

/** A decision the API recorded in flow_approvals; the workflow re-reads the table when it arrives. */
export interface ApprovalDecision {
  approvalId: string;
  decision: 'approved' | 'rejected';
}

/**
 * Sent to the run's workflow (id = run id) after the decision is committed. Kept apart from the
 * workflow code so the API imports only the signal's definition.
 */
export const approvalDecisionSignal = defineSignal<[ApprovalDecision]>(signalNames.approvalDecision);

/**
 * Sent with signal-with-start to a gate's review digest (`flow-review-digest-<gateId>`) by a run
 * that entered review in `digest` mode: the digest keeps going (or starts) until it has told of it.
 */
export const reviewPendingSignal = defineSignal(signalNames.reviewPending);
