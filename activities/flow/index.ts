import { createApprovalActivities, type ApprovalActivityDeps } from './approvals.activity';
import { createFlowRunActivities, type FlowActivityDeps as FlowRunActivityDeps } from './flow-run.activity';

export type FlowActivityDeps = FlowRunActivityDeps & ApprovalActivityDeps;

export function createFlowActivities(deps: FlowActivityDeps) {
  return { ...createFlowRunActivities(deps), ...createApprovalActivities(deps) };
}
export type FlowActivities = ReturnType<typeof createFlowActivities>;
