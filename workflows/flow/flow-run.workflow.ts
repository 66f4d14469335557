import { ActivityFailure, ApplicationFailure, log, proxyActivities } from '@temporalio/workflow';
import type { FlowActivities } from '../../activities/flow';
import type { FlowRenderActivities } from '../../activities/flow/flow-render.activity';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { dispatchDeliveries } from '../webhooks/dispatch-deliveries';
import { awaitApproval } from './approval';

/** Database bookkeeping: an outage is waited out, the run was accepted and must reach its end. */
const records = proxyActivities<FlowActivities>({
  startToCloseTimeout: '30 seconds',
  retry: RETRY.flowBookkeeping,
});

/** Render attempts: a few, then the run fails with the last error (spec: "failures retried then recorded"). */
const renderApi = proxyEgressActivities<FlowActivities>({ startToCloseTimeout: '2 minutes', retry: RETRY.flowRender });

/**
 * The config a run needs is part of its input (filled by `flowRunWorkflowInput` in
 * platform/workflow-starts.ts), never read from a global: a start without it does not compile.
 */
export interface FlowRunInput {
  runId: string;
  /** config.webhooks.retryDelaysMs (WEBHOOK_RETRY_DELAYS). */
  retryDelaysMs: number[];
  /** The render task queue (Chromium), where `renderFlowArtefact` runs. */
  renderTaskQueue: string;
}

export type FlowRunResult = 'completed' | 'failed' | 'rejected' | 'expired';

/**
 * The lifecycle of an accepted Flow run (docs/flow.md, "Run lifecycle"); its id is the run id
 * (contract §5), started by platform/workflow-outbox.ts once the run row is committed.
 *
 *   validated → [rendering] → [review_required → approved | rejected | expired] → [delivering] → completed | failed
 *
 * Render failures (after a few attempts) and failed deliveries fail the run and count against the
 * gate's circuit breaker; a finished run counts as a success. Rejected or expired runs stop
 * without delivery; `onTimeout: approve` returns `approved` and the run delivers.
 */
export async function flowRunWorkflow(input: FlowRunInput): Promise<FlowRunResult> {
  const { runId } = input;
  const run = await records.loadFlowRun({ runId });
  if (!run) return 'failed';
  if (run.status !== 'validated') log.warn('flow run workflow found the run already moved', { runId, status: run.status });

  if (run.renderMode === 'native' || run.renderMode === 'custom_api') {
    await records.updateFlowRun({ runId, status: 'rendering' });
    try {
      if (run.renderMode === 'native') {
        const render = proxyActivities<FlowRenderActivities>({
          startToCloseTimeout: '5 minutes',
          // Heartbeats every 2 s: a worker that dies mid-render is noticed quickly and the render retried elsewhere.
          heartbeatTimeout: '20 seconds',
          retry: RETRY.flowRender,
          // Runs started before the field was required have none: undefined keeps the workflow's own queue, as then.
          taskQueue: input.renderTaskQueue,
        });
        await render.renderFlowArtefact({ runId });
      } else {
        await renderApi.callFlowRenderApi({ runId });
      }
    } catch (err) {
      const error = `Render failed: ${failureMessage(err)}`;
      const errorCode = failureCode(err);
      // The breaker first: whoever sees the run failed also sees it counted.
      await records.recordFlowRunOutcome({ runId, outcome: 'failure' });
      await records.updateFlowRun({ runId, status: 'failed', error, ...(errorCode ? { errorCode } : {}), finished: true });
      return 'failed';
    }
  }

  if (run.approvalMode === 'manual' && run.approvalConfig) {
    // The helper opens the approvals, sets `review_required`, and its closeApproval decides the
    // outcome and writes it on the run. The status write below changes nothing (moveRun does not
    // repeat a move that already happened); it stays so that running histories replay the same commands.
    const outcome = await awaitApproval({ runId, projectId: run.projectId, gateId: run.gateId, approvalConfig: run.approvalConfig });
    if (outcome !== 'approved') {
      await records.updateFlowRun({ runId, status: outcome, approvalStatus: outcome, finished: true });
      return outcome;
    }
    await records.updateFlowRun({ runId, status: 'approved', approvalStatus: 'approved' });
  }

  if (run.deliveryChannelCount > 0) {
    await records.updateFlowRun({ runId, status: 'delivering', deliveryStatus: 'delivering' });
    const ids = await records.prepareFlowDeliveries({ runId });
    await dispatchDeliveries(ids, input.retryDelaysMs, { wait: true, projectId: run.projectId });
    // Read from the records, not the children's results: a manual retry may have fixed one meanwhile.
    // The activity also reports the outcome to the circuit breaker, before the run shows it.
    return records.finishFlowDeliveries({ runId });
  }

  await records.recordFlowRunOutcome({ runId, outcome: 'success' });
  await records.updateFlowRun({ runId, status: 'completed', finished: true });
  return 'completed';
}

/** The catalogued code of an activity failure (its type, for an AppError the activity threw), if it has one. */
function failureCode(err: unknown): string | undefined {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  return e instanceof ApplicationFailure && e.type && /^(ERR_|FLOW\.)/.test(e.type) ? e.type : undefined;
}

/** The innermost message of an activity failure (the render error, not "Activity task failed"). */
function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure || e instanceof Error) return e.message;
  return String(e);
}
