import jsonata from 'jsonata';
import { cpuLeftMs, cpuTimedJsonataOptions, startCpuBudget, type CpuBudget } from '../cpu-budget';
import { AppError } from '../errors';
import { JSONATA_REGEX } from '../user-regex';
import { toBoolean, toDate, toNumber } from './format';
import type {
  CalculatedVariable,
  Constants,
  ResolvedData,
  TemplateDefinition,
  TemplateVariable,
  VariableField,
  VariableType,
} from './template.types';

/**
 * Generation input → the data a template renders: declared variables checked and coerced,
 * defaults applied, then calculated variables evaluated with JSONata (never JavaScript).
 */

/** Guardrails so a stored expression cannot recurse without end or build huge sequences. */
export const JSONATA_GUARDRAILS = { stack: 500, sequence: 100_000 } as const;

type Input = Record<string, unknown>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function isMissing(v: unknown): boolean {
  return v === undefined || v === null;
}

const IMAGE_SOURCE = /^(?:data:image\/(?:png|jpe?g|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]+|https?:\/\/\S+)$/i;

function typeError(field: string, expected: VariableType): AppError {
  const article = /^[aeiou]/.test(expected) ? 'an' : 'a';
  return new AppError('ERR_VALID_002', `Variable '${field}' must be ${article} ${expected}`, { field, expected });
}

/**
 * Numbers and booleans sent as strings (form posts, automation platforms) are accepted when they
 * are unambiguous; dates must be ISO 8601. Anything else of the wrong type is refused.
 */
function coerce(value: unknown, type: VariableType, field: string): unknown {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      throw typeError(field, type);
    case 'number': {
      const n = toNumber(value);
      if (n === undefined) throw typeError(field, type);
      return n;
    }
    case 'integer': {
      const n = toNumber(value);
      if (n === undefined || !Number.isInteger(n)) throw typeError(field, type);
      return n;
    }
    case 'boolean': {
      const b = toBoolean(value);
      if (b === undefined) throw typeError(field, type);
      return b;
    }
    case 'date': {
      const d = toDate(value);
      if (!d) throw typeError(field, type);
      return d;
    }
    case 'array':
      if (!Array.isArray(value)) throw typeError(field, type);
      return value;
    case 'object':
      if (!isPlainObject(value)) throw typeError(field, type);
      return value;
    case 'image':
      if (typeof value !== 'string' || !IMAGE_SOURCE.test(value.trim())) throw typeError(field, type);
      return value.trim();
  }
}

function checkFields(obj: Record<string, unknown>, fields: VariableField[], path: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  for (const f of fields) {
    const field = `${path}.${f.name}`;
    if (isMissing(obj[f.name])) {
      if (f.required) throw new AppError('ERR_VALID_005', `Required field '${field}' is missing`, { field });
      continue;
    }
    out[f.name] = coerce(obj[f.name], f.type, field);
  }
  return out;
}

/** Element `i` of an array variable as its declared items make it (checked and coerced); as it is without a declaration. */
export function resolveArrayElement(def: TemplateVariable, el: unknown, i: number): unknown {
  const items = def.items;
  if (!items || isMissing(el)) return el;
  const path = `${def.name}[${i}]`;
  const typed = coerce(el, items.type, path);
  return items.properties && isPlainObject(typed) ? checkFields(typed, items.properties, path) : typed;
}

function resolveOne(def: TemplateVariable, raw: unknown): unknown {
  const value = coerce(raw, def.type, def.name);
  if (def.type === 'array' && def.items) return (value as unknown[]).map((el, i) => resolveArrayElement(def, el, i));
  return value;
}

/**
 * Declared variables from the input, with defaults, required checks and coercion. Input keys the
 * template does not declare pass through untouched, so `{{extra}}` still reads them.
 */
export function applyVariableInput(variables: TemplateVariable[] = [], input: Input = {}): ResolvedData {
  if (!isPlainObject(input)) throw new AppError('ERR_VALID_002', 'variables must be an object', { field: 'variables', expected: 'object' });
  const out: ResolvedData = { ...input };
  // Every variable's problem is reported, not only the first (docs/errors.md "Validation errors").
  const problems: AppError[] = [];
  for (const def of variables) {
    let raw = input[def.name];
    if (isMissing(raw) && !isMissing(def.defaultValue)) raw = def.defaultValue;
    if (isMissing(raw) || (def.required && raw === '')) {
      if (def.required) problems.push(new AppError('ERR_VALID_005', `Required variable '${def.name}' is missing`, { field: def.name }));
      out[def.name] = null;
      continue;
    }
    try {
      out[def.name] = resolveOne(def, raw);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      problems.push(err);
    }
  }
  if (problems.length > 0) {
    const [first] = problems;
    const errors = problems.map((p) => ({ path: String(p.relatedInfo?.field ?? ''), code: p.code, message: p.message }));
    throw new AppError(first.code, first.message, { ...first.relatedInfo, errors });
  }
  return out;
}

