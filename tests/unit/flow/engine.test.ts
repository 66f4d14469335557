import { startCpuBudget } from '../../../domain/cpu-budget';
import { compileGate, interruptedOutcome, validatePayload, type ValidationProgress } from '../../../domain/flow/engine';
import type { GateValidationDefinition, ObjectSchema } from '../../../domain/flow/gate.types';
import { cpuMsOfAsync } from '../../support/cpu-time';

const schema: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', required: true, minLength: 2, maxLength: 10 },
    age: { type: 'integer', min: 18, max: 120 },
    score: { type: 'number' },
    active: { type: 'boolean' },
    code: { type: 'string', pattern: '^[A-Z]{3}-\\d{3}$' },
    tier: { type: 'string', enum: ['gold', 'silver'] },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'url' },
    born: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    ref: { type: 'string', format: 'uuid' },
    customer: { type: 'object', properties: { email: { type: 'string', required: true, format: 'email' } } },
    items: {
      type: 'array',
      minLength: 1,
      maxLength: 3,
      items: { type: 'object', properties: { price: { type: 'number', required: true, min: 0 }, qty: { type: 'integer', min: 1 } } },
    },
  },
};

const def = (over: Partial<GateValidationDefinition> = {}): GateValidationDefinition => ({
  validationMode: 'variables',
  schema,
  businessRules: [],
  freetextConfig: null,
  ...over,
});

const valid = { name: 'Ada', items: [{ price: 3, qty: 2 }] };

describe('schema layer', () => {
  const gate = compileGate(def());
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['missing required', { items: [{ price: 1 }] }, 'name', 'REQUIRED'],
    ['null required', { ...valid, name: null }, 'name', 'REQUIRED'],
    ['wrong type', { ...valid, name: 42 }, 'name', 'TYPE'],
    ['integer with fraction', { ...valid, age: 20.5 }, 'age', 'TYPE'],
    ['number as string', { ...valid, score: '12' }, 'score', 'TYPE'],
    ['boolean as string', { ...valid, active: 'true' }, 'active', 'TYPE'],
    ['below min', { ...valid, age: 17 }, 'age', 'MIN'],
    ['above max', { ...valid, age: 121 }, 'age', 'MAX'],
    ['too short', { ...valid, name: 'A' }, 'name', 'MIN_LENGTH'],
    ['too long', { ...valid, name: 'Adalovelace' }, 'name', 'MAX_LENGTH'],
    ['pattern', { ...valid, code: 'AB-123' }, 'code', 'PATTERN'],
    ['enum', { ...valid, tier: 'bronze' }, 'tier', 'ENUM'],
    ['email', { ...valid, email: 'not-an-email' }, 'email', 'FORMAT'],
    ['url', { ...valid, site: 'ftp://x.org' }, 'site', 'FORMAT'],
    ['date', { ...valid, born: '2023-02-29' }, 'born', 'FORMAT'],
    ['date-time', { ...valid, at: '2024-01-01 10:00' }, 'at', 'FORMAT'],
    ['uuid', { ...valid, ref: '1234' }, 'ref', 'FORMAT'],
    ['unknown field', { ...valid, extra: 1 }, 'extra', 'UNKNOWN_FIELD'],
    ['nested object', { ...valid, customer: { email: 'x' } }, 'customer.email', 'FORMAT'],
    ['nested required', { ...valid, customer: {} }, 'customer.email', 'REQUIRED'],
    ['array item path', { ...valid, items: [{ price: 1 }, { price: 2 }, { price: -1 }] }, 'items[2].price', 'MIN'],
    ['array item type', { ...valid, items: [{ price: 1, qty: 'x' }] }, 'items[0].qty', 'TYPE'],
    ['too few items', { ...valid, items: [] }, 'items', 'MIN_LENGTH'],
    ['too many items', { ...valid, items: [{ price: 1 }, { price: 1 }, { price: 1 }, { price: 1 }] }, 'items', 'MAX_LENGTH'],
  ];

  it('accepts a valid payload, formats included', async () => {
    const out = await validatePayload(gate, {
      ...valid,
      age: 30,
      score: 1.5,
      active: true,
      code: 'ABC-123',
      tier: 'gold',
      email: 'ada@example.com',
      site: 'https://example.com/x',
      born: '2024-02-29',
      at: '2024-05-01T12:00:00.5+02:00',
      ref: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
      customer: { email: 'c@example.org' },
    });
    expect(out).toMatchObject({ valid: true, layers: { schema: 'pass', business_rules: 'pass' }, details: [] });
  });

  it.each(cases)('%s', async (_label, payload, field, code) => {
    const out = await validatePayload(gate, payload);
    expect(out.valid).toBe(false);
    expect(out.failedLayer).toBe('schema');
    expect(out.details).toContainEqual(expect.objectContaining({ field, code }));
  });

  it('refuses a payload that is not an object, and reports every problem at once', async () => {
    expect((await validatePayload(gate, [1])).details).toEqual([expect.objectContaining({ field: '$', code: 'TYPE' })]);
    const out = await validatePayload(gate, { name: 1, age: 1, extra: true });
    expect(out.details.map((d) => d.code).sort()).toEqual(['MIN', 'TYPE', 'UNKNOWN_FIELD']);
  });

  it('accepts any object when the gate has no schema', async () => {
    expect((await validatePayload(compileGate(def({ schema: null })), { anything: [1, 2] })).valid).toBe(true);
  });

  it('caps the details of a huge bad array', async () => {
    const g = compileGate(def({ schema: { type: 'object', properties: { xs: { type: 'array', items: { type: 'integer' } } } } }));
    const out = await validatePayload(g, { xs: Array.from({ length: 5000 }, () => 'x') });
    expect(out.details).toHaveLength(100);
  });
});

