import { BUILTINS } from './rule-functions';
import { boolize, collapse, deepEqual, FALLBACK, fallback, isFiniteNumber, isFunctionLike, isSeq, lookup, newSeq, pushSeq, toBoolean, toJsonataString, type Run, type Seq } from './rule-values';

/**
 * Business rules compiled to closures. JSONata's interpreter is asynchronous at every node (each
 * step of `a.b > 1` is an awaited call) and costs a validation tens of microseconds per rule; most
 * rules are a handful of paths, comparisons and `and`/`or`. For those, this builds one plain
 * closure per node of the expression's AST (no generated source text, no `Function`, no `eval`):
 * literals; paths of field names, `$` and `$$`, with expression steps (`items.(price * qty)`);
 * `+ - * / %`, unary minus; `= != < <= > >=`, `in`; `and`, `or`; `&`; `? :`, `?:`, `??`;
 * blocks; array constructors; and the built-ins of rule-functions.ts called with their arguments.
 * Anything else (filters, variables and bindings, lambdas, regexes, object constructors,
 * wildcards, sorting, grouping) leaves the whole expression to the interpreter.
 *
 * A compiled closure returns what the interpreter returns, value for value (the differential test
 * tests/unit/flow/rule-closures.test.ts holds it to that). It never reports an error: wherever the
 * interpreter would throw (a string times a number, comparing a string with a number, a sequence
 * past its cap), or where a value would take a path the closures do not copy, it gives up and the
 * interpreter evaluates the rule from the start, so errors are JSONata's own.
 *
 * Cost is bounded like the interpreter's: the work is linear in the expression times the payload
 * except where `$$` inside a step makes it quadratic, and every loop counts its steps against the
 * validation's CPU budget (Run.tick), ending with JSONata's D1012 as the interpreter would.
 */

export type Closure = (input: unknown, run: Run) => unknown;

/** An AST node as jsonata's `ast()` returns it (post-processed). */
interface Node {
  type: string;
  value?: unknown;
  steps?: Node[];
  lhs?: Node;
  rhs?: Node;
  expression?: Node;
  expressions?: Node[];
  arguments?: Node[];
  procedure?: Node;
  condition?: Node;
  then?: Node;
  else?: Node;
  [key: string]: unknown;
}

/** Nested evaluations the interpreter allows (its `stack` guardrail is 200); deeper ASTs stay with it. */
const MAX_DEPTH = 60;

/** The keys each node type may carry to be compiled: any other (predicate, stages, group, focus, keepArray, tuple…) means a construct the closures do not have. */
const KEYS: Record<string, readonly string[]> = {
  path: ['type', 'steps'],
  name: ['type', 'value', 'position'],
  variable: ['type', 'value', 'position'],
  string: ['type', 'value', 'position'],
  number: ['type', 'value', 'position'],
  value: ['type', 'value', 'position'],
  binary: ['type', 'value', 'position', 'lhs', 'rhs'],
  unary: ['type', 'value', 'position', 'expression', 'expressions'],
  function: ['type', 'value', 'position', 'name', 'arguments', 'procedure'],
  block: ['type', 'position', 'expressions'],
  condition: ['type', 'position', 'condition', 'then', 'else'],
};

class Unsupported extends Error {}

function unsupported(): never {
  throw new Unsupported();
}

function checkKeys(node: Node): void {
  const allowed = KEYS[node.type] ?? unsupported();
  for (const key of Object.keys(node)) if (node[key] !== undefined && !allowed.includes(key)) unsupported();
}

type Binary = (lhs: unknown, rhs: unknown, run: Run) => unknown;

/** evaluateNumericExpression: both sides numbers or missing; an infinite or NaN result is left to the interpreter. */
function arithmetic(op: (a: number, b: number) => number): Binary {
  return (l, r) => {
    if (l !== undefined && !isFiniteNumber(l)) fallback();
    if (r !== undefined && !isFiniteNumber(r)) fallback();
    if (l === undefined || r === undefined) return undefined;
    const v = op(l, r);
    return Number.isFinite(v) ? v : fallback();
  };
}

/** evaluateComparisonExpression: two strings or two numbers; missing on either side is missing. */
function comparison(op: (a: number | string, b: number | string) => boolean): Binary {
  return (l, r) => {
    const lt = typeof l;
    const rt = typeof r;
    if (!(lt === 'undefined' || lt === 'string' || lt === 'number') || !(rt === 'undefined' || rt === 'string' || rt === 'number')) fallback();
    if (l === undefined || r === undefined) return undefined;
    if (lt !== rt) fallback();
    return op(l as number | string, r as number | string);
  };
}