/** JSONata sees JSON: dates as ISO strings, as they arrived. */
export function toJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null));
}

/** Message of a calculated variable the budget stopped (ERR_LIMIT_008). */
export const calculatedBudgetMessage = (name: string, budgetMs: number) =>
  `Calculated variable '${name}' exceeded the evaluation budget (${budgetMs} ms for all calculated variables of a document)`;

export interface CompiledCalculated {
  name: string;
  /** Evaluates until the budget's CPU time is spent (JSONata D1012). */
  evaluate(scope: unknown, budget: CpuBudget): Promise<unknown>;
}

/** Parses every expression once (the evaluation workers cache the result per set of expressions). */
export function compileCalculated(calculated: CalculatedVariable[]): CompiledCalculated[] {
  return calculated.map((c) => {
    let expr: ReturnType<typeof jsonata> | undefined;
    let parseError: unknown;
    const timed = cpuTimedJsonataOptions({ ...JSONATA_GUARDRAILS, ...JSONATA_REGEX });
    try {
      expr = jsonata(c.expression, timed.options);
    } catch (err) {
      parseError = err;
    }
    return {
      name: c.name,
      evaluate(scope, budget) {
        if (!expr) return Promise.reject(parseError);
        timed.use(budget);
        return expr.evaluate(scope);
      },
    };
  });
}

/**
 * Evaluates calculated variables in order, each seeing the ones before it, within one budget of
 * CPU time for all of them (domain/cpu-budget.ts). The index being evaluated is reported, so a
 * pool that had to kill the evaluating process can name the variable. Returns only the
 * calculated values.
 */
export async function evaluateCompiledCalculated(
  compiled: CompiledCalculated[],
  scope: Record<string, unknown>,
  budget: CpuBudget & { report?: (progress: { at: number }) => void } = startCpuBudget(1000),
): Promise<Record<string, unknown>> {
  const jsonScope = { ...scope };
  const values: Record<string, unknown> = {};
  for (const [i, c] of compiled.entries()) {
    budget.report?.({ at: i });
    if (cpuLeftMs(budget) <= 0) throw new AppError('ERR_LIMIT_008', calculatedBudgetMessage(c.name, budget.budgetMs), { field: c.name, limitMs: budget.budgetMs });
    let result: unknown;
    try {
      result = await c.evaluate(jsonScope, budget);
    } catch (err) {
      const e = err as { message?: string; code?: string };
      if (e.code === 'D1012') throw new AppError('ERR_LIMIT_008', calculatedBudgetMessage(c.name, budget.budgetMs), { field: c.name, limitMs: budget.budgetMs });
      const reason = e.message ?? 'evaluation failed';
      throw new AppError('ERR_VALID_002', `Calculated variable '${c.name}' failed: ${reason}`, { field: c.name, reason });
    }
    // Functions and sequences are not data; the JSON round trip also drops JSONata's internal flags.
    const value = result === undefined || typeof result === 'function' ? null : toJson(result);
    jsonScope[c.name] = value;
    values[c.name] = value;
  }
  return values;
}

/** Evaluates calculated variables somewhere bounded: the process's evaluation pool (domain/evaluation.ts). */
export type CalculateFn = (calculated: CalculatedVariable[], scope: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** In this thread, without a budget: for unit tests and benchmarks only. */
export const calculateInline: CalculateFn = (calculated, scope) => evaluateCompiledCalculated(compileCalculated(calculated), scope);

/**
 * Everything a template renders from: the checked input, constants (a caller cannot override
 * them), then calculated values (evaluated in order, each seeing the ones before it) by `calculate`.
 */
export async function resolveVariables(
  def: Pick<TemplateDefinition, 'variables' | 'constants' | 'calculatedVariables'>,
  input: Input = {},
  calculate: CalculateFn = calculateInline,
): Promise<ResolvedData> {
  const constants: Constants = def.constants ?? {};
  const data: ResolvedData = { ...applyVariableInput(def.variables, input), ...constants };
  const calculated = def.calculatedVariables ?? [];
  if (calculated.length === 0) return data;
  return { ...data, ...(await calculate(calculated, toJson(data) as Record<string, unknown>)) };
}