describe('business rules', () => {
  const rules = [
    { id: 'total', name: 'Total positive', expression: '$sum(items.(price * qty)) > 0', message: 'Total must be positive' },
    { id: 'adult', expression: 'age >= 21', message: 'Must be 21' },
    { id: 'boom', expression: '$error("exploded")', message: 'never' },
    { id: 'truthy', expression: '"yes"', message: 'Only true passes' },
  ];
  const gate = compileGate(def({ businessRules: rules }));

  it('runs only after the schema layer passed', async () => {
    const out = await validatePayload(gate, { items: [] });
    expect(out.layers).toEqual({ schema: 'fail', business_rules: 'skipped' });
    expect(out.steps.slice(1).map((s) => s.status)).toEqual(['skipped', 'skipped', 'skipped', 'skipped']);
  });

  it('tells a failing rule from a rule that throws, with a step per rule', async () => {
    const out = await validatePayload(gate, { ...valid, age: 30 });
    expect(out.layers).toEqual({ schema: 'pass', business_rules: 'fail' });
    expect(out.failedLayer).toBe('business_rules');
    const byId = Object.fromEntries(out.steps.filter((s) => s.ruleId).map((s) => [s.ruleId, s]));
    expect(byId.total).toMatchObject({ status: 'pass', name: 'Total positive', expression: rules[0].expression, errors: [] });
    expect(byId.adult.status).toBe('pass');
    expect(byId.boom.status).toBe('error');
    expect(byId.boom.errors[0]).toMatchObject({ code: 'RULE', field: 'boom' });
    expect(byId.boom.errors[0].message).toMatch(/exploded/);
    expect(byId.truthy).toMatchObject({ status: 'fail', errors: [{ field: 'truthy', code: 'RULE', message: 'Only true passes', ruleId: 'truthy' }] });
    expect(out.steps[0]).toMatchObject({ name: 'schema', status: 'pass' });
    expect(typeof out.durationMs).toBe('number');
  });

  it('passes when every rule yields true', async () => {
    const g = compileGate(def({ businessRules: rules.slice(0, 2) }));
    expect((await validatePayload(g, { ...valid, age: 40 })).valid).toBe(true);
    const under = await validatePayload(g, { ...valid, age: 19 });
    expect(under.details).toEqual([{ field: 'adult', code: 'RULE', ruleId: 'adult', message: 'Must be 21' }]);
  });

  it('ends a runaway rule with an error instead of hanging', async () => {
    const g = compileGate(def({ schema: null, businessRules: [{ id: 'loop', expression: '($f := function($n){ $f($n + 1) }; $f(0))', message: 'x' }] }));
    const out = await validatePayload(g, {});
    expect(out.steps[1].status).toBe('error');
  });

  it('runs a catastrophic-looking regex inside a rule on the linear engine: an answer, not a hang', async () => {
    const g = compileGate(def({ schema: null, businessRules: [{ id: 're', expression: '$contains(s, /^(a+)+$/i)', message: 'x' }] }));
    const { result: out, cpuMs } = await cpuMsOfAsync(() => validatePayload(g, { s: `${'a'.repeat(100_000)}b` }));
    expect(out.steps[1]).toMatchObject({ status: 'fail', errors: [{ message: 'x' }] });
    expect(cpuMs).toBeLessThan(1000);
  });

  it('stops a runaway rule at the budget with an error step that says so', async () => {
    const g = compileGate(def({ schema: null, businessRules: [{ id: 'loop', expression: '($f := function($n){ $f($n + 1) }; $f(0))', message: 'x' }, { id: 'after', expression: 'true', message: 'y' }] }));
    const out = await validatePayload(g, {}, startCpuBudget(100));
    expect(out.steps.slice(1).map((s) => s.status)).toEqual(['error', 'error']);
    expect(out.steps[1].errors[0].message).toMatch(/evaluation budget exceeded \(100 ms for the whole validation\)/);
    expect(out.steps[2].errors[0].message).toMatch(/evaluation budget exceeded/);
  });

  it('keeps the reason of a rule that ended in error when its worker is killed before answering (a starved worker at its wall backstop)', async () => {
    const definition = def({ schema: null, businessRules: [{ id: 'loop', expression: '($f := function($n){ $f($n + 1) }; $f(0))', message: 'x' }, { id: 'after', expression: 'true', message: 'y' }] });
    const progress: ValidationProgress[] = [];
    const budget = { ...startCpuBudget(100), report: (p: ValidationProgress) => progress.push(p) };
    await validatePayload(compileGate(definition), {}, budget);
    // The host saw the first rule's progress, then killed the worker: the outcome is rebuilt from it.
    const seen = progress.filter((p) => p.at <= 1);
    const out = interruptedOutcome(definition, seen, 'killed at the backstop', 0);
    expect(out.steps.slice(1).map((s) => s.status)).toEqual(['error', 'error']);
    expect(out.steps[1].errors[0].message).toMatch(/evaluation budget exceeded \(100 ms for the whole validation\)/);
    expect(out.steps[2].errors[0].message).toMatch(/killed at the backstop/);
  });
  it('counts CPU time, not waiting: a validation whose budget was spent waiting for a core still runs its rules', async () => {
    const g = compileGate(def({ schema: null, businessRules: [{ id: 'sum', expression: '$sum([1..5000]) = 12502500', message: 'x' }] }));
    const budget = startCpuBudget(50);
    // The process waits (as a worker does on a busy machine) three times the budget before it gets to run.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const out = await validatePayload(g, {}, budget);
    expect(out.steps[1]).toMatchObject({ status: 'pass' });
  });
});

