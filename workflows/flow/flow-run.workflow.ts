import { proxyActivities } from '@temporalio/workflow';
import type { FlowActivities } from '../../activities/flow';

const { settleFlowRun } = proxyActivities<FlowActivities>({
  startToCloseTimeout: '30 seconds',
  // A database outage is waited out: the run was accepted and must reach its end.
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export interface FlowRunInput {
  runId: string;
}

/**
 * The workflow of a Flow run with render, approval or delivery to do; its id is the run id
 * (contract §5), started by worker/flow-run-starter.ts once the run row is committed.
 *
 * PLACEHOLDER: rendering, approval (signals, timeout timers) and delivery (retry timers) arrive
 * with the Flow-lifecycle issue, which replaces this body. Until then the run is recorded as it
 * is: `validated` becomes `completed`, nothing is rendered, approved or delivered.
 */
export async function flowRunWorkflow(input: FlowRunInput): Promise<void> {
  await settleFlowRun({ runId: input.runId });
}
