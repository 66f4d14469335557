import { createFlowActivities, type FlowActivityDeps } from './flow';
import { createIdentityActivities, type IdentityActivityDeps } from './identity';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks';

export type ActivityDeps = IdentityActivityDeps & FlowActivityDeps & WebhookActivityDeps;

/** All activities of the main task queue, built from their dependencies. */
export function createActivities(deps: ActivityDeps) {
  return { ...createIdentityActivities(deps), ...createFlowActivities(deps), ...createWebhookActivities(deps) };
}