const BINARY: Record<string, Binary> = {
  '+': arithmetic((a, b) => a + b),
  '-': arithmetic((a, b) => a - b),
  '*': arithmetic((a, b) => a * b),
  '/': arithmetic((a, b) => a / b),
  '%': arithmetic((a, b) => a % b),
  '=': (l, r, run) => (l === undefined || r === undefined ? false : deepEqual(l, r, run)),
  '!=': (l, r, run) => (l === undefined || r === undefined ? false : !deepEqual(l, r, run)),
  '<': comparison((a, b) => a < b),
  '<=': comparison((a, b) => a <= b),
  '>': comparison((a, b) => a > b),
  '>=': comparison((a, b) => a >= b),
  '&': (l, r) => (l === undefined ? '' : toJsonataString(l)!) + (r === undefined ? '' : toJsonataString(r)!),
  in: (l, r) => {
    if (l === undefined || r === undefined) return false;
    const list = Array.isArray(r) ? r : [r];
    for (let i = 0; i < list.length; i += 1) if (list[i] === l) return true;
    return false;
  },
};

/** evaluateStep: a step over every item of its input sequence, results flattened one level. */
function step(each: Closure, input: unknown[], run: Run, last: boolean): unknown[] {
  const result = newSeq();
  for (let i = 0; i < input.length; i += 1) {
    const res = each(input[i], run);
    if (res !== undefined) pushSeq(result, res, run);
  }
  run.tick(input.length);
  if (last && result.length === 1 && Array.isArray(result[0]) && !isSeq(result[0])) return result[0];
  const out = newSeq();
  for (let i = 0; i < result.length; i += 1) {
    const res = result[i];
    // No `cons` arrays here: array constructors as path steps are not compiled.
    if (!Array.isArray(res)) pushSeq(out, res, run);
    else for (let j = 0; j < res.length; j += 1) pushSeq(out, res[j], run);
  }
  return out;
}

function seqOf(v: unknown): Seq {
  const s = newSeq();
  s.push(v);
  return s;
}

/** evaluatePath, with a short cut for field names over plain objects (the common `a.b.c`). */
function compilePath(node: Node, depth: number): Closure {
  const nodes = node.steps!;
  if (nodes.length === 0) unsupported();
  const steps = nodes.map((s) => compile(s, depth + 1));
  const relative = nodes[0].type !== 'variable';
  const names = nodes.every((s) => s.type === 'name') ? nodes.map((s) => s.value as string) : undefined;

  const general = (input: unknown, run: Run, from: number): unknown => {
    let inputSeq: unknown[] = Array.isArray(input) && (from > 0 || relative) ? input : seqOf(input);
    let result: unknown[] | undefined;
    for (let i = from; i < steps.length; i += 1) {
      result = step(steps[i], inputSeq, run, i === steps.length - 1);
      if (result.length === 0) break;
      inputSeq = result;
    }
    return collapse(result);
  };
  if (!names) return (input, run) => general(input, run, 0);

  const hasOwn = Object.prototype.hasOwnProperty;
  return (input, run) => {
    // While the value is one plain object, a name step is a field read; an array hands over to the general walk.
    let v = input;
    for (let i = 0; i < names.length; i += 1) {
      if (v === null || typeof v !== 'object') return undefined;
      if (Array.isArray(v)) {
        // After a field read the interpreter flattens the array into the next step's input sequence (D2015 past the cap).
        if (i > 0 && v.length > run.cap) fallback();
        return general(v, run, i);
      }
      if (isFunctionLike(v) || !hasOwn.call(v, names[i])) return undefined;
      v = (v as Record<string, unknown>)[names[i]];
      if (v === undefined) return undefined;
    }
    return v;
  };
}

function compileFunction(node: Node, depth: number): Closure {
  const proc = node.procedure!;
  checkKeys(proc);
  if (proc.type !== 'variable' || typeof proc.value !== 'string' || !Object.prototype.hasOwnProperty.call(BUILTINS, proc.value)) unsupported();
  const spec = BUILTINS[proc.value];
  const argNodes = node.arguments!;
  if (!spec.arities.includes(argNodes.length)) unsupported();
  const args = argNodes.map((a) => compile(a, depth + 1));
  const call = spec.call;
  const evalArg = (arg: Closure, input: unknown, run: Run) => {
    const v = arg(input, run);
    // The interpreter wraps a function-like argument in a closure of its own.
    if (v !== null && typeof v === 'object' && isFunctionLike(v)) fallback();
    return v;
  };
  if (args.length === 1) {
    const [a] = args;
    return (input, run) => call([evalArg(a, input, run)], run);
  }
  return (input, run) => call(args.map((a) => evalArg(a, input, run)), run);
}

