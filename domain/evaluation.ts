import type { CheckArgs, CheckName, CheckResult } from './checks';
import type { GateValidationDefinition, ValidationOutcome } from './flow/gate.types';
import type { CalculatedVariable } from './templates/template.types';

/**
 * The port through which the service evaluates what tenants wrote: a gate's validation (schema or
 * freetext patterns and JSONata rules) and a template's calculated variables. The implementation
 * (adapters/evaluation/eval-host.ts, eval-pool.ts) runs them in worker processes with one budget per request,
 * a heap limit per process and a fair share per tenant; nothing a tenant wrote runs on a thread
 * that serves HTTP or polls Temporal. docs/security.md, "Untrusted input".
 */
export interface ValidateRequest {
  /** Whose work this is (the project id): the unit of fairness. */
  tenant: string;
  gateId: string;
  /** The gate's schema version: with gateId, the key of the compiled gate in each thread. */
  version: number;
  definition: GateValidationDefinition;
  payload: unknown;
}

export interface CalculateRequest {
  tenant: string;
  calculated: CalculatedVariable[];
  /** The checked input and constants, as JSON. */
  scope: Record<string, unknown>;
}

export interface Evaluator {
  /** Never rejects for what the payload or the rules do: an overrun is a step with status `error`. */
  validate(req: ValidateRequest): Promise<ValidationOutcome>;
  /** The calculated values; AppError ERR_VALID_002 for a failing expression, ERR_LIMIT_008 past the budget. */
  calculate(req: CalculateRequest): Promise<Record<string, unknown>>;
  /**
   * One of the checks of what tenants save (domain/checks.ts). An AppError the check throws keeps
   * its code; past the budget, AppError ERR_LIMIT_008.
   */
  check<N extends CheckName>(tenant: string, name: N, ...args: CheckArgs<N>): Promise<CheckResult<N>>;
  close(): Promise<void>;
}
