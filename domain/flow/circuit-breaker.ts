/**
 * The gate circuit breaker (docs/flow.md): `maxFailures` consecutive run failures (render or
 * delivery, never validation) open the circuit for `cooldownSeconds`; then one trial submission
 * is let through (half-open) and its success closes the circuit, its failure re-opens it. The
 * state lives on the gate row and moves by atomic UPDATEs (db/flow/gate-circuit.ts); this module
 * only decides what a submission may do given the state it read.
 */

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitSnapshot {
  enabled: boolean;
  state: CircuitState;
  openUntil: Date | null;
  /** When the half-open trial was let through; a trial that never reports expires after the cooldown. */
  trialStartedAt: Date | null;
  cooldownSeconds: number;
}

export type Admission =
  | { kind: 'admit' }
  /** The cooldown is over: this submission may become the trial if it wins the UPDATE race. */
  | { kind: 'try_trial' }
  | { kind: 'reject'; retryAfterSeconds: number };

export function admission(c: CircuitSnapshot, now: Date): Admission {
  if (!c.enabled || c.state === 'closed') return { kind: 'admit' };
  const secondsUntil = (d: Date) => Math.max(1, Math.ceil((d.getTime() - now.getTime()) / 1000));
  if (c.state === 'open') {
    if (c.openUntil && c.openUntil > now) return { kind: 'reject', retryAfterSeconds: secondsUntil(c.openUntil) };
    return { kind: 'try_trial' };
  }
  const trialExpires = c.trialStartedAt ? new Date(c.trialStartedAt.getTime() + c.cooldownSeconds * 1000) : now;
  if (trialExpires > now) return { kind: 'reject', retryAfterSeconds: secondsUntil(trialExpires) };
  return { kind: 'try_trial' };
}