function compileUnary(node: Node, depth: number): Closure {
  if (node.value === '-') {
    if (node.expressions !== undefined) unsupported();
    const inner = compile(node.expression!, depth + 1);
    return (input, run) => {
      const v = inner(input, run);
      if (v === undefined) return undefined;
      return isFiniteNumber(v) ? -v : fallback();
    };
  }
  if (node.value === '[') {
    if (node.expression !== undefined) unsupported();
    const items = node.expressions!.map((e) => ({ nested: e.value === '[', eval: compile(e, depth + 1) }));
    return (input, run) => {
      let result: unknown[] = [];
      for (const item of items) {
        const value = item.eval(input, run);
        if (value === undefined) continue;
        if (item.nested) {
          result.push(value);
        } else {
          // fn.append: arrays are concatenated, anything else appended.
          const more = Array.isArray(value) ? value : [value];
          if (result.length + more.length > run.cap) fallback();
          result = result.concat(more);
        }
      }
      run.tick(result.length);
      return result;
    };
  }
  return unsupported();
}

function compileBinary(node: Node, depth: number): Closure {
  const lhs = compile(node.lhs!, depth + 1);
  const rhs = compile(node.rhs!, depth + 1);
  const op = node.value as string;
  if (op === 'and') return (input, run) => boolize(lhs(input, run)) && boolize(rhs(input, run));
  if (op === 'or') return (input, run) => boolize(lhs(input, run)) || boolize(rhs(input, run));
  const apply = Object.prototype.hasOwnProperty.call(BINARY, op) ? BINARY[op] : unsupported();
  return (input, run) => {
    const l = lhs(input, run);
    return apply(l, rhs(input, run), run);
  };
}

function compile(node: Node, depth: number): Closure {
  if (depth > MAX_DEPTH || node === null || typeof node !== 'object') unsupported();
  checkKeys(node);
  switch (node.type) {
    case 'string':
    case 'number':
    case 'value': {
      const v = node.value;
      return () => v;
    }
    case 'path':
      return compilePath(node, depth);
    case 'name': {
      const key = node.value as string;
      return (input, run) => collapse(lookup(input, key, run));
    }
    case 'variable':
      // `$` is the context, `$$` the root; any other variable needs the interpreter's environment.
      if (node.value === '') return (input) => collapse(input);
      if (node.value === '$') return (_input, run) => collapse(run.root);
      return unsupported();
    case 'binary':
      return compileBinary(node, depth);
    case 'unary':
      return compileUnary(node, depth);
    case 'function':
      return compileFunction(node, depth);
    case 'block': {
      const parts = node.expressions!.map((e) => compile(e, depth + 1));
      return (input, run) => {
        let result: unknown;
        for (const part of parts) result = part(input, run);
        return collapse(result);
      };
    }
    case 'condition': {
      const condition = compile(node.condition!, depth + 1);
      const then = compile(node.then!, depth + 1);
      const otherwise = node.else === undefined ? undefined : compile(node.else, depth + 1);
      return (input, run) => {
        if (toBoolean(condition(input, run))) return collapse(then(input, run));
        return otherwise ? collapse(otherwise(input, run)) : undefined;
      };
    }
    default:
      return unsupported();
  }
}

/** A compiled rule: the value, or FALLBACK when the interpreter must decide. Throws only JSONata's D1012 (budget spent). */
export type RuleClosure = (input: unknown, run: Run) => unknown;

/** The closure of an expression's AST, or undefined when it is outside the compiled subset. */
export function compileRuleAst(ast: unknown): RuleClosure | undefined {
  let closure: Closure;
  try {
    closure = compile(ast as Node, 0);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  return (input, run) => {
    // The interpreter wraps an array input in a sequence of its own; left to it.
    if (Array.isArray(input)) return FALLBACK;
    try {
      return closure(input, run);
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code === 'D1012') throw err;
      // FALLBACK, and anything a closure did not expect (a stack overflow on a deep payload): the interpreter decides.
      return FALLBACK;
    }
  };
}

export { FALLBACK };
