import { AppError } from '../../../domain/errors';
import { checkParameterDefs, coerceParameters, type ParameterDef } from '../../../domain/reporting/parameters';

const clock = { now: new Date('2026-03-01T02:30:00Z'), timezone: 'America/New_York' };

function refusal(run: () => unknown): { code: string; field: unknown; message: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, field: err.relatedInfo?.field, message: err.message };
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('coerceParameters', () => {
  const defs: ParameterDef[] = [
    { name: 'label', type: 'string' },
    { name: 'ratio', type: 'number' },
    { name: 'count', type: 'integer', default: 10 },
    { name: 'active', type: 'boolean' },
    { name: 'from', type: 'date', required: true },
    { name: 'until', type: 'datetime' },
    { name: 'ids', type: 'integer', multiple: true },
    { name: 'status', type: 'string', options: ['open', 'closed'] },
  ];

  it('turns the input into typed values, with defaults and the built-ins in the run zone', () => {
    const values = coerceParameters(
      defs,
      { label: 'a', ratio: '2.5', active: 'false', from: '2026-02-28', until: '2026-03-01T10:00:00+01:00', ids: ['3', 4], status: 'open' },
      clock,
    );
    expect(values).toEqual({
      label: 'a',
      ratio: 2.5,
      count: 10,
      active: false,
      from: '2026-02-28',
      until: new Date('2026-03-01T09:00:00Z'),
      ids: [3, 4],
      status: 'open',
      now: clock.now,
      // 02:30 UTC on 1 March is still 28 February in New York.
      today: '2026-02-28',
      scheduledFor: clock.now,
    });
    expect(coerceParameters(defs, { from: '2026-01-01' }, { ...clock, timezone: 'Asia/Tokyo', scheduledFor: new Date(0) })).toMatchObject({
      label: null,
      ids: null,
      today: '2026-03-01',
      scheduledFor: new Date(0),
    });
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a missing required value', {}, 'from'],
    ['a null required value', { from: null }, 'from'],
    ['a number for a string', { from: '2026-01-01', label: 5 }, 'label'],
    ['a non-numeric string for a number', { from: '2026-01-01', ratio: '12abc' }, 'ratio'],
    ['a fraction for an integer', { from: '2026-01-01', count: 1.5 }, 'count'],
    ['an unsafe integer', { from: '2026-01-01', count: 2 ** 60 }, 'count'],
    ['a word for a boolean', { from: '2026-01-01', active: 'yes' }, 'active'],
    ['a date that does not exist', { from: '2026-02-30' }, 'from'],
    ['a date-time without a zone', { from: '2026-01-01', until: '2026-03-01T10:00:00' }, 'until'],
    ['a scalar for a list', { from: '2026-01-01', ids: 3 }, 'ids'],
    ['a bad item of a list', { from: '2026-01-01', ids: [1, 'x'] }, 'ids[1]'],
    ['a value outside the options', { from: '2026-01-01', status: 'lost' }, 'status'],
    ['an unknown name', { from: '2026-01-01', other: 1 }, 'other'],
    ['a built-in name', { from: '2026-01-01', today: '2020-01-01' }, 'today'],
  ];
  it.each(bad)('refuses %s with ERR_RPT_007 naming the field', (_what, input, field) => {
    const r = refusal(() => coerceParameters(defs, input, clock));
    expect(r.code).toBe('ERR_RPT_007');
    expect(r.field).toBe(field);
  });

  it('refuses an empty list for a required multiple parameter and keeps it for an optional one', () => {
    const lists: ParameterDef[] = [{ name: 'ids', type: 'integer', multiple: true, required: true }];
    expect(refusal(() => coerceParameters(lists, { ids: [] }, clock)).field).toBe('ids');
    expect(coerceParameters([{ ...lists[0], required: false }], { ids: [] }, clock).ids).toEqual([]);
  });

  it('refuses an unknown time zone', () => {
    expect(refusal(() => coerceParameters(defs, { from: '2026-01-01' }, { ...clock, timezone: 'Mars/Base' })).field).toBe('timezone');
  });
});

describe('checkParameterDefs', () => {
  it('accepts good definitions', () => {
    expect(
      checkParameterDefs([
        { name: 'from', type: 'date', default: '2026-01-01' },
        { name: 'status', type: 'string', options: ['a', 'b'], default: 'a', multiple: false },
        { name: 'ids', type: 'integer', multiple: true, default: [1, 2] },
      ]),
    ).toEqual([]);
  });

  it('names every problem by its path', () => {
    const issues = checkParameterDefs([
      { name: '1st', type: 'string' },
      { name: 'now', type: 'datetime' },
      { name: 'a', type: 'string' },
      { name: 'a', type: 'string' },
      { name: 'b', type: 'money' as never },
      { name: 'c', type: 'integer', options: [1, 'two'] },
      { name: 'd', type: 'date', default: 'tomorrow' },
    ]);
    expect(issues.map((i) => i.path)).toEqual([
      'parameters[0].name',
      'parameters[1].name',
      'parameters[3].name',
      'parameters[4].type',
      'parameters[5].options[1]',
      'parameters[6].default',
    ]);
    expect(issues.every((i) => i.code === 'INVALID_PARAMETER')).toBe(true);
  });

  it('allows at most 50', () => {
    const many = Array.from({ length: 51 }, (_, i): ParameterDef => ({ name: `p${i}`, type: 'string' }));
    expect(checkParameterDefs(many).map((i) => i.path)).toEqual(['parameters']);
    expect(checkParameterDefs(many.slice(0, 50))).toEqual([]);
  });
});
