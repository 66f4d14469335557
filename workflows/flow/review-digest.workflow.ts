import { continueAsNew, sleep } from '@temporalio/workflow';
import type { ApprovalActivities } from '../../activities/flow/approvals.activity';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';

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
 */
export async function flowReviewDigestWorkflow(input: ReviewDigestInput): Promise<void> {
  for (let i = 0; i < DIGESTS_PER_RUN; i += 1) {
    await sleep(Math.max(1, input.digestMinutes) * input.minuteMs);
    const { sent, gateLive } = await sendReviewDigest({ gateId: input.gateId });
    if (sent === 0 || !gateLive) return;
  }
  await continueAsNew<typeof flowReviewDigestWorkflow>(input);
}
