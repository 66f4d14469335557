import jsonata from 'jsonata';
import { cpuLeftMs, cpuTimedJsonataOptions, type CpuBudget } from '../cpu-budget';
import { JSONATA_REGEX } from '../user-regex';
import type { BusinessRule, ValidationDetail, ValidationStep } from './gate.types';
import { compileRuleAst, FALLBACK, type RuleClosure } from './rule-closures';
import type { Run } from './rule-values';

/**
 * Business rules (contract §5): a JSONata expression over the payload that passes only when it
 * yields `true` (not merely truthy: `"yes"` or `1` fail, so a rule that returns the wrong thing
 * is visible). An expression that throws is a step with status `error`, told apart from a rule
 * that evaluated to false (`fail`); either makes the business_rules layer fail.
 *
 * Rules run in the evaluation worker processes (adapters/evaluation), never on a thread that serves HTTP
 * or polls Temporal. All rules of one validation share one budget of CPU time (EVAL_TIMEOUT_MS,
 * domain/cpu-budget.ts): each rule may use what the rules before it left, checked by JSONata at
 * every step it takes; what JSONata cannot interrupt (one huge allocation, one long regex) is ended
 * by killing the worker process.
 *
 * A rule whose expression is in the common subset (paths, comparisons, arithmetic, and/or, `&`, a
 * few built-ins: rule-closures.ts) runs as closures compiled from its AST, synchronously and
 * without the interpreter's per-node awaits, under the same budget and in the same processes;
 * where the closures give up, the interpreter evaluates the rule.
 */
const RULE_GUARDRAILS = { stack: 200, sequence: 100_000 } as const;

/** Message of a rule the budget stopped (docs/security.md). */
export const budgetMessage = (budgetMs: number) => `evaluation budget exceeded (${budgetMs} ms for the whole validation)`;

export interface CompiledRule {
  rule: BusinessRule;
  /** The closures of the expression (rule-closures.ts), when it is in the compiled subset. */
  closure?: RuleClosure;
  /** Evaluates with the JSONata interpreter until the budget's CPU time is spent (D1012). */
  interpret(input: unknown, budget: CpuBudget): Promise<unknown>;
  /** Evaluates the rule: the closures when they can decide, else the interpreter. */
  evaluate(input: unknown, budget: CpuBudget): Promise<unknown>;
}

/**
 * The CPU budget as the closures see it (rule-values.ts, Run): work is counted and the CPU clock
 * read every few thousand steps, and between rules at most once per millisecond of wall-clock
 * time (reading it costs a system call, more than a whole compiled rule).
 */
export class RuleMeter implements Run {
  root: unknown;
  readonly cap = RULE_GUARDRAILS.sequence;
  private steps = 0;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private spentAt = false;
  /**
   * The last reading of the wall clock (performance.now): one step's end is the next one's start,
   * so a compiled rule costs one reading, not three.
   */
  clock: number;

  /** `fresh`: the budget started just now, so it cannot be spent within the first millisecond. */
  constructor(
    readonly budget: CpuBudget & { exceeded?: boolean },
    fresh = false,
  ) {
    this.clock = performance.now();
    if (fresh) this.checkedAt = this.clock;
  }

  /** Whether the budget is spent, as of `now` (a wall-clock reading). */
  spent(now = performance.now()): boolean {
    if (this.budget.exceeded) return true;
    if (now - this.checkedAt >= 1) {
      this.checkedAt = now;
      this.spentAt = this.budget.usedMs() >= this.budget.budgetMs;
    }
    return this.spentAt;
  }

  tick(steps: number): void {
    this.steps += steps;
    if (this.steps < 4096) return;
    this.steps = 0;
    if (this.budget.usedMs() >= this.budget.budgetMs) {
      // JSONata's own error for a spent budget, so runRule treats both forms alike.
      throw Object.assign(new Error(`Evaluation timeout after ${this.budget.budgetMs} milliseconds. Check for infinite loop`), { code: 'D1012', value: this.budget.budgetMs });
    }
  }

  /** The meter for one rule over `input` (its `$$`). */
  over(input: unknown): this {
    this.root = input;
    return this;
  }
}

export function compileRule(rule: BusinessRule): CompiledRule {
  // JSONata reads `timeout` from this object at every step; one thread evaluates one task at a time.
  const timed = cpuTimedJsonataOptions({ ...RULE_GUARDRAILS, ...JSONATA_REGEX });
  const expr = jsonata(rule.expression, timed.options);
  const closure = compileRuleAst(expr.ast());
  const interpret = (input: unknown, budget: CpuBudget) => {
    timed.use(budget);
    return expr.evaluate(input);
  };
  return {
    rule,
    closure,
    interpret,
    async evaluate(input, budget) {
      if (closure) {
        const value = closure(input, new RuleMeter(budget).over(input));
        if (value !== FALLBACK) return value;
      }
      return interpret(input, budget);
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

function thrownStep(rule: BusinessRule, err: unknown, budget: CpuBudget & { exceeded?: boolean }, start: number): ValidationStep {
  const e = err as { message?: string; code?: string };
  if (e.code === 'D1012') budget.exceeded = true;
  const reason = e.code === 'D1012' ? budgetMessage(budget.budgetMs) : (e.message ?? 'evaluation failed');
  return erroredRule(rule, reason, elapsed(start));
}

const resultStep = (rule: BusinessRule, result: unknown, durationMs: number): ValidationStep =>
  result === true
    ? { name: rule.name ?? rule.id, ruleId: rule.id, expression: rule.expression, status: 'pass', durationMs, errors: [] }
    : failedRule(rule, durationMs);

/**
 * Runs one rule through its closures, synchronously; undefined when the rule has none or they gave
 * up, and runRule must run it. Budget rules as runRule's, the clock read through the meter.
 */
export function runRuleClosure(compiled: CompiledRule, input: unknown, meter: RuleMeter): ValidationStep | undefined {
  const { rule, closure } = compiled;
  if (!closure) return undefined;
  const start = meter.clock;
  if (meter.spent(start)) return erroredRule(rule, budgetMessage(meter.budget.budgetMs));
  let result: unknown;
  try {
    result = closure(input, meter.over(input));
  } catch (err) {
    return thrownStep(rule, err, meter.budget, start);
  }
  if (result === FALLBACK) return undefined;
  const end = performance.now();
  meter.clock = end;
  return resultStep(rule, result, Math.round((end - start) * 1000) / 1000);
}

/**
 * Runs one rule with the interpreter and what is left of the validation's CPU budget. A rule
 * reached once the budget is spent, or after a rule the budget stopped (`budget.exceeded`, set
 * here), is an `error` without running.
 */
export async function runRule(compiled: CompiledRule, input: unknown, budget: CpuBudget & { exceeded?: boolean }): Promise<ValidationStep> {
  const { rule } = compiled;
  const start = performance.now();
  if (cpuLeftMs(budget) <= 0 || budget.exceeded) return erroredRule(rule, budgetMessage(budget.budgetMs));
  let result: unknown;
  try {
    result = await compiled.interpret(input, budget);
  } catch (err) {
    return thrownStep(rule, err, budget, start);
  }
  return resultStep(rule, result, elapsed(start));
}

export function skippedRule(compiled: CompiledRule): ValidationStep {
  return { ...baseOf(compiled.rule), status: 'skipped', durationMs: 0, errors: [] };
}