describe('freetext mode', () => {
  const gate = compileGate(
    def({
      validationMode: 'freetext',
      schema: null,
      freetextConfig: { minLength: 5, maxLength: 40, requiredPatterns: ['Order #\\d+'], forbiddenPatterns: ['password'] },
      businessRules: [{ id: 'words', expression: 'words >= 3 and lines = 2 and length = $length(text)', message: 'Two lines, three words' }],
    }),
  );

  it('checks length and patterns, then rules over {text, length, lines, words}', async () => {
    const ok = await validatePayload(gate, 'Order #12 for\nAda 😀');
    expect(ok).toMatchObject({ valid: true, layers: { schema: 'pass', business_rules: 'pass' } });
    expect(ok.steps[0].name).toBe('freetext');
    const cases: Array<[unknown, string]> = [
      ['Ord', 'MIN_LENGTH'],
      [`Order #1 ${'x'.repeat(40)}`, 'MAX_LENGTH'],
      ['no order number here', 'PATTERN'],
      ['Order #1 password', 'PATTERN'],
      [{ text: 'x' }, 'TYPE'],
    ];
    for (const [text, code] of cases) {
      const out = await validatePayload(gate, text);
      expect(out.details).toContainEqual(expect.objectContaining({ field: 'text', code }));
    }
    const ruleFail = await validatePayload(gate, 'Order #12 for Ada');
    expect(ruleFail).toMatchObject({ valid: false, failedLayer: 'business_rules' });
  });
});
