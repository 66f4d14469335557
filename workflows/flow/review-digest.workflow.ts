import { continueAsNew, setHandler, sleep } from '@temporalio/workflow';
import type { ApprovalActivities } from '../../activities/flow/approvals.activity';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { reviewPendingSignal } from './approval-signals';

const { sendReviewDigest } = proxyEgressActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY.flowBookkeeping,
});

export interface ReviewDigestInput {
  gateId: string;
  digestMinutes: number;
  minuteMs: number;
}

/** Digests before the history is handed over to a fresh run (continue-as-new). */
const DIGESTS_PER_RUN = 100;

/**
 * The `digest` notification timer of one gate (id `flow-review-digest-<gateId>`): started by the
 * first run that enters review, it sends every `notificationDigestMinutes` one e-mail to the
 * gate's owners listing the runs that entered review since the last digest, and ends after a
 * period with nothing to tell; the next run needing review starts it again.
 *
 * Runs entering review send `reviewPending` with signal-with-start. A digest that found nothing does
 * not end if such a signal arrived while it looked (the run's review may have been written just after
 * the digest read): it waits one more period. A signal that arrives as it ends makes Temporal reject
 * the end, so the workflow sees it; one after it ended starts a new run. No run in review goes untold.
 * Histories without the signal take the same commands as before: no patch.
 */
export async function flowReviewDigestWorkflow(input: ReviewDigestInput): Promise<void> {
  let told = false;
  setHandler(reviewPendingSignal, () => {
    told = true;
  });
  for (let i = 0; i < DIGESTS_PER_RUN; i += 1) {
    await sleep(Math.max(1, input.digestMinutes) * input.minuteMs);
    told = false;
    const { sent, gateLive } = await sendReviewDigest({ gateId: input.gateId });
    if (!gateLive || (sent === 0 && !told)) return;
  }
  await continueAsNew<typeof flowReviewDigestWorkflow>(input);
}
