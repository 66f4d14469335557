import jsonata from 'jsonata';
import { cpuLeftMs, cpuTimedJsonataOptions, type CpuBudget } from '../cpu-budget';
import { JSONATA_REGEX } from '../user-regex';
import type { BusinessRule, ValidationDetail, ValidationStep } from './gate.types';

/**
 * Business rules (contract §5): a JSONata expression over the payload that passes only when it
 * yields `true` (not merely truthy: `"yes"` or `1` fail, so a rule that returns the wrong thing
 * is visible). An expression that throws is a step with status `error`, told apart from a rule
 * that evaluated to false (`fail`); either makes the business_rules layer fail.
 *
 * Rules run in the evaluation worker processes (activities/evaluation), never on a thread that serves HTTP
 * or polls Temporal. All rules of one validation share one budget of CPU time (EVAL_TIMEOUT_MS,
 * domain/cpu-budget.ts): each rule may use what the rules before it left, checked by JSONata at
 * every step it takes; what JSONata cannot interrupt (one huge allocation, one long regex) is ended
 * by killing the worker process.
 */
const RULE_GUARDRAILS = { stack: 200, sequence: 100_000 } as const;

/** Message of a rule the budget stopped (docs/security.md). */
export const budgetMessage = (budgetMs: number) => `evaluation budget exceeded (${budgetMs} ms for the whole validation)`;

export interface CompiledRule {
  rule: BusinessRule;
  /** Evaluates until the budget's CPU time is spent (JSONata D1012). */
  evaluate(input: unknown, budget: CpuBudget): Promise<unknown>;
}

export function compileRule(rule: BusinessRule): CompiledRule {
  // JSONata reads `timeout` from this object at every step; one thread evaluates one task at a time.
  const timed = cpuTimedJsonataOptions({ ...RULE_GUARDRAILS, ...JSONATA_REGEX });
  const expr = jsonata(rule.expression, timed.options);
  return {
    rule,
    evaluate(input, budget) {
      timed.use(budget);
      return expr.evaluate(input);
    },
  };
}

const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

const baseOf = (rule: BusinessRule) => ({ name: rule.name ?? rule.id, ruleId: rule.id, expression: rule.expression });

/** A rule step with status `error`. */
export function erroredRule(rule: BusinessRule, reason: string, durationMs = 0): ValidationStep {
  const detail: ValidationDetail = { field: rule.id, code: 'RULE', ruleId: rule.id, message: `${rule.message} (rule could not be evaluated: ${reason})` };
  return { ...baseOf(rule), status: 'error', durationMs, errors: [detail] };
}

/** A rule step with status `fail`. */
export function failedRule(rule: BusinessRule, durationMs = 0): ValidationStep {
  return { ...baseOf(rule), status: 'fail', durationMs, errors: [{ field: rule.id, code: 'RULE', ruleId: rule.id, message: rule.message }] };
}

/**
 * Runs one rule with what is left of the validation's CPU budget. A rule reached once the budget
 * is spent, or after a rule the budget stopped (`budget.exceeded`, set here), is an `error`
 * without running.
 */
export async function runRule(compiled: CompiledRule, input: unknown, budget: CpuBudget & { exceeded?: boolean }): Promise<ValidationStep> {
  const { rule } = compiled;
  const start = performance.now();
  if (cpuLeftMs(budget) <= 0 || budget.exceeded) return erroredRule(rule, budgetMessage(budget.budgetMs));
  let result: unknown;
  try {
    result = await compiled.evaluate(input, budget);
  } catch (err) {
    const e = err as { message?: string; code?: string };
    if (e.code === 'D1012') budget.exceeded = true;
    const reason = e.code === 'D1012' ? budgetMessage(budget.budgetMs) : (e.message ?? 'evaluation failed');
    return erroredRule(rule, reason, elapsed(start));
  }
  if (result === true) return { ...baseOf(rule), status: 'pass', durationMs: elapsed(start), errors: [] };
  return failedRule(rule, elapsed(start));
}

export function skippedRule(compiled: CompiledRule): ValidationStep {
  return { ...baseOf(compiled.rule), status: 'skipped', durationMs: 0, errors: [] };
}
