import { startCpuBudget } from '../../../domain/cpu-budget';
import { compileGate, validatePayload } from '../../../domain/flow/engine';
import { FALLBACK } from '../../../domain/flow/rule-closures';
import { compileRule, RuleMeter, type CompiledRule } from '../../../domain/flow/rules';
import { seededRandom, testCases } from '../../support/seeded-random';
import { cpuMsOfAsync } from '../../support/cpu-time';

/**
 * Differential test of the compiled rules (domain/flow/rule-closures.ts): random payloads, from a
 * seeded generator, through the closures and through the JSONata interpreter must give the same
 * value or the same error, expression by expression.
 */


const NUMBERS = [0, -0, 1, -1, 2, 3, 0.1, 0.2, 0.01, 1.5, -2.5, 10, 50, 51, 100, 101, 1e21, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE, 123456.789, 1 / 3];
const STRINGS = ['', 'a', 'b', 'A', 'EUR', 'USD', 'eur', '2026-01-10', '2026-02-10T00:00:00Z', '2025-12-31', 'x y', '😀ab', 'ß', '10', '0', 'true', 'null', 'a'.repeat(40)];
const NAMES = ['a', 'b', 'n', 'm', 's', 't', 'flag', 'items', 'obj', 'arr', 'total', 'due', 'issued', 'currency', 'vat', 'discount', 'paid', 'price', 'qty'];

function generator(seed: number) {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const value = (depth: number): unknown => {
    const k = r();
    if (k < 0.08) return null;
    if (k < 0.35) return pick(NUMBERS);
    if (k < 0.55) return pick(STRINGS);
    if (k < 0.65) return r() < 0.5;
    if (depth > 2) return pick(NUMBERS);
    if (k < 0.85) return Array.from({ length: pick([0, 1, 1, 2, 3, 5]) }, () => value(depth + 1));
    return object(depth + 1);
  };
  const object = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const fields = pick([0, 1, 2, 4, 6]);
    for (let i = 0; i < fields; i += 1) out[pick(NAMES)] = value(depth);
    return out;
  };
  // Mostly well-formed invoices with random holes and wrong types, then anything at all.
  const item = () => {
    const it: Record<string, unknown> = { sku: pick(STRINGS), price: pick(NUMBERS), qty: pick([1, 2, 3, 0, -1, 1.5]) };
    if (r() < 0.15) it.price = value(2);
    if (r() < 0.1) delete it.qty;
    if (r() < 0.1) it.tags = [pick(STRINGS), pick(STRINGS)];
    return it;
  };
  return (): Record<string, unknown> => {
    const p: Record<string, unknown> = {
      total: pick(NUMBERS),
      discount: pick(NUMBERS),
      paid: r() < 0.5,
      currency: pick(['EUR', 'USD', 'GBP']),
      vat: pick(NUMBERS),
      issued: pick(STRINGS),
      due: pick(STRINGS),
      a: pick(NUMBERS),
      b: pick(NUMBERS),
      s: pick(STRINGS),
      t: pick(STRINGS),
      flag: r() < 0.5,
      obj: { x: pick(NUMBERS), y: pick(STRINGS), z: { w: pick(NUMBERS) } },
      items: Array.from({ length: pick([0, 1, 2, 3, 7]) }, item),
      arr: Array.from({ length: pick([0, 1, 2, 4]) }, () => pick(NUMBERS)),
      nested: [[1, 2], [3], [{ a: 1 }, { a: [2, 3] }]],
    };
    // Holes and wrong types in a third of the fields.
    for (const key of Object.keys(p)) {
      const k = r();
      if (k < 0.12) delete p[key];
      else if (k < 0.2) p[key] = null;
      else if (k < 0.33) p[key] = value(1);
    }
    if (r() < 0.1) Object.assign(p, object(1));
    return p;
  };
}

