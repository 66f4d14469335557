import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, condition, patched, proxyActivities, setHandler, startChild } from '@temporalio/workflow';
import type { ApprovalActivities } from '../../activities/flow/approvals.activity';
import { decidedOutcome, type ApprovalOutcome } from '../../domain/flow/approval-outcome';
import type { ApprovalConfig } from '../../domain/flow/gate-settings';
import { workflowIds } from '../../domain/temporal-names';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { SA_ENTITY_ID, SA_KIND, SA_PROJECT_ID } from '../shared/search-attributes';
import { approvalDecisionSignal } from './approval-signals';
import { flowReviewDigestWorkflow } from './review-digest.workflow';

const { readApprovalTally, closeApproval, signalReviewDigest } = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  // Database outages are waited out: the run was accepted and must reach its end.
  retry: RETRY.flowBookkeeping,
});
/** The two that e-mail approvers and owners (magic links, notices, reminders). */
const { openApproval, sendApprovalReminders } = proxyEgressActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  // Database and SMTP outages are waited out: the run was accepted and must reach its end.
  retry: RETRY.flowBookkeeping,
});

export interface AwaitApprovalInput {
  runId: string;
  projectId: string;
  gateId: string;
  approvalConfig: ApprovalConfig;
  /** Milliseconds in a minute of `timeoutMinutes`; default: the worker's FLOW_MINUTE_MS. */
  minuteMs?: number;
}

/** The gate's digest is told of the run by signal-with-start (an activity) instead of a child start that an ending digest could swallow. */
const DIGEST_SIGNAL_PATCH = 'review-digest-signal';

/** Reminders go out when this share of the window has passed, to approvers still pending. */
const REMINDER_AT = 0.8;

/**
 * Waits until `done()` or `timeoutMs` passes (the samples' `timeoutOrUserAction`).
 * Resolves true when `done()` became true, false on timeout.
 */
function timeoutOrUserAction(done: () => boolean, timeoutMs: number): Promise<boolean> {
  return condition(done, Math.max(1, Math.round(timeoutMs)));
}

/**
 * Human approval of a run (docs/flow.md, "Approvals"). The activities create one approval per
 * approver, put the run in `review_required` and e-mail magic links (tokens never enter history).
 * Decisions are recorded by the API in flow_approvals first and then signalled; the signal only
 * says "look again", so the tally is always re-read from the database and a lost signal is made up
 * at the next signal, the reminder or the timeout. `requiredApprovals` approvals approve, one
 * rejection rejects; at the timeout `onTimeout` decides. The tally only tells the wait when to stop:
 * the outcome is closeApproval's, decided from the rows it locks, so a decision recorded between the
 * last read and the close counts and one after the close is refused. Returns the outcome, already
 * recorded on the run (`approved`, `rejected` or `expired`).
 */
export async function awaitApproval(input: AwaitApprovalInput): Promise<ApprovalOutcome> {
  let signalled = false;
  setHandler(approvalDecisionSignal, () => {
    signalled = true;
  });
  const opened = await openApproval(input);
  const minuteMs = input.minuteMs ?? opened.minuteMs;
  if (opened.notificationMode === 'digest') {
    const digest = { gateId: input.gateId, digestMinutes: opened.digestMinutes, minuteMs };
    // Signal-with-start from an activity: a digest that is just ending cannot swallow this run's review.
    if (patched(DIGEST_SIGNAL_PATCH)) await signalReviewDigest({ ...digest, projectId: input.projectId });
    else await ensureReviewDigest(digest, input.projectId);
  }

  const windowMs = Math.max(1, input.approvalConfig.timeoutMinutes) * minuteMs;
  const started = Date.now();
  const deadline = started + windowMs;
  const reminderAt = started + windowMs * REMINDER_AT;
  let reminded = false;
  let tally = await readApprovalTally({ runId: input.runId });
  const decided = () => decidedOutcome(tally, opened.requiredApprovals) !== undefined;

  while (!decided()) {
    const now = Date.now();
    if (now >= deadline) break;
    // A reminder whose moment passed while the worker was busy or away is still sent, once.
    const wakeAt = reminded ? deadline : Math.min(reminderAt, deadline);
    const woken = await timeoutOrUserAction(() => signalled, wakeAt - now);
    signalled = false;
    tally = await readApprovalTally({ runId: input.runId });
    if (!woken && !reminded && Date.now() < deadline && !decided()) {
      reminded = true;
      await sendApprovalReminders({ runId: input.runId });
    }
  }

  const closed = await closeApproval({ runId: input.runId, requiredApprovals: opened.requiredApprovals, onTimeout: input.approvalConfig.onTimeout });
  // Replay safety without a patch: the commands are the same as before. Histories whose close was
  // scheduled by the code before (it returned nothing) keep the outcome that code took from its tally.
  return closed?.outcome ?? decidedOutcome(tally, opened.requiredApprovals) ?? (input.approvalConfig.onTimeout === 'approve' ? 'approved' : 'expired');
}

/**
 * Runs from before DIGEST_SIGNAL_PATCH: starts the gate's digest timer unless it runs already. It is abandoned by its parent on
 * purpose: it outlives the run and serves every run of the gate. It carries the gate's project
 * like every workflow a project causes (its continue-as-new runs inherit it). Search attributes
 * are not part of what replay compares (the child's id and type are), so runs that started a
 * digest without them replay unchanged: no patch.
 */
async function ensureReviewDigest(input: { gateId: string; digestMinutes: number; minuteMs: number }, projectId: string): Promise<void> {
  try {
    await startChild(flowReviewDigestWorkflow, {
      workflowId: workflowIds.reviewDigest(input.gateId),
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: SA_KIND, value: 'flow-review-digest' },
        { key: SA_ENTITY_ID, value: input.gateId },
        { key: SA_PROJECT_ID, value: projectId },
      ],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
