import { createFlowRunActivities, type FlowActivityDeps } from './flow-run.activity';

export type { FlowActivityDeps };

export function createFlowActivities(deps: FlowActivityDeps) {
  return { ...createFlowRunActivities(deps) };
}
export type FlowActivities = ReturnType<typeof createFlowActivities>;
