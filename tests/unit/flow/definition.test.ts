import { AppError } from '../../../domain/errors';
import { assertValidDefinition, definitionProblems } from '../../../domain/flow/definition-check';
import { CompiledGateCache } from '../../../domain/flow/gate-cache';
import type { GateValidationDefinition } from '../../../domain/flow/gate.types';
import { admission } from '../../../domain/flow/circuit-breaker';
import { compileSafeRegex, staticRisk } from '../../../domain/flow/safe-regex';
import { flowPlan } from '../../../domain/flow/plans';

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
      assertValidDefinition(withSchema({ x: { type: 'wat' } }));
      throw new Error('not thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('FLOW.GATE_VALIDATION_FAILED');
      expect((err as AppError).status).toBe(422);
      expect((err as AppError).relatedInfo?.details).toEqual([expect.objectContaining({ field: 'schema.properties.x.type' })]);
    }
  });
});

describe('safe regex', () => {
  it('runs a catastrophic-looking but linear-engine-safe pattern quickly, refuses what cannot be made safe', () => {
    expect(compileSafeRegex('x'.repeat(600))).toMatchObject({ ok: false });
    expect(compileSafeRegex('(a)\\1')).toMatchObject({ ok: false });
    // The classic ReDoS pattern is harmless on the linear engine: 100,000 characters in well under a second.
    const classic = compileSafeRegex('^(a+)+$');
    if (classic.ok) {
      const start = Date.now();
      expect(classic.regex.test(`${'a'.repeat(100_000)}b`)).toBe(false);
      expect(Date.now() - start).toBeLessThan(1000);
    }
    const ok = compileSafeRegex('^[a-z]+@[a-z]+\\.[a-z]{2,6}$');
    expect(ok.ok && ok.regex.test('ada@example.org')).toBe(true);
    const lookahead = compileSafeRegex('^(?=.*\\d).{8,}$');
    expect(lookahead.ok && lookahead.regex.test('abcdefg1')).toBe(true);
  });

  it('static check flags nested repetition and quantified alternation', () => {
    expect(staticRisk('^(a+)+$')).toBeDefined();
    expect(staticRisk('(a|ab)*c')).toBeDefined();
    expect(staticRisk('^(\\d{3}-)?\\d{4}$')).toBeUndefined();
    expect(staticRisk('[(a+)+]')).toBeUndefined();
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
