import { deserialize, serialize } from 'node:v8';
import type { CheckName } from '../../domain/checks';
import type { GateValidationDefinition, ValidationOutcome } from '../../domain/flow/gate.types';
import type { CalculatedVariable } from '../../domain/templates/template.types';

/**
 * A value serialized (structured clone) once by the process that has it and read only by the one
 * that uses it: what tenants send (payloads, template data, definitions to check, up to several MB)
 * and what comes back pass through the evaluation host (eval-host.ts) and the pool as bytes, so the
 * host copies them instead of building and re-serializing their object graph on the thread every
 * other request waits on.
 */
export interface Packed<T> {
  packed: Uint8Array;
  /** Only for the type checker: what the bytes hold. */
  readonly holds?: T;
}

export const pack = <T>(value: T): Packed<T> => ({ packed: serialize(value) });
export const unpack = <T>(value: Packed<T>): T => deserialize(value.packed) as T;

/** What the pool (eval-pool.ts) sends an evaluation process (eval-worker.ts), and what comes back. */

export type EvalWork =
  | { kind: 'validate'; gateId: string; version: number; definition: GateValidationDefinition; payload: Packed<unknown> }
  | { kind: 'calculate'; calculated: CalculatedVariable[]; scope: Packed<Record<string, unknown>> }
  | { kind: 'check'; name: CheckName; args: Packed<unknown[]> };

/** `clock`: what the budget counts, the worker's CPU time (interactive lane) or wall-clock time (background lane). */
export type EvalTask = EvalWork & { budgetMs: number; clock: 'cpu' | 'wall' };

export type EvalResult = (
  | { ok: true; outcome: Packed<ValidationOutcome> }
  | { ok: true; values: Packed<Record<string, unknown>> }
  | { ok: true; checked: Packed<unknown> }
  | { ok: false; error: { code: string; message: string; relatedInfo?: Record<string, unknown> } }
) & {
  /** CPU time the task used in the worker (its cost, for the fair scheduler). */
  cpuMs?: number;
};

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
  /** With STARTED: the CPU milliseconds the worker's process had used (the base of its budget's CPU watch). */
  cpuMs?: number;
  done?: { rule: number; status: 'pass' | 'fail' | 'error' | 'skipped' };
}
