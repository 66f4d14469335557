import { AppError } from '../../../domain/errors';
import { assertNoProblems, definitionProblems } from '../../../domain/flow/definition-check';
import { CompiledGateCache } from '../../../domain/flow/gate-cache';
import { compileGate, validatePayload } from '../../../domain/flow/engine';
import type { GateValidationDefinition } from '../../../domain/flow/gate.types';
import { admission } from '../../../domain/flow/circuit-breaker';
import { compileUserRegex, toRe2Syntax } from '../../../domain/user-regex';
import { flowPlan } from '../../../domain/flow/plans';
import { cpuMsOf } from '../../support/cpu-time';

const base: GateValidationDefinition = { validationMode: 'variables', schema: null, businessRules: [], freetextConfig: null };
const withSchema = (properties: Record<string, unknown>) => ({ ...base, schema: { type: 'object', properties } as never });

describe('gate definition check', () => {
  it('accepts a well-formed definition', () => {
    expect(
      definitionProblems({
        ...withSchema({ a: { type: 'array', items: { type: 'object', properties: { p: { type: 'number', min: 0 } } } }, s: { type: 'string', pattern: '^\\d+$' } }),
        businessRules: [{ id: 'r1', expression: 'a[0].p > 1', message: 'm' }],
      }),
    ).toEqual([]);
  });

  it.each([
    ['unknown type', { x: { type: 'date' } }, 'schema.properties.x.type'],
    ['key of another type', { x: { type: 'string', min: 1 } }, 'schema.properties.x.min'],
    ['bad bound', { x: { type: 'integer', min: 'one' } }, 'schema.properties.x.min'],
    ['min above max', { x: { type: 'number', min: 5, max: 1 } }, 'schema.properties.x.min'],
    ['unknown format', { x: { type: 'string', format: 'phone' } }, 'schema.properties.x.format'],
    ['enum of wrong type', { x: { type: 'integer', enum: ['a'] } }, 'schema.properties.x.enum'],
    ['invalid regex', { x: { type: 'string', pattern: '([a-z' } }, 'schema.properties.x.pattern'],
    // Not runnable by the linear engine (lookahead) and nested repetition for the backtracking one.
    ['catastrophic regex', { x: { type: 'string', pattern: '^(?=a)(a+)+$' } }, 'schema.properties.x.pattern'],
    ['nested path', { o: { type: 'object', properties: { y: { type: 'nope' } } } }, 'schema.properties.o.properties.y.type'],
  ])('refuses %s', (_l, properties, field) => {
    expect(definitionProblems(withSchema(properties))).toContainEqual(expect.objectContaining({ field }));
  });

  it('refuses a rule that does not parse, duplicate ids, and a freetext gate without its config', () => {
    const problems = definitionProblems({
      ...base,
      validationMode: 'freetext',
      businessRules: [
        { id: 'a', expression: 'total >', message: 'm' },
        { id: 'a', expression: 'true', message: 'm' },
      ],
    });
    expect(problems.map((p) => p.field)).toEqual(['freetextConfig', 'businessRules[0].expression', 'businessRules[1].id']);
    expect(problems[1].message).toMatch(/does not parse/);
  });

  it('throws 422 FLOW.GATE_VALIDATION_FAILED with the details', () => {
    try {
      assertNoProblems(definitionProblems(withSchema({ x: { type: 'wat' } })));
      throw new Error('not thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('FLOW.GATE_VALIDATION_FAILED');
      expect((err as AppError).status).toBe(422);
      expect((err as AppError).relatedInfo?.details).toEqual([expect.objectContaining({ field: 'schema.properties.x.type' })]);
    }
  });
});

describe('user patterns on the linear-time engine', () => {
  it('runs the classic catastrophic patterns in linear time', () => {
    for (const [pattern, text] of [
      ['^(a+)+$', `${'a'.repeat(100_000)}b`],
      ['^(a|aa)*b$', 'a'.repeat(100_000)],
      ['^(\\w+\\s?)*$', `${'word '.repeat(20_000)}!`],
      ['(x+x+)+y', 'x'.repeat(100_000)],
    ] as const) {
      const compiled = compileUserRegex(pattern);
      if (!compiled.ok) throw new Error(`${pattern} refused: ${compiled.reason}`);
      const { result, cpuMs } = cpuMsOf(() => compiled.regex.test(text));
      expect(result).toBe(false);
      expect(cpuMs).toBeLessThan(2000);
    }
  });

  it('refuses what RE2 cannot run, with its reason: lookarounds, backreferences, oversized patterns', () => {
    expect(compileUserRegex('^(?!z)a*a*a*a*a*$')).toMatchObject({ ok: false, reason: expect.stringMatching(/linear-time \(RE2\) engine/) });
    expect(compileUserRegex('^(?=.*\\d).{8,}$')).toMatchObject({ ok: false });
    expect(compileUserRegex('(?<=a)b')).toMatchObject({ ok: false });
    expect(compileUserRegex('(a)\\1')).toMatchObject({ ok: false });
    expect(compileUserRegex('x'.repeat(600))).toMatchObject({ ok: false, reason: expect.stringMatching(/longer than 512/) });
    const problems = definitionProblems({ validationMode: 'variables', schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(?!z)a*a*a*a*a*$' } } }, businessRules: [], freetextConfig: null });
    expect(problems).toEqual([{ field: 'schema.properties.s.pattern', message: expect.stringMatching(/invalid or unsupported Perl syntax/) }]);
  });

  it('reads ordinary ECMAScript patterns the way a schema author means them', () => {
    const cases: Array<[string, string, boolean]> = [
      ['^[a-z]+@[a-z]+\\.[a-z]{2,6}$', 'ada@example.org', true],
      ['^[A-Z]{2}\\d{6}$', 'AB123456', true],
      ['^[A-Z]{2}\\d{6}$', 'AB12345', false],
      ['^caf\\u00e9$', 'café', true],
      ['^\\u{1F600}$', '😀', true],
      ['^\\p{Lu}', 'Émile', true],
      ['(?i)^abc$', 'ABC', true],
    ];
    for (const [pattern, text, want] of cases) {
      const compiled = compileUserRegex(pattern);
      expect(compiled.ok && compiled.regex.test(text)).toBe(want);
    }
    expect(toRe2Syntax('a\\\\u0041')).toBe('a\\\\u0041');
  });

  it('refuses a rule whose regex literal RE2 cannot run, and the engine never runs it', async () => {
    const rule = { id: 'r', message: 'm', expression: '$contains(name, /^(?!z)a*$/)' };
    const problems = definitionProblems({ validationMode: 'variables', schema: null, businessRules: [rule], freetextConfig: null });
    expect(problems).toEqual([{ field: 'businessRules[0].expression', message: expect.stringMatching(/regular expression .* not supported/) }]);
    // $eval builds a regex at run time: the same engine refuses it, as a rule error.
    const gate = compileGate({ validationMode: 'variables', schema: null, freetextConfig: null, businessRules: [{ id: 'e', message: 'm', expression: '$eval("$contains(name, /(?=a)/)")' }] });
    const outcome = await validatePayload(gate, { name: 'a' });
    expect(outcome.steps[1]).toMatchObject({ status: 'error', errors: [{ message: expect.stringMatching(/refused/) }] });
  });

  it('matches, replaces and splits with JSONata regexes on the linear engine', async () => {
    const gate = compileGate({
      validationMode: 'variables',
      schema: null,
      freetextConfig: null,
      businessRules: [
        { id: 'match', message: 'm', expression: '$count($match(s, /a(b)?/)) = 3' },
        { id: 'replace', message: 'm', expression: '$replace(s, /A/i, "x") = "xb-xb-x"' },
        { id: 'split', message: 'm', expression: '$split(s, /-/) = ["ab", "ab", "a"]' },
        { id: 'groups', message: 'm', expression: '$match(s, /a(b)/)[0].groups[0] = "b"' },
        { id: 'redos', message: 'm', expression: '$contains(long, /^(a+)+$/) = false' },
      ],
    });
    const outcome = await validatePayload(gate, { s: 'ab-ab-a', long: `${'a'.repeat(50_000)}!` });
    expect(outcome.steps.map((step) => step.status)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass', 'pass']);
  });
});

describe('compiled gate cache', () => {
  it('compiles once per gate version and drops the least recently used', () => {
    const cache = new CompiledGateCache(2);
    const load = jest.fn(() => base);
    const a1 = cache.get('a', 1, load);
    expect(cache.get('a', 1, load)).toBe(a1);
    cache.get('b', 1, load);
    cache.get('a', 1, load);
    cache.get('c', 1, load);
    expect(load).toHaveBeenCalledTimes(3);
    cache.get('a', 1, load);
    expect(load).toHaveBeenCalledTimes(3);
    cache.get('b', 1, load);
    expect(load).toHaveBeenCalledTimes(4);
  });
});

describe('circuit admission and plans', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const snap = { enabled: true, state: 'closed' as const, openUntil: null, trialStartedAt: null, cooldownSeconds: 60 };
  it('admits when closed or disabled, rejects while open, offers a trial after the cooldown', () => {
    expect(admission(snap, now)).toEqual({ kind: 'admit' });
    expect(admission({ ...snap, enabled: false, state: 'open', openUntil: new Date(now.getTime() + 1000) }, now)).toEqual({ kind: 'admit' });
    expect(admission({ ...snap, state: 'open', openUntil: new Date(now.getTime() + 30_500) }, now)).toEqual({ kind: 'reject', retryAfterSeconds: 31 });
    expect(admission({ ...snap, state: 'open', openUntil: new Date(now.getTime() - 1) }, now)).toEqual({ kind: 'try_trial' });
    expect(admission({ ...snap, state: 'half_open', trialStartedAt: new Date(now.getTime() - 1000) }, now)).toMatchObject({ kind: 'reject' });
    expect(admission({ ...snap, state: 'half_open', trialStartedAt: new Date(now.getTime() - 61_000) }, now)).toEqual({ kind: 'try_trial' });
  });

  it('maps plans, unknown names to Free', () => {
    expect(flowPlan('free')).toMatchObject({ maxGates: 3, runsPerMonth: 500, contentLimitChars: 50_000, hardRunCap: true });
    expect(flowPlan('scale')).toMatchObject({ maxGates: null, contentLimitChars: 500_000, hardRunCap: false });
    expect(flowPlan('platinum')).toBe(flowPlan('free'));
  });
});
