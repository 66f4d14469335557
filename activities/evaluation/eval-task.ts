import type { CheckName } from '../../domain/checks';
import type { GateValidationDefinition, ValidationOutcome } from '../../domain/flow/gate.types';
import type { CalculatedVariable } from '../../domain/templates/template.types';

/** What the pool (eval-pool.ts) sends an evaluation process (eval-worker.ts), and what comes back. */

export type EvalWork =
  | { kind: 'validate'; gateId: string; version: number; definition: GateValidationDefinition; payload: unknown }
  | { kind: 'calculate'; calculated: CalculatedVariable[]; scope: Record<string, unknown> }
  | { kind: 'check'; name: CheckName; args: unknown[] };

export type EvalTask = EvalWork & { budgetMs: number };

export type EvalResult =
  | { ok: true; outcome: ValidationOutcome }
  | { ok: true; values: Record<string, unknown> }
  | { ok: true; checked: unknown }
  | { ok: false; error: { code: string; message: string; relatedInfo?: Record<string, unknown> } };

/**
 * Progress the worker reports while it works, so that the pool can answer precisely after it had
 * to kill the process: `at` is the step running (validation: 0 the schema layer, i + 1 rule i;
 * calculation: the variable's index), `done` the status a rule ended with.
 */
/** The first report of every task: the worker has started it (`at` of a later report is never negative). */
export const STARTED = -1;

export interface EvalProgress {
  at: number;
  /** With STARTED: the worker's process id (the pool lowers the priority of a long task). */
  pid?: number;
  done?: { rule: number; status: 'pass' | 'fail' | 'error' | 'skipped' };
}
