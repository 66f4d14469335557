import type { DataSource } from 'typeorm';
import { recordRunOutcome, type RunOutcome } from '../../db/flow/gate-circuit';

export interface FlowActivityDeps {
  db: DataSource;
}

/**
 * Activities of the Flow run workflow. For now only the placeholder step: the Flow-lifecycle
 * issue adds rendering, approvals and delivery, and reports their outcome to the circuit breaker
 * through `recordFlowRunOutcome`.
 */
export function createFlowRunActivities(deps: FlowActivityDeps) {
  return {
    /**
     * PLACEHOLDER until the lifecycle issue: a run whose workflow started has nothing implemented
     * to do yet, so it is recorded as completed. Only a run still `validated` moves, so a replayed
     * or retried activity changes nothing. Also notes that the workflow did start, in case the
     * starter died before it could.
     */
    async settleFlowRun(input: { runId: string }): Promise<void> {
      await deps.db.query(
        `UPDATE flow_runs
            SET status = CASE WHEN status = 'validated' THEN 'completed' ELSE status END,
                completed_at = CASE WHEN status = 'validated' THEN now() ELSE completed_at END,
                workflow_pending = false,
                workflow_started_at = coalesce(workflow_started_at, now()),
                updated_at = now()
          WHERE id = $1`,
        [input.runId],
      );
    },

    /** Render/delivery outcome of a run for its gate's circuit breaker (counted once per run). */
    async recordFlowRunOutcome(input: { runId: string; outcome: RunOutcome }): Promise<void> {
      await recordRunOutcome(deps.db, input);
    },
  };
}
