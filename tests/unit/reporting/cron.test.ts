import { checkSchedule, nextFireTimes, occurrenceKey, parseCron, shortestIntervalMinutes } from '../../../domain/reporting/cron';
import { cpuMsOf } from '../../support/cpu-time';

const now = new Date('2026-01-10T12:00:00Z');
const check = (cron: unknown, timezone: unknown = 'UTC', minIntervalMinutes = 5) => checkSchedule(cron, timezone, { minIntervalMinutes, now });
const codes = (cron: unknown, timezone: unknown = 'UTC') => check(cron, timezone).errors.map((e) => e.code);

describe('cron expressions of schedules', () => {
  it('reads numbers, names, ranges, lists, steps and the @ macros', () => {
    expect(parseCron('30 7 * * MON-FRI').cron).toMatchObject({ minutes: [30], hours: [7], daysOfWeek: [1, 2, 3, 4, 5], dowRestricted: true, domRestricted: false });
    expect(parseCron('*/15 0-6/2 1,15 JAN,jul *').cron).toMatchObject({ minutes: [0, 15, 30, 45], hours: [0, 2, 4, 6], daysOfMonth: [1, 15], months: [1, 7] });
    expect(parseCron('@daily').cron).toMatchObject({ minutes: [0], hours: [0] });
    expect(parseCron('@weekly').cron).toMatchObject({ daysOfWeek: [0] });
    for (const macro of ['@hourly', '@monthly', '@yearly']) expect(parseCron(macro).errors).toEqual([]);
  });

  it('refuses what Temporal reads differently from cron, with a code per problem', () => {
    expect(codes('0 7 * *')).toEqual(['FIELD_COUNT']);
    expect(codes('0 0 7 * * *')).toEqual(['FIELD_COUNT']);
    expect(codes('0 0 7 * * * 2026')).toEqual(['FIELD_COUNT']);
    expect(codes('0 7 L * *')).toEqual(['UNSUPPORTED']);
    expect(codes('0 7 15W * *')).toEqual(['UNSUPPORTED']);
    expect(codes('0 7 * * 5L')).toEqual(['UNSUPPORTED']);
    expect(codes('0 7 * * MON#2')).toEqual(['UNSUPPORTED']);
    expect(codes('0 7 ? * MON')).toEqual(['UNSUPPORTED']);
    expect(codes('CRON_TZ=Europe/Berlin 0 7 * * *')).toEqual(['TZ_PREFIX']);
    expect(codes('TZ=UTC 0 7 * * *')).toEqual(['TZ_PREFIX']);
    expect(codes('@every 5m')).toEqual(['UNKNOWN_MACRO']);
    expect(codes('0 7 * * 7')).toEqual(['OUT_OF_RANGE']);
    expect(codes('60 7 * * *')).toEqual(['OUT_OF_RANGE']);
    expect(codes('0 7 * 13 *')).toEqual(['OUT_OF_RANGE']);
    expect(codes('0 7 5-1 * *')).toEqual(['BAD_RANGE']);
    expect(codes('5/15 * * * *')).toEqual(['BAD_VALUE']);
    expect(codes('0 7 * * FOO')).toEqual(['BAD_VALUE']);
    expect(codes('0 7 31 2 *')).toEqual(['NEVER_FIRES']);
  });

  it('refuses day-of-month and day-of-week both restricted, and says why', () => {
    const result = check('0 7 1 * MON');
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([{ path: 'cron', code: 'DOM_AND_DOW', message: expect.stringMatching(/OR.*AND/) }]);
  });

  it('checks the zone: IANA names only', () => {
    expect(check('0 7 * * *', 'Europe/Berlin').timezone).toBe('Europe/Berlin');
    expect(check('0 7 * * *', 'europe/berlin').timezone).toBe('Europe/Berlin');
    expect(codes('0 7 * * *', 'Mars/Olympus')).toEqual(['UNKNOWN_TIME_ZONE']);
    expect(codes('0 7 * * *', '+01:00')).toEqual(['UNKNOWN_TIME_ZONE']);
    expect(codes('0 7 * * *', 'x'.repeat(10_000))).toEqual(['UNKNOWN_TIME_ZONE']);
    expect(codes('0 7 * * *', 42)).toEqual(['UNKNOWN_TIME_ZONE']);
    expect(codes('0 7 L * *', 'Nowhere/Land')).toEqual(['UNKNOWN_TIME_ZONE', 'UNSUPPORTED']);
  });

  it('measures the shortest interval, across midnight only when two days in a row fire', () => {
    const interval = (cron: string) => shortestIntervalMinutes(parseCron(cron).cron!);
    expect(interval('* * * * *')).toBe(1);
    expect(interval('*/10 * * * *')).toBe(10);
    expect(interval('0 7 * * *')).toBe(1440);
    expect(interval('0 0,23 * * *')).toBe(60);
    expect(interval('0 0,22 * * MON')).toBe(22 * 60);
    expect(interval('59 23 * * *')).toBe(1440);
    const tooFrequent = check('*/2 * * * *');
    expect(tooFrequent).toMatchObject({ valid: false, errors: [{ code: 'TOO_FREQUENT' }], tooFrequent: { shortestMinutes: 2, minIntervalMinutes: 5 } });
    expect(check('* * * * *', 'UTC', 0).valid).toBe(true);
  });

  it('warns of daylight-saving gaps and overlaps in the zone, and of none in UTC', () => {
    const berlin = check('30 2 * * *', 'Europe/Berlin');
    expect(berlin.valid).toBe(true);
    expect(berlin.warnings.map((w) => [w.code, w.dates[0]])).toEqual([
      ['DST_GAP', '2026-03-29'],
      ['DST_OVERLAP', '2026-10-25'],
    ]);
    expect(berlin.warnings[0].message).toContain('02:30 does not exist on 2026-03-29');
    expect(berlin.warnings[1].message).toContain('the second is recorded as skipped');
    expect(check('30 2 * * *', 'UTC').warnings).toEqual([]);
    expect(check('30 7 * * *', 'Europe/Berlin').warnings).toEqual([]);
    // Only Sundays: the March change is on a Sunday, so it is reported.
    expect(check('30 2 * * SUN', 'Europe/Berlin').warnings.map((w) => w.code)).toEqual(['DST_GAP', 'DST_OVERLAP']);
    expect(check('30 2 * * MON', 'Europe/Berlin').warnings).toEqual([]);
    // New York moves at 02:00 local: 02:30 missing in March, 01:30 twice in November.
    expect(check('30 1 * * *', 'America/New_York').warnings.map((w) => w.code)).toEqual(['DST_OVERLAP']);
    expect(check('30 2 * * *', 'America/New_York').warnings.map((w) => w.code)).toEqual(['DST_GAP']);
  });

  it('describes the expression in a line', () => {
    expect(check('30 7 * * MON-FRI', 'Europe/Berlin').description).toBe('At 07:30 on Monday–Friday (Europe/Berlin)');
    expect(check('* * * * *', 'UTC', 0).description).toBe('Every minute (UTC)');
    expect(check('*/15 * * * *').description).toBe('Every 15 minutes (UTC)');
    expect(check('0 6 1 * *').description).toBe('At 06:00 on day 1 of the month (UTC)');
    expect(check('@hourly').description).toBe('At minute 0 of every hour (UTC)');
    expect(check('0 9 * JAN,JUL *').description).toBe('At 09:00 in January, July (UTC)');
  });

  it('keys an occurrence by its local wall-clock minute and zone, the same for both fires of a repeated hour', () => {
    expect(occurrenceKey(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30 Europe/Berlin');
    expect(occurrenceKey(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30 Europe/Berlin');
    expect(occurrenceKey(new Date('2026-07-01T05:30:59.999Z'), 'UTC')).toBe('2026-07-01T05:30 UTC');
  });

  describe('hostile input', () => {
    it('refuses long expressions before parsing them', () => {
      const { cpuMs } = cpuMsOf(() => {
        expect(codes('*/1,'.repeat(2500) + ' * * * *')).toEqual(['TOO_LONG']);
        expect(codes('0 '.repeat(5000))).toEqual(['TOO_LONG']);
      });
      expect(cpuMs).toBeLessThan(1000);
    });

    it('refuses zero, huge and odd steps, long item lists and junk', () => {
      expect(codes('*/0 * * * *')).toEqual(['BAD_STEP']);
      expect(codes('*/61 * * * *')).toEqual(['BAD_STEP']);
      expect(codes('*/999999999999 * * * *')).toEqual(['BAD_STEP']);
      expect(codes('*/-1 * * * *')).toEqual(['BAD_STEP']);
      expect(codes('1/2/3 * * * *')).toEqual(['BAD_VALUE']);
      expect(codes(Array.from({ length: 61 }, () => '1').join(',') + ' * * * *')).toEqual(['TOO_MANY_ITEMS']);
      expect(codes('1,,2 * * * *')).toEqual(['BAD_VALUE']);
      expect(codes('0x1 * * * *')).toEqual(['BAD_VALUE']);
      expect(codes('1e1 * * * *')).toEqual(['BAD_VALUE']);
      expect(codes('0 7 * * *; rm -rf /')).toEqual(['FIELD_COUNT']);
      expect(codes('constructor * * * *')).toEqual(['BAD_VALUE']);
      expect(codes('0 7 * __proto__ *')).toEqual(['BAD_VALUE']);
      expect(codes(null)).toEqual(['BAD_VALUE']);
      expect(codes({ toString: () => '* * * * *' })).toEqual(['BAD_VALUE']);
    });

    it('checks the widest valid expression in a zone with changes quickly', () => {
      const { result, cpuMs } = cpuMsOf(() => check('* * * * *', 'Europe/Berlin', 0));
      expect(result.warnings.map((w) => w.code)).toEqual(['DST_GAP', 'DST_OVERLAP']);
      expect(cpuMs).toBeLessThan(2000);
    });

    it('lists the next fire times of the rarest and the busiest expressions quickly (the check answers them unsaved)', () => {
      const { result, cpuMs } = cpuMsOf(() => [nextFireTimes('0 0 29 2 *', 'Europe/Berlin', now, 20), nextFireTimes('* * * * *', 'Europe/Berlin', now, 20), nextFireTimes('59 23 31 12 *', 'Pacific/Kiritimati', now, 20)]);
      expect(result.map((times) => times.length)).toEqual([2, 20, 8]);
      expect(cpuMs).toBeLessThan(1000);
    });
  });

  it('lists the next fire times in the zone: weekdays in Berlin, a daylight-saving gap skipped and an overlap once', () => {
    const iso = (dates: Date[]) => dates.map((d) => d.toISOString());
    // Saturday 10 January 2026, 12:00 UTC (13:00 in Berlin): the next weekday mornings at 07:30 CET.
    expect(iso(nextFireTimes('30 7 * * MON-FRI', 'Europe/Berlin', now, 5))).toEqual(['2026-01-12T06:30:00.000Z', '2026-01-13T06:30:00.000Z', '2026-01-14T06:30:00.000Z', '2026-01-15T06:30:00.000Z', '2026-01-16T06:30:00.000Z']);
    // Later today still counts; earlier today does not.
    expect(iso(nextFireTimes('0 14,9 * * *', 'Europe/Berlin', now, 2))).toEqual(['2026-01-10T13:00:00.000Z', '2026-01-11T08:00:00.000Z']);
    // 02:30 does not exist on 29 March 2026 in Berlin (no fire that day) and happens twice on 25 October (listed once).
    expect(iso(nextFireTimes('30 2 * * *', 'Europe/Berlin', new Date('2026-03-27T12:00:00Z'), 3))).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    expect(iso(nextFireTimes('30 2 * * *', 'Europe/Berlin', new Date('2026-10-24T12:00:00Z'), 2))).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    // Monthly in Tokyo, the @ macros, rare dates and refused expressions.
    expect(iso(nextFireTimes('0 9 1 * *', 'Asia/Tokyo', now, 2))).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(iso(nextFireTimes('@yearly', 'UTC', now, 1))).toEqual(['2027-01-01T00:00:00.000Z']);
    expect(iso(nextFireTimes('0 0 29 2 *', 'UTC', now, 5))).toEqual(['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
    expect(nextFireTimes('0 7 * * 7', 'UTC', now, 5)).toEqual([]);
    expect(nextFireTimes('0 7 * * *', 'Mars/Olympus', now, 5)).toEqual([]);
  });
});
