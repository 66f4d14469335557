import jsonata from 'jsonata';
import type { BusinessRule, ValidationDetail, ValidationStep } from './gate.types';
import { JsonataSafeRegex } from './safe-regex';

/**
 * Business rules (contract §5): a JSONata expression over the payload that passes only when it
 * yields `true` (not merely truthy: `"yes"` or `1` fail, so a rule that returns the wrong thing
 * is visible). An expression that throws is a step with status `error`, told apart from a rule
 * that evaluated to false (`fail`); either makes the business_rules layer fail.
 */

/**
 * Per evaluation: a rule that loops, recurses or builds a huge sequence ends with a JSONata error
 * (so `error`) instead of holding the event loop. The timeout is checked at every step JSONata
 * takes and is wall-clock time: JSONata evaluates asynchronously, so concurrent requests'
 * evaluations interleave and count against it. It is therefore generous (a real rule takes tens
 * of microseconds); it exists to end runaway expressions, not to time honest ones.
 */
export const RULE_GUARDRAILS = { timeout: 1000, stack: 200, sequence: 100_000 } as const;

export interface CompiledRule {
  rule: BusinessRule;
  evaluate(input: unknown): Promise<unknown>;
}

export function compileRule(rule: BusinessRule): CompiledRule {
  const expr = jsonata(rule.expression, { ...RULE_GUARDRAILS, RegexEngine: JsonataSafeRegex });
  return { rule, evaluate: (input) => expr.evaluate(input) };
}

const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

export async function runRule(compiled: CompiledRule, input: unknown): Promise<ValidationStep> {
  const { rule } = compiled;
  const start = performance.now();
  const base = { name: rule.name ?? rule.id, ruleId: rule.id, expression: rule.expression };
  let result: unknown;
  try {
    result = await compiled.evaluate(input);
  } catch (err) {
    const reason = (err as { message?: string }).message ?? 'evaluation failed';
    const detail: ValidationDetail = { field: rule.id, code: 'RULE', ruleId: rule.id, message: `${rule.message} (rule could not be evaluated: ${reason})` };
    return { ...base, status: 'error', durationMs: elapsed(start), errors: [detail] };
  }
  if (result === true) return { ...base, status: 'pass', durationMs: elapsed(start), errors: [] };
  return { ...base, status: 'fail', durationMs: elapsed(start), errors: [{ field: rule.id, code: 'RULE', ruleId: rule.id, message: rule.message }] };
}

export function skippedRule(compiled: CompiledRule): ValidationStep {
  const { rule } = compiled;
  return { name: rule.name ?? rule.id, ruleId: rule.id, expression: rule.expression, status: 'skipped', durationMs: 0, errors: [] };
}
