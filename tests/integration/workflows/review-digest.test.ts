import { randomUUID } from 'node:crypto';
import { workflowIds } from '../../../domain/temporal-names';
import { reviewPendingSignal } from '../../../workflows/flow/approval-signals';
import type { flowReviewDigestWorkflow } from '../../../workflows/flow/review-digest.workflow';
import { startWorkflowHarness, type WorkflowHarness } from './harness';

/**
 * A gate's review digest (workflows/flow/review-digest.workflow.ts) with its activity stubbed: the
 * race that could leave a run in review untold until its deadline. A run's review is written just
 * after the digest read the table and found nothing; the run's `reviewPending` signal arrives while
 * the digest is ending. The digest must not end on that empty read: it waits one more period and
 * tells of the run.
 */
describe('review digest: a run entering review while the digest ends is still told', () => {
  let h: WorkflowHarness;
  /** Per gate: what each sendReviewDigest call answers, in order, and a hook the first call runs. */
  const answers = new Map<string, { sent: number[]; duringFirst?: () => Promise<void> }>();

  beforeAll(async () => {
    h = await startWorkflowHarness('review-digest', {
      async sendReviewDigest({ gateId }: { gateId: string }) {
        const gate = answers.get(gateId)!;
        const first = h.log.about('gateId', gateId).length === 1;
        // The run's review is written after this read: the signal is sent while the activity answers "nothing".
        if (first) await gate.duringFirst?.();
        return { sent: gate.sent.shift() ?? 0, gateLive: true };
      },
    });
  });
  afterAll(() => h?.close());

  const digest = (gateId: string) =>
    h.client.workflow.start<typeof flowReviewDigestWorkflow>('flowReviewDigestWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: workflowIds.reviewDigest(gateId),
      args: [{ gateId, digestMinutes: 1, minuteMs: 50 }],
    });

  it('a digest that found nothing but was signalled meanwhile looks once more, and tells of the run', async () => {
    const gateId = randomUUID();
    // First read: nothing (the run's review not yet written); second: the run; third: nothing new.
    answers.set(gateId, { sent: [0, 1, 0], duringFirst: () => h.client.workflow.getHandle(workflowIds.reviewDigest(gateId)).signal(reviewPendingSignal) });
    await (await digest(gateId)).result();
    expect(h.log.about('gateId', gateId).map((c) => c.name)).toEqual(['sendReviewDigest', 'sendReviewDigest', 'sendReviewDigest']);
  });

  it('without a signal, an empty read ends the digest (the next run in review starts it again)', async () => {
    const gateId = randomUUID();
    answers.set(gateId, { sent: [0] });
    await (await digest(gateId)).result();
    expect(h.log.about('gateId', gateId)).toHaveLength(1);
  });

  it('a signal to a digest that has ended starts a new one (signal-with-start)', async () => {
    const gateId = randomUUID();
    answers.set(gateId, { sent: [0, 0] });
    await (await digest(gateId)).result();
    await h.client.workflow.signalWithStart<typeof flowReviewDigestWorkflow, []>('flowReviewDigestWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: workflowIds.reviewDigest(gateId),
      args: [{ gateId, digestMinutes: 1, minuteMs: 50 }],
      signal: reviewPendingSignal,
      signalArgs: [],
    });
    await h.client.workflow.getHandle(workflowIds.reviewDigest(gateId)).result();
    // The new run's one read comes after its starting signal (the run's review was written before it): nothing more to wait for.
    expect(h.log.about('gateId', gateId)).toHaveLength(2);
  });
});
