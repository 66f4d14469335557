import type { CircuitState } from '../../domain/flow/circuit-breaker';
import { modifyReturning, type Queryable } from '../sql';

/**
 * The circuit breaker's state moves (domain/flow/circuit-breaker.ts decides admission). Each is
 * one UPDATE on the gate row, so concurrent API replicas and workers never interleave a
 * read-modify-write; Postgres evaluates every SET expression against the row as it was.
 */

export type RunOutcome = 'success' | 'failure';

export interface CircuitAfter {
  state: CircuitState;
  consecutiveFailures: number;
  openUntil: Date | null;
  /** This report opened the circuit (counted by formwork_flow_circuit_openings_total). */
  opened: boolean;
}

/**
 * Reports how a run's render and delivery went (the Flow-lifecycle workflow calls this once a
 * run has finished or failed those steps; validation failures are never reported). A run counts
 * once: a second report of the same run (an activity retried) changes nothing and returns null.
 *
 * - success: the consecutive-failure count resets; the half-open trial's success closes the circuit.
 * - failure: the count grows; reaching `max_failures` while closed, or the trial failing, opens
 *   the circuit for `cooldown_seconds`. With the breaker disabled the count still moves, nothing opens.
 */
export async function recordRunOutcome(db: Queryable, input: { runId: string; outcome: RunOutcome }): Promise<CircuitAfter | null> {
  const rows = await modifyReturning<{ state: CircuitState; failures: number; open_until: Date | null; opened: boolean }>(
    db,
    `WITH r AS (
       UPDATE flow_runs SET outcome_recorded_at = now() WHERE id = $1 AND outcome_recorded_at IS NULL RETURNING gate_id
     ), d AS (
       SELECT g.id,
              CASE
                WHEN $2 = 'success' THEN g.circuit_state = 'half_open' AND (g.circuit_trial_run_id IS NULL OR g.circuit_trial_run_id = $1)
                ELSE false
              END AS closes,
              CASE
                WHEN $2 = 'success' OR NOT g.circuit_breaker_enabled THEN false
                WHEN g.circuit_state = 'half_open' THEN g.circuit_trial_run_id IS NULL OR g.circuit_trial_run_id = $1
                ELSE g.circuit_state = 'closed' AND g.consecutive_failures + 1 >= g.max_failures
              END AS opens
         FROM flow_gates g JOIN r ON r.gate_id = g.id
     )
     UPDATE flow_gates g SET
       consecutive_failures = CASE WHEN $2 = 'success' THEN 0 ELSE g.consecutive_failures + 1 END,
       circuit_state = CASE WHEN d.opens THEN 'open' WHEN d.closes THEN 'closed' ELSE g.circuit_state END,
       circuit_open_until = CASE WHEN d.opens THEN now() + g.cooldown_seconds * interval '1 second' WHEN d.closes THEN NULL ELSE g.circuit_open_until END,
       circuit_trial_run_id = CASE WHEN d.opens OR d.closes THEN NULL ELSE g.circuit_trial_run_id END,
       circuit_trial_started_at = CASE WHEN d.opens OR d.closes THEN NULL ELSE g.circuit_trial_started_at END
     FROM d WHERE g.id = d.id
     RETURNING g.circuit_state AS state, g.consecutive_failures AS failures, g.circuit_open_until AS open_until, d.opens AS opened`,
    [input.runId, input.outcome],
  );
  const row = rows[0];
  return row ? { state: row.state, consecutiveFailures: row.failures, openUntil: row.open_until, opened: row.opened } : null;
}

/**
 * Makes `runId` the half-open trial, if the cooldown is over and no live trial holds the slot
 * (a trial that never reported expires after another cooldown). True for exactly one caller.
 */
export async function claimCircuitTrial(db: Queryable, gateId: string, runId: string): Promise<boolean> {
  const rows = await modifyReturning(
    db,
    `UPDATE flow_gates SET circuit_state = 'half_open', circuit_trial_run_id = $2, circuit_trial_started_at = now()
      WHERE id = $1 AND circuit_breaker_enabled
        AND ((circuit_state = 'open' AND circuit_open_until <= now())
          OR (circuit_state = 'half_open' AND circuit_trial_started_at <= now() - cooldown_seconds * interval '1 second'))
      RETURNING id`,
    [gateId, runId],
  );
  return rows.length > 0;
}

/**
 * Gives the trial slot back when the trial submission proved nothing about render or delivery
 * (it failed validation, or was never stored): the next submission may be the trial at once.
 */
export async function releaseCircuitTrial(db: Queryable, gateId: string, runId: string): Promise<void> {
  await db.query(
    `UPDATE flow_gates SET circuit_state = 'open', circuit_open_until = now(), circuit_trial_run_id = NULL, circuit_trial_started_at = NULL
      WHERE id = $1 AND circuit_state = 'half_open' AND circuit_trial_run_id = $2`,
    [gateId, runId],
  );
}
