import { defineStateMachine } from '../state-machine';

/** `flow_runs.status` (spec, Run). Moved only by db/flow/run-state.ts. */
export const RUN_STATUSES = ['validation_failed', 'validated', 'rendering', 'review_required', 'approved', 'rejected', 'expired', 'delivering', 'completed', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * The run lifecycle (docs/flow.md, "Run lifecycle"):
 *
 *   validated → [rendering] → [review_required → approved | rejected | expired] → [delivering] → completed | failed
 *
 * A submission records the run `validation_failed`, `completed` (nothing left to do) or `validated`
 * (its workflow takes it on). Each bracketed step is skipped when the gate has none. A `failed` run
 * whose failed deliveries all succeed on a manual retry becomes `completed`.
 */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  validation_failed: [],
  // The run workflow checks the gate when it starts: a gate edited since may leave nothing to do.
  validated: ['rendering', 'review_required', 'delivering', 'completed'],
  rendering: ['review_required', 'delivering', 'completed', 'failed'],
  review_required: ['approved', 'rejected', 'expired'],
  approved: ['delivering', 'completed'],
  rejected: [],
  expired: [],
  delivering: ['completed', 'failed'],
  completed: [],
  failed: ['completed'],
};

export const runMachine = defineStateMachine(RUN_STATUSES, ['validation_failed', 'validated', 'completed'], RUN_TRANSITIONS);
