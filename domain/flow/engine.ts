import { startWallBudget, type CpuBudget } from '../cpu-budget';
import { compileObjectSchema } from './compile-schema';
import { compileFreetext, freetextFacts } from './freetext';
import { MAX_DETAILS, type GateValidationDefinition, type StepStatus, type ValidationDetail, type ValidationOutcome, type ValidationStep } from './gate.types';
import { compileRule, erroredRule, failedRule, RuleMeter, runRule, runRuleClosure, skippedRule, type CompiledRule } from './rules';

/**
 * The validation engine shared by test, validate and runs: the schema layer (ObjectSchema or the
 * freetext checks), then the business rules, which run only when the schema layer passed (a rule
 * over a payload of the wrong shape would only report noise). Pure: no I/O, no clock but timing.
 * It runs inside the evaluation worker processes (adapters/evaluation); benchmarks call it directly.
 */

export interface CompiledGate {
  mode: GateValidationDefinition['validationMode'];
  checkShape(payload: unknown): ValidationDetail[];
  rules: CompiledRule[];
}

/** Compiles a definition that definition-check.ts accepted. */
export function compileGate(def: GateValidationDefinition): CompiledGate {
  return {
    mode: def.validationMode,
    checkShape: def.validationMode === 'freetext' ? compileFreetext(def.freetextConfig) : compileObjectSchema(def.schema),
    rules: (def.businessRules ?? []).map(compileRule),
  };
}

/**
 * Where a validation is, reported as it goes so that the evaluation pool can still answer
 * precisely after it had to kill the evaluating process: `at` is the step running (0 the schema
 * layer, i + 1 rule i), `done` the status a rule ended with.
 */
export interface ValidationProgress {
  at: number;
  /** A rule finished; an errored one carries its step, so a kill after it (the host's CPU watch or wall backstop) keeps its reason. */
  done?: { rule: number; status: StepStatus; step?: ValidationStep };
}

/**
 * Budget of a validation run directly (unit tests, benchmarks); the service passes its CPU budget
 * of EVAL_TIMEOUT_MS. Counted in wall-clock time (never less than the CPU time of the one thread
 * that evaluates), which needs no system call to start: reading the CPU clock costs more than a
 * whole validation of compiled rules.
 */
const DIRECT_BUDGET_MS = 1000;

/** The CPU budget every rule of one validation shares (domain/cpu-budget.ts). */
export interface ValidationBudget extends CpuBudget {
  report?: (progress: ValidationProgress) => void;
}

const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;
const stepName = (mode: GateValidationDefinition['validationMode']) => (mode === 'freetext' ? 'freetext' : 'schema');

export async function validatePayload(gate: CompiledGate, payload: unknown, budget?: ValidationBudget): Promise<ValidationOutcome> {
  const start = performance.now();
  const given = budget ?? startWallBudget(DIRECT_BUDGET_MS);
  const limits = { budgetMs: given.budgetMs, usedMs: () => given.usedMs(), exceeded: false };
  const report = budget?.report;
  report?.({ at: 0 });
  const shapeErrors = gate.checkShape(payload);
  const schemaEnd = performance.now();
  const schemaStep: ValidationStep = {
    name: stepName(gate.mode),
    status: shapeErrors.length === 0 ? 'pass' : 'fail',
    durationMs: Math.round((schemaEnd - start) * 1000) / 1000,
    errors: shapeErrors,
  };
  const steps: ValidationStep[] = [schemaStep];
  if (shapeErrors.length > 0) {
    steps.push(...gate.rules.map(skippedRule));
    return {
      valid: false,
      durationMs: elapsed(start),
      steps,
      layers: { schema: 'fail', business_rules: 'skipped' },
      failedLayer: 'schema',
      details: shapeErrors,
    };
  }
  const input = gate.mode === 'freetext' ? freetextFacts(payload as string) : payload;
  const meter = new RuleMeter(limits, budget === undefined);
  meter.clock = schemaEnd;
  // Progress of rules the closures decided is sent only before the interpreter runs a rule (the
  // one a kill can interrupt) and not at all when none does: each report is a message to the
  // pool, which costs more than such a rule.
  let unsent: ValidationProgress[] = [];
  if (gate.rules.length > 0) report?.({ at: 1 });
  for (let i = 0; i < gate.rules.length; i += 1) {
    const rule = gate.rules[i];
    const fast = runRuleClosure(rule, input, meter);
    if (fast) {
      if (report) unsent.push({ at: i + 1, done: { rule: i, status: fast.status } });
      steps.push(fast);
      continue;
    }
    if (report) {
      for (const progress of unsent) report(progress);
      unsent = [];
      if (i > 0) report({ at: i + 1 });
    }
    const step = await runRule(rule, input, limits);
    report?.({ at: i + 1, done: { rule: i, status: step.status, ...(step.status === 'error' ? { step } : {}) } });
    steps.push(step);
    meter.clock = performance.now();
  }
  return rulesOutcome(steps, Math.round((meter.clock - start) * 1000) / 1000);
}

function rulesOutcome(steps: ValidationStep[], durationMs: number): ValidationOutcome {
  const details: ValidationDetail[] = [];
  for (let i = 1; i < steps.length && details.length < MAX_DETAILS; i += 1) {
    const errors = steps[i].errors;
    for (let j = 0; j < errors.length && details.length < MAX_DETAILS; j += 1) details.push(errors[j]);
  }
  const valid = details.length === 0;
  return {
    valid,
    durationMs,
    steps,
    layers: { schema: 'pass', business_rules: valid ? 'pass' : 'fail' },
    ...(valid ? {} : { failedLayer: 'business_rules' as const }),
    details,
  };
}

/**
 * The outcome of a validation whose process was killed (budget overrun that JSONata could not
 * interrupt, or the process's heap limit), rebuilt from the progress it reported: rules that
 * finished keep their status, the one running and those after it are `error` steps giving the
 * reason. A stop inside the schema layer fails that layer.
 */
export function interruptedOutcome(def: GateValidationDefinition, progress: ValidationProgress[], reason: string, durationMs: number): ValidationOutcome {
  const rules = def.businessRules ?? [];
  const at = progress.reduce((max, p) => Math.max(max, p.at), 0);
  const finished = new Map(progress.flatMap((p) => (p.done ? [[p.done.rule, p.done] as const] : [])));
  if (at === 0) {
    const errors: ValidationDetail[] = [{ field: def.validationMode === 'freetext' ? 'text' : 'payload', code: 'PATTERN', message: `could not be checked: ${reason}` }];
    const skipped = rules.map((r) => ({ name: r.name ?? r.id, ruleId: r.id, expression: r.expression, status: 'skipped' as const, durationMs: 0, errors: [] }));
    return {
      valid: false,
      durationMs,
      steps: [{ name: stepName(def.validationMode), status: 'error', durationMs, errors }, ...skipped],
      layers: { schema: 'fail', business_rules: 'skipped' },
      failedLayer: 'schema',
      details: errors,
    };
  }
  const steps: ValidationStep[] = [{ name: stepName(def.validationMode), status: 'pass', durationMs: 0, errors: [] }];
  rules.forEach((rule, i) => {
    const done = finished.get(i);
    if (done?.status === 'pass') steps.push({ name: rule.name ?? rule.id, ruleId: rule.id, expression: rule.expression, status: 'pass', durationMs: 0, errors: [] });
    else if (done?.status === 'fail') steps.push(failedRule(rule));
    else if (done?.status === 'error') steps.push(done.step ?? erroredRule(rule, 'evaluation failed'));
    else steps.push(erroredRule(rule, reason));
  });
  return rulesOutcome(steps, durationMs);
}
