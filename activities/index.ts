import { createIdentityActivities, type IdentityActivityDeps } from './identity';

export type ActivityDeps = IdentityActivityDeps;

/** All activities of the main task queue, built from their dependencies. */
export function createActivities(deps: ActivityDeps) {
  return { ...createIdentityActivities(deps) };
}
