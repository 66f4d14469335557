import { defineStateMachine } from '../state-machine';

/** `reporting_agent_tasks.status` (docs/agent.md). Moved only by db/reporting/agent-task-state.ts. */
const AGENT_TASK_STATUSES = ['queued', 'leased', 'completed', 'failed', 'cancel_requested', 'cancelled', 'expired'] as const;
export type AgentTaskStatus = (typeof AGENT_TASK_STATUSES)[number];

/**
 * A task for an agent: `queued` until a session of its agent leases it, then answered `completed` or
 * `failed`. Cancelling ends a queued task at once and asks a leased one to stop (`cancel_requested`,
 * the heartbeat answer's `cancel`), which the agent answers `cancelled` (or with the result it had).
 * A queued test, schema or preview task nobody leased in time fails; a task whose activity is gone,
 * whose lease ran out, or whose attempt was superseded is `expired`. An answer that came after its
 * run stopped waiting (`completed`/`failed` with nobody to complete) is `expired` too, so `completed`
 * and `failed` list it; they are ends all the same (`ended`).
 */
export const AGENT_TASK_TRANSITIONS: Readonly<Record<AgentTaskStatus, readonly AgentTaskStatus[]>> = {
  queued: ['leased', 'failed', 'cancelled', 'expired'],
  leased: ['completed', 'failed', 'cancel_requested', 'expired'],
  completed: ['expired'],
  failed: ['expired'],
  cancel_requested: ['completed', 'failed', 'cancelled', 'expired'],
  cancelled: [],
  expired: [],
};

export const agentTaskMachine = defineStateMachine(AGENT_TASK_STATUSES, ['queued'], AGENT_TASK_TRANSITIONS, { ended: ['completed', 'failed'] });
