/**
 * JSONata's value semantics (jsonata 2.2.2: sequences, `lookup`, `$boolean`, `$string`, deep
 * equality), reproduced for the closures of rule-closures.ts. Each function mirrors the library's
 * code line for line where it returns a value; where the library would throw, or where a value
 * could take a path these copies do not follow (a non-finite number, an object that JSONata takes
 * for a function), they give up with `fallback()` and the interpreter evaluates the rule from the
 * start. Nothing here ever produces an error of its own: every error a rule reports comes from the
 * interpreter, so it is the interpreter's error, word for word.
 */

/** What a compiled rule returns when the interpreter must decide. */
export const FALLBACK: unique symbol = Symbol('jsonata-fallback');

/** Thrown (one instance, no stack to build) to give a rule back; caught only by rule-closures.ts. */
class GiveBack extends Error {}
const GIVE_BACK = new GiveBack('left to the JSONata interpreter');

export function fallback(): never {
  throw GIVE_BACK;
}

/** What one evaluation carries: the root (`$$`), the sequence cap, and the CPU meter. */
export interface Run {
  readonly root: unknown;
  /** Longest sequence JSONata may build (its `sequence` guardrail, D2015). */
  readonly cap: number;
  /** Counts work; throws JSONata's D1012 once the budget is spent. */
  tick(steps: number): void;
}

/** A JSONata sequence: an array flagged as JSONata flags it. */
export type Seq = unknown[] & { sequence?: boolean };

export function newSeq(): Seq {
  const s: Seq = [];
  s.sequence = true;
  return s;
}

export const isSeq = (v: unknown): v is Seq => Array.isArray(v) && (v as Seq).sequence === true;

/** Sequence push; past the cap the interpreter would throw D2015, so it decides. */
export function pushSeq(s: Seq, v: unknown, run: Run): void {
  if (s.length >= run.cap) fallback();
  s.push(v);
}

/** What JSONata's `evaluate` does with every node's result: an empty sequence is nothing, a singleton its item. */
export function collapse(v: unknown): unknown {
  if (v && isSeq(v)) {
    if (v.length === 0) return undefined;
    if (v.length === 1) return v[0];
  }
  return v;
}

/** utils.isFunction: a payload object with `_jsonata_function: true` counts as one. */
export function isFunctionLike(v: unknown): boolean {
  if (typeof v === 'function') return true;
  if (!v || typeof v !== 'object') return false;
  const o = v as { _jsonata_function?: unknown; _jsonata_lambda?: unknown };
  return o._jsonata_function === true || o._jsonata_lambda === true;
}

/** A number JSONata's `isNumeric` accepts without throwing (it throws D1001 for ±Infinity). */
export const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

const hasOwn = Object.prototype.hasOwnProperty;

/** fn.lookup: a field of an object, or of every item of an array (one level flattened). */
export function lookup(input: unknown, key: string, run: Run): unknown {
  if (Array.isArray(input)) {
    const result = newSeq();
    for (let i = 0; i < input.length; i += 1) {
      const res = lookup(input[i], key, run);
      if (res !== undefined) {
        if (Array.isArray(res)) for (let j = 0; j < res.length; j += 1) pushSeq(result, res[j], run);
        else pushSeq(result, res, run);
      }
    }
    run.tick(input.length);
    return result;
  }
  if (input !== null && typeof input === 'object' && hasOwn.call(input, key) && !isFunctionLike(input)) return (input as Record<string, unknown>)[key];
  return undefined;
}

/** fn.boolean: JSONata's effective boolean value. */
export function toBoolean(arg: unknown): boolean | undefined {
  if (arg === undefined) return undefined;
  if (Array.isArray(arg)) {
    if (arg.length === 1) return toBoolean(arg[0]);
    if (arg.length === 0) return false;
    // The library filters the whole array (no short cut), so a non-finite number anywhere still throws.
    let any = false;
    for (let i = 0; i < arg.length; i += 1) if (toBoolean(arg[i])) any = true;
    return any;
  }
  if (typeof arg === 'string') return arg.length > 0;
  if (typeof arg === 'number') {
    if (Number.isNaN(arg)) return false;
    if (!Number.isFinite(arg)) fallback();
    return arg !== 0;
  }
  if (arg !== null && typeof arg === 'object') {
    if (isFunctionLike(arg)) return false;
    return Object.keys(arg).length > 0;
  }
  return arg === true;
}

/** What `and`, `or` make of an operand. */
export function boolize(v: unknown): boolean {
  return toBoolean(v) ?? false;
}

function stringifyNumber(_key: string, val: unknown): unknown {
  if (typeof val === 'number' && !Number.isNaN(val)) {
    if (!Number.isFinite(val)) fallback();
    return Number.isInteger(val) ? val : Number(val.toPrecision(15));
  }
  return val && isFunctionLike(val) ? '' : val;
}

/** fn.string without prettify (`$string(x)`, the operands of `&`). */
export function toJsonataString(arg: unknown): string | undefined {
  if (arg === undefined) return undefined;
  if (typeof arg === 'string') return arg;
  if (isFunctionLike(arg)) return '';
  if (typeof arg === 'number' && !Number.isFinite(arg)) fallback();
  return JSON.stringify(arg, stringifyNumber) as string;
}

/** utils.isDeepEqual. Comparing an array with a plain object reads own property names, which JSONata's sequences have more of: fall back. */
export function deepEqual(lhs: unknown, rhs: unknown, run: Run): boolean {
  if (lhs === rhs) return true;
  if (typeof lhs !== 'object' || typeof rhs !== 'object' || lhs === null || rhs === null) return false;
  const la = Array.isArray(lhs);
  const ra = Array.isArray(rhs);
  if (la && ra) {
    if (lhs.length !== rhs.length) return false;
    run.tick(lhs.length);
    for (let i = 0; i < lhs.length; i += 1) if (!deepEqual(lhs[i], rhs[i], run)) return false;
    return true;
  }
  if (la || ra) fallback();
  const lkeys = Object.getOwnPropertyNames(lhs).sort();
  const rkeys = Object.getOwnPropertyNames(rhs).sort();
  if (lkeys.length !== rkeys.length) return false;
  run.tick(lkeys.length);
  for (let i = 0; i < lkeys.length; i += 1) if (lkeys[i] !== rkeys[i]) return false;
  for (const key of lkeys) {
    if (!deepEqual((lhs as Record<string, unknown>)[key], (rhs as Record<string, unknown>)[key], run)) return false;
  }
  return true;
}
