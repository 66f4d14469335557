import { fallback, isFiniteNumber, toBoolean, toJsonataString, type Run } from './rule-values';

/**
 * The JSONata built-in functions rule-closures.ts calls directly, each with the argument count it
 * is compiled for. Each takes its arguments as JSONata's signature check would hand them over
 * (jsonata 2.2.2, `parseSignature(...).validate`) and returns what the library's implementation
 * returns; any argument the check would refuse (T0410, T0412), or would replace by the context,
 * gives the rule back to the interpreter (`fallback()`), which then reports JSONata's own error.
 */

type Builtin = (args: unknown[], run: Run) => unknown;

interface BuiltinSpec {
  /** Argument counts compiled; any other count is left to the interpreter. */
  arities: number[];
  call: Builtin;
}

/** `<a<n>:n>`: undefined, one number, or an array whose items are all numbers. */
function numbers(arg: unknown, run: Run): number[] | undefined {
  if (arg === undefined) return undefined;
  if (Array.isArray(arg)) {
    run.tick(arg.length);
    for (let i = 0; i < arg.length; i += 1) if (typeof arg[i] !== 'number') fallback();
    return arg as number[];
  }
  if (typeof arg !== 'number') fallback();
  return [arg];
}

/** `<s-…>` with the argument given: a string or nothing. */
function stringArg(arg: unknown): string | undefined {
  if (arg !== undefined && typeof arg !== 'string') fallback();
  return arg;
}

/** `<n-…>` with the argument given: a number or nothing. */
function numberArg(arg: unknown): number | undefined {
  if (arg !== undefined && typeof arg !== 'number') fallback();
  return arg;
}

const finite = (n: number): number => (Number.isFinite(n) ? n : fallback());

function sum(nums: number[]): number {
  let total = 0;
  for (let i = 0; i < nums.length; i += 1) total += nums[i];
  return finite(total);
}

/** Math.max/min through `apply` as the library does; a very long list is left to it. */
function extreme(nums: number[] | undefined, pick: (...n: number[]) => number): number | undefined {
  if (nums === undefined || nums.length === 0) return undefined;
  if (nums.length > 10_000) fallback();
  return finite(pick(...nums));
}

const codePoints = (s: string): string[] => Array.from(s);

/** Without surrogates, UTF-16 units are code points, and String#slice indexes as Array#slice does. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** fn.substring, line for line (on the string itself when it has no surrogate pairs). */
function substring(str: string | undefined, start: number, length: number | undefined): string | undefined {
  if (str === undefined) return undefined;
  const strArray: string | string[] = SURROGATE.test(str) ? codePoints(str) : str;
  const strLength = strArray.length;
  let from = start;
  if (strLength + from < 0) from = 0;
  const cut = (a: number, b?: number) => (typeof strArray === 'string' ? strArray.slice(a, b) : strArray.slice(a, b).join(''));
  if (length !== undefined) {
    if (length <= 0) return '';
    const end = from >= 0 ? from + length : strLength + from + length;
    return cut(from, end);
  }
  return cut(from);
}

function unaryNumber(op: (n: number) => number): BuiltinSpec {
  return {
    arities: [1],
    call: ([a]) => {
      const n = numberArg(a);
      return n === undefined ? undefined : finite(op(n));
    },
  };
}

function unaryString(op: (s: string) => unknown): BuiltinSpec {
  return {
    arities: [1],
    call: ([a]) => {
      const s = stringArg(a);
      return s === undefined ? undefined : op(s);
    },
  };
}

export const BUILTINS: Record<string, BuiltinSpec> = {
  exists: { arities: [1], call: ([a]) => a !== undefined },
  count: { arities: [1], call: ([a]) => (a === undefined ? 0 : Array.isArray(a) ? a.length : 1) },
  sum: {
    arities: [1],
    call: ([a], run) => {
      const nums = numbers(a, run);
      return nums === undefined ? undefined : sum(nums);
    },
  },
  max: { arities: [1], call: ([a], run) => extreme(numbers(a, run), Math.max) },
  min: { arities: [1], call: ([a], run) => extreme(numbers(a, run), Math.min) },
  average: {
    arities: [1],
    call: ([a], run) => {
      const nums = numbers(a, run);
      if (nums === undefined || nums.length === 0) return undefined;
      return finite(sum(nums) / nums.length);
    },
  },
  abs: unaryNumber(Math.abs),
  floor: unaryNumber(Math.floor),
  ceil: unaryNumber(Math.ceil),
  not: { arities: [1], call: ([a]) => (a === undefined ? undefined : !toBoolean(a)) },
  boolean: { arities: [1], call: ([a]) => toBoolean(a) },
  string: { arities: [1], call: ([a]) => toJsonataString(a) },
  length: unaryString((s) => (SURROGATE.test(s) ? codePoints(s).length : s.length)),
  uppercase: unaryString((s) => s.toUpperCase()),
  lowercase: unaryString((s) => s.toLowerCase()),
  substring: {
    arities: [2, 3],
    call: ([s, start, length], _run) => {
      const str = stringArg(s);
      if (!isFiniteNumber(start)) fallback();
      if (length !== undefined && !isFiniteNumber(length)) fallback();
      return substring(str, start, length as number | undefined);
    },
  },
  contains: {
    arities: [2],
    call: ([s, token]) => {
      const str = stringArg(s);
      const t = stringArg(token);
      if (str === undefined || t === undefined) return undefined;
      return str.indexOf(t) !== -1;
    },
  },
};