/** Expressions inside the compiled subset. */
const COMPILED = [
  // The benchmark's five rules (scripts/bench-gate.ts).
  '$abs($sum(items.(price * qty)) - total) < 0.01',
  'discount <= 50 or paid = true',
  '$not($exists(due)) or $substring(due, 0, 10) >= issued',
  "currency != 'EUR' or vat >= 0",
  '$count(items) <= 100',
  // Paths.
  'total',
  'obj.z.w',
  'items.price',
  'items.tags',
  'nested.a',
  'nested',
  '$.obj.x',
  '$$.items.sku',
  'items.($$.total)',
  'items.(price)',
  'items.($.qty)',
  'arr.$',
  '`total`',
  'missing.field',
  // Arithmetic and comparisons.
  'a + b',
  'a - b * 2',
  'a / b',
  'a % b',
  '-a',
  '-(obj.x)',
  'total * 1.2 > 100',
  'a < b',
  's <= t',
  'a >= 0 and b >= 0',
  'a = b',
  'obj = obj',
  'items = items',
  'arr = [1, 2]',
  'a != b',
  's = "EUR"',
  'currency in ["EUR", "USD"]',
  'a in arr',
  '$sum(arr) > 3',
  '$sum(items.price) = total',
  // Boolean logic, conditions.
  'flag and paid',
  'flag or $not(paid)',
  'not = 1',
  '$boolean(items)',
  '$boolean(arr)',
  '$not(s)',
  'flag ? a : b',
  'a > 1 ? "big"',
  'missing ?: "default"',
  'due ?? issued',
  '(a; b)',
  '()',
  // Strings.
  's & t',
  '"n=" & a',
  '"obj=" & obj',
  'arr & items',
  '$string(a)',
  '$string(obj)',
  '$length(s) > 3',
  '$uppercase(s) = "EUR"',
  '$lowercase(currency)',
  '$substring(s, 1)',
  '$substring(s, -2, 1)',
  '$contains(s, "a")',
  // Aggregates and functions.
  '$count(arr)',
  '$count(items.price)',
  '$max(arr)',
  '$min(items.price)',
  '$average(arr)',
  '$floor(a)',
  '$ceil(b)',
  '$exists(obj.z)',
  '[a, b, [s]]',
  '[arr, items.qty]',
];

/** Expressions outside it: the interpreter evaluates them. */
const INTERPRETED = [
  'items[price > 1]',
  'items[0].price',
  '($x := 1; $x + a)',
  '$map(arr, function($v) { $v * 2 })',
  '$contains(s, /a/)',
  '*.x',
  '**.price',
  '{"a": a}',
  'items^(price)',
  'items{sku: price}',
  '$millis() > 0',
  '$sum',
  '$foo(1)',
  '$substring(s)',
  '$string()',
  'items[].price',
  '[1, 2].a',
  'items.price#$i',
  'items@$i.price',
  '$number(s)',
  '$round(a, 2)',
  '$join(items.sku, ",")',
  'a ~> $string()',
  `${'('.repeat(70)}a${')'.repeat(70)}`,
];

type Outcome = { value: unknown } | { error: { code?: unknown; message?: unknown; position?: unknown; token?: unknown } };

/** Without JSONata's flags on sequences and its prototype-less objects (from grouping), so only values are compared. */
const plain = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
};

async function outcome(run: () => unknown): Promise<Outcome> {
  try {
    return { value: plain(await run()) };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown; position?: unknown; token?: unknown };
    return { error: { code: e.code, message: e.message, position: e.position, token: e.token } };
  }
}

const budget = () => startCpuBudget(10_000);

describe('compiled rules against the JSONata interpreter', () => {
  const next = generator(20261123);
  const payloads = Array.from({ length: testCases(400, 120) }, next);
  const compiled = COMPILED.map((expression) => compileRule({ id: 'r', expression, message: 'm' }));

  it('compiles every expression of the subset', () => {
    expect(COMPILED.filter((_, i) => compiled[i].closure === undefined)).toEqual([]);
  });

  it.each(COMPILED.map((expression, i) => [expression, i] as const))('%s: the same value or error for every payload', async (expression, i) => {
    const rule: CompiledRule = compiled[i];
    let decided = 0;
    for (const payload of payloads) {
      const interpreted = await outcome(() => rule.interpret(payload, budget()));
      const direct = await outcome(() => rule.closure!(payload, new RuleMeter(budget()).over(payload)));
      if (!('value' in direct && direct.value === FALLBACK)) {
        // What the closures decide themselves is the interpreter's value; they never throw.
        decided += 1;
        expect({ expression, payload, result: direct }).toEqual({ expression, payload, result: interpreted });
      }
      // Through the rule as the engine runs it (closures, else the interpreter): values and errors alike.
      expect({ expression, payload, result: await outcome(() => rule.evaluate(payload, budget())) }).toEqual({ expression, payload, result: interpreted });
    }
    // The payloads do reach the closures (most expressions decide almost every payload themselves).
    expect(decided).toBeGreaterThan(payloads.length / 10);
  });

  it('decides most payloads without the interpreter', async () => {
    let decided = 0;
    let total = 0;
    for (const rule of compiled) {
      for (const payload of payloads.slice(0, 100)) {
        total += 1;
        if (rule.closure!(payload, new RuleMeter(budget()).over(payload)) !== FALLBACK) decided += 1;
      }
    }
    expect(decided / total).toBeGreaterThan(0.7);
  });
});

