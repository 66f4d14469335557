import { bucketKey, bucketStarts, fillBuckets, percentOf, periodWindow, truncateUtc } from '../../../domain/flow/analytics-periods';
import { CREDIT_PACKS, DOCUMENT_ADD_ONS, overageCostUsd, planId } from '../../../domain/flow/plan-catalogue';

const at = (iso: string) => new Date(iso);
const keys = (starts: Date[]) => starts.map(bucketKey);

describe('Flow analytics periods', () => {
  it('a period is the last N UTC days, today included, up to now', () => {
    const now = at('2025-03-05T10:30:00Z');
    expect(periodWindow('7d', now)).toEqual({ period: '7d', from: at('2025-02-27T00:00:00Z'), to: now });
    expect(periodWindow('30d', now).from).toEqual(at('2025-02-04T00:00:00Z'));
    expect(periodWindow('90d', now).from).toEqual(at('2024-12-06T00:00:00Z'));
  });

  it('truncates to the UTC day, the Monday of the ISO week, and the first of the month', () => {
    const d = at('2025-03-05T23:59:59Z'); // a Wednesday
    expect(truncateUtc(d, 'day')).toEqual(at('2025-03-05T00:00:00Z'));
    expect(truncateUtc(d, 'week')).toEqual(at('2025-03-03T00:00:00Z'));
    expect(truncateUtc(at('2025-03-09T12:00:00Z'), 'week')).toEqual(at('2025-03-03T00:00:00Z')); // Sunday
    expect(truncateUtc(at('2025-03-10T00:00:00Z'), 'week')).toEqual(at('2025-03-10T00:00:00Z')); // Monday
    expect(truncateUtc(d, 'month')).toEqual(at('2025-03-01T00:00:00Z'));
  });

  it('lists every bucket of the window: 7 days, weeks from the Monday, months across a year end', () => {
    const now = at('2025-03-05T10:30:00Z');
    expect(keys(bucketStarts(periodWindow('7d', now), 'day'))).toEqual([
      '2025-02-27', '2025-02-28', '2025-03-01', '2025-03-02', '2025-03-03', '2025-03-04', '2025-03-05',
    ]);
    expect(bucketStarts(periodWindow('30d', now), 'day')).toHaveLength(30);
    expect(keys(bucketStarts(periodWindow('30d', now), 'week'))).toEqual(['2025-02-03', '2025-02-10', '2025-02-17', '2025-02-24', '2025-03-03']);
    expect(keys(bucketStarts(periodWindow('90d', now), 'month'))).toEqual(['2024-12-01', '2025-01-01', '2025-02-01', '2025-03-01']);
  });

  it('fills missing buckets with empty values, in order', () => {
    const starts = bucketStarts({ from: at('2025-03-01T00:00:00Z'), to: at('2025-03-03T08:00:00Z') }, 'day');
    const rows = new Map([['2025-03-02', { runs: 4 }]]);
    expect(fillBuckets(starts, rows, () => ({ runs: 0 }))).toEqual([
      { start: '2025-03-01', runs: 0 },
      { start: '2025-03-02', runs: 4 },
      { start: '2025-03-03', runs: 0 },
    ]);
  });

  it('rates are percentages with 2 decimals, as the document analytics give them, and null without a denominator', () => {
    expect(percentOf(1, 3)).toBe(33.33);
    expect(percentOf(4, 7)).toBe(57.14);
    expect(percentOf(2, 2)).toBe(100);
    expect(percentOf(0, 0)).toBeNull();
  });
});

describe('Flow plan catalogue', () => {
  it('bills overage exactly, rounded to the cent; no overage price, no cost', () => {
    expect(overageCostUsd(3, 0.005)).toBe(0.02);
    expect(overageCostUsd(1000, 0.004)).toBe(4);
    expect(overageCostUsd(7, 0.002)).toBe(0.01);
    expect(overageCostUsd(0, 0.005)).toBe(0);
    expect(overageCostUsd(100, null)).toBe(0);
  });

  it('reads an unknown plan as Free', () => {
    expect(planId('growth')).toBe('growth');
    expect(planId('enterprise')).toBe('free');
    expect(planId(null)).toBe('free');
  });

  it('holds the spec packs (Limits 8 and 9)', () => {
    expect(CREDIT_PACKS.map((p) => [p.documents, p.priceUsd])).toEqual([[100, 15], [500, 50], [1000, 90], [2500, 200]]);
    expect(DOCUMENT_ADD_ONS.map((a) => [a.documentsPerMonth, a.priceUsdPerMonth])).toEqual([[500, 19], [2000, 49], [10000, 119]]);
  });
});
