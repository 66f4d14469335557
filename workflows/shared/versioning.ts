import { continueAsNew, makeContinueAsNewFunc, type Workflow } from '@temporalio/workflow';

/**
 * Whether this bundle is the versioned one (workflows/versioned.ts, loaded by workers that poll as a
 * Worker Deployment version). Set once when that entry module loads, the same in every run of the
 * worker, so what it decides is deterministic.
 */
let versioned = false;

export function markVersioned(): void {
  versioned = true;
}

/**
 * `continueAsNew`, and on a versioned worker one whose next run starts on the current deployment
 * version (auto-upgrade for its first task, then the type's own behaviour): how a pinned chain of
 * runs, a batch, moves to new code. Unversioned workers continue as before.
 */
export function continueAsNewUpgrading<F extends Workflow>(...args: Parameters<F>): Promise<never> {
  if (!versioned) return continueAsNew<F>(...args);
  return makeContinueAsNewFunc<F>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(...args);
}