describe('expressions outside the subset', () => {
  const payloads = Array.from({ length: 60 }, generator(7));

  it.each(INTERPRETED)('%s is left to the interpreter, with the same results', async (expression) => {
    const rule = compileRule({ id: 'r', expression, message: 'm' });
    expect(rule.closure).toBeUndefined();
    for (const payload of payloads) {
      const interpreted = await outcome(() => rule.interpret(payload, budget()));
      expect(await outcome(() => rule.evaluate(payload, budget()))).toEqual(interpreted);
    }
  });

  it('gives a rule back to the interpreter when a value would make it throw, and reports its error', async () => {
    const rule = compileRule({ id: 'r', expression: 'a * b > 1', message: 'm' });
    const payload = { a: 'three', b: 2 };
    expect(rule.closure!(payload, new RuleMeter(budget()).over(payload))).toBe(FALLBACK);
    await expect(rule.evaluate(payload, budget())).rejects.toMatchObject({ code: 'T2001', token: '*' });
    const outcomeOf = await validatePayload(compileGate({ validationMode: 'variables', schema: null, freetextConfig: null, businessRules: [rule.rule] }), payload);
    expect(outcomeOf.steps[1]).toMatchObject({ status: 'error', errors: [expect.objectContaining({ message: expect.stringContaining('must evaluate to a number') })] });
  });

  it('leaves an array input to the interpreter (it wraps it in a sequence of its own)', async () => {
    const rule = compileRule({ id: 'r', expression: '$count($)', message: 'm' });
    expect(rule.closure!([1, 2], new RuleMeter(budget()).over([1, 2]))).toBe(FALLBACK);
    expect(await rule.evaluate([1, 2], budget())).toBe(await rule.interpret([1, 2], budget()));
  });

  it('leaves a sequence past the interpreter’s cap to it (D2015)', async () => {
    const rule = compileRule({ id: 'r', expression: '$count(rows.v) > 0', message: 'm' });
    const payload = { rows: Array.from({ length: 100_001 }, () => ({ v: 1 })) };
    expect(rule.closure!(payload, new RuleMeter(budget()).over(payload))).toBe(FALLBACK);
    await expect(rule.evaluate(payload, budget())).rejects.toMatchObject({ code: 'D2015' });
  });
});

describe('compiled rules and the CPU budget', () => {
  // Quadratic through `$$`: each of 30,000 items sums the prices of all of them.
  const expensive = { id: 'quadratic', expression: '$sum(items.($sum($$.items.price))) > 0', message: 'x' };
  const payload = { items: Array.from({ length: 30_000 }, (_, i) => ({ price: i % 7 })) };

  it('stop at the budget like the interpreter (D1012), and the rules after them do not run', async () => {
    const gate = compileGate({ validationMode: 'variables', schema: null, freetextConfig: null, businessRules: [expensive, { id: 'after', expression: 'true', message: 'y' }] });
    expect(gate.rules[0].closure).toBeDefined();
    const { result: out, cpuMs } = await cpuMsOfAsync(() => validatePayload(gate, payload, startCpuBudget(100)));
    expect(cpuMs).toBeLessThan(2000);
    expect(out.steps.map((s) => s.status)).toEqual(['pass', 'error', 'error']);
    expect(out.details[0].message).toContain('evaluation budget exceeded (100 ms');
    expect(out.details[1].message).toContain('evaluation budget exceeded');
  });

  it('report progress before a rule the interpreter runs, so a killed worker is still answered precisely', async () => {
    const gate = compileGate({
      validationMode: 'variables',
      schema: null,
      freetextConfig: null,
      businessRules: [
        { id: 'fast', expression: 'a = 1', message: 'x' },
        { id: 'interpreted', expression: 'items[0] = 1', message: 'y' },
        { id: 'fast-again', expression: 'a = 2', message: 'z' },
      ],
    });
    const reports: unknown[] = [];
    const budgetWithReport = Object.assign(startCpuBudget(1000), { report: (p: unknown) => reports.push(p) });
    const out = await validatePayload(gate, { a: 1, items: [1] }, budgetWithReport);
    expect(out.steps.map((s) => s.status)).toEqual(['pass', 'pass', 'pass', 'fail']);
    expect(reports).toEqual([{ at: 0 }, { at: 1 }, { at: 1, done: { rule: 0, status: 'pass' } }, { at: 2 }, { at: 2, done: { rule: 1, status: 'pass' } }]);
  });
});
