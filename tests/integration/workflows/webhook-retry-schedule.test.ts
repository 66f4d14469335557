import { randomUUID } from 'node:crypto';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import type { AttemptDeliveryInput, AttemptDeliveryResult } from '../../../activities/webhooks/attempt-delivery.activity';
import { workflowIds } from '../../../domain/temporal-names';
import type { AttemptOutcome } from '../../../domain/webhooks/delivery';
import type { deliverWebhookWorkflow } from '../../../workflows/webhooks/deliver-webhook.workflow';
import { startWorkflowHarness, timerDurationsMs, type WorkflowHarness } from './harness';
import { waitFor } from '../../support/wait';

/**
 * The webhook retry schedule (spec, Events: at most 3 retries, after 30 s, 2 min and 10 min; shortened
 * through `retryDelaysMs`, as WEBHOOK_RETRY_DELAYS does) as the real delivery workflow runs it. The
 * attempt activity is a stub that answers what the test scripts for its delivery: the receiver's
 * outcome of each attempt, in order.
 */
describe('webhook delivery retry schedule (stubbed attempts)', () => {
  let h: WorkflowHarness;
  /** deliveryId → the outcome of each attempt in turn (the last one repeats). */
  const script = new Map<string, AttemptOutcome[]>();

  beforeAll(async () => {
    h = await startWorkflowHarness('webhook-retry', {
      async attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptDeliveryResult> {
        const outcomes = script.get(input.deliveryId) ?? ['delivered'];
        const outcome = outcomes[Math.min(input.attempt, outcomes.length) - 1];
        return outcome === 'delivered' ? { outcome, statusCode: 200 } : { outcome, statusCode: outcome === 'retry' ? 503 : 410, error: 'receiver said no' };
      },
      async abandonWebhookDelivery(_input: { deliveryId: string }) {
        return undefined;
      },
    });
  });
  afterAll(() => h?.close());

  const deliver = (outcomes: AttemptOutcome[], retryDelaysMs?: number[], startAttempt?: number) => {
    const deliveryId = randomUUID();
    script.set(deliveryId, outcomes);
    const started = h.client.workflow.start<typeof deliverWebhookWorkflow>('deliverWebhookWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: workflowIds.webhookDelivery(deliveryId),
      args: [{ deliveryId, ...(retryDelaysMs ? { retryDelaysMs } : {}), ...(startAttempt !== undefined ? { startAttempt } : {}) }],
    });
    return { deliveryId, started };
  };
  const attemptsOf = (deliveryId: string) => h.log.about('deliveryId', deliveryId).filter((c) => c.name === 'attemptDelivery');

  it('a receiver that fails twice and then answers 2xx is delivered on the third attempt, after the first two waits of the schedule', async () => {
    const { deliveryId, started } = deliver(['retry', 'retry', 'delivered'], [300, 600, 1200]);
    const handle = await started;

    expect(await handle.result()).toBe('completed');
    const attempts = attemptsOf(deliveryId);
    expect(attempts.map((c) => c.input)).toEqual([
      { deliveryId, attempt: 1, retryInMs: 300 },
      { deliveryId, attempt: 2, retryInMs: 600 },
      { deliveryId, attempt: 3, retryInMs: 1200 },
    ]);
    // The waits are durable timers of exactly the schedule's lengths; the stub saw at least that much time pass.
    expect(await timerDurationsMs(handle)).toEqual([300, 600]);
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(300);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(600);
  });

  it('a receiver that keeps failing gets the first attempt and three retries (a fourth delay is ignored), then the delivery fails', async () => {
    const { deliveryId, started } = deliver(['retry'], [100, 200, 300, 400]);
    const handle = await started;

    expect(await handle.result()).toBe('failed');
    expect(attemptsOf(deliveryId).map((c) => c.input)).toEqual([
      { deliveryId, attempt: 1, retryInMs: 100 },
      { deliveryId, attempt: 2, retryInMs: 200 },
      { deliveryId, attempt: 3, retryInMs: 300 },
      // The last attempt is told no retry follows, so its record says the delivery failed.
      { deliveryId, attempt: 4, retryInMs: undefined },
    ]);
    expect(await timerDurationsMs(handle)).toEqual([100, 200, 300]);
  });

  it("a document event's retries (startAttempt 2: attempt 1 was the document workflow's) wait the first delay, then follow the rest of the schedule", async () => {
    const { deliveryId, started } = deliver(['retry'], [300, 100, 200], 2);
    const handle = await started;

    expect(await handle.result()).toBe('failed');
    expect(attemptsOf(deliveryId).map((c) => c.input)).toEqual([
      { deliveryId, attempt: 2, retryInMs: 100 },
      { deliveryId, attempt: 3, retryInMs: 200 },
      { deliveryId, attempt: 4, retryInMs: undefined },
    ]);
    expect(await timerDurationsMs(handle)).toEqual([300, 100, 200]);
  });

  it('a start past the schedule makes no attempt; a start that is not an attempt number begins at 1', async () => {
    const past = deliver(['delivered'], [100], 3);
    expect(await (await past.started).result()).toBe('failed');
    expect(attemptsOf(past.deliveryId)).toEqual([]);

    for (const odd of [0, -2, 1.5, Number.NaN]) {
      const { deliveryId, started } = deliver(['delivered'], [100], odd);
      expect(await (await started).result()).toBe('completed');
      expect(attemptsOf(deliveryId).map((c) => c.input)).toEqual([{ deliveryId, attempt: 1, retryInMs: 100 }]);
    }
  });

  it('a refusal (4xx) fails the delivery after one attempt, with no wait', async () => {
    const { deliveryId, started } = deliver(['permanent'], [100, 200, 300]);
    const handle = await started;

    expect(await handle.result()).toBe('failed');
    expect(attemptsOf(deliveryId)).toHaveLength(1);
    expect(await timerDurationsMs(handle)).toEqual([]);
  });

  it('without a configured schedule the first retry waits the spec 30 s; a delivery cancelled while it waits is marked abandoned once', async () => {
    const { deliveryId, started } = deliver(['retry']);
    const handle = await started;

    const timers = await waitFor(async () => {
      const t = await timerDurationsMs(handle);
      return t.length > 0 ? t : undefined;
    }, { what: 'the first retry timer' });
    expect(timers).toEqual([30_000]);
    expect(attemptsOf(deliveryId).map((c) => c.input)).toEqual([{ deliveryId, attempt: 1, retryInMs: 30_000 }]);

    // A Flow run stopped while its delivery waits cancels the delivery: the record must say so.
    await handle.cancel();
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(h.log.about('deliveryId', deliveryId).map((c) => c.name)).toEqual(['attemptDelivery', 'abandonWebhookDelivery']);
  });
});
