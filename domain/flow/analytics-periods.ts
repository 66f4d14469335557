/**
 * Period and bucket arithmetic of the Flow analytics endpoints (docs/flow.md, "Analytics"). Pure:
 * the SQL groups rows by the same UTC bucket keys these functions produce, so empty buckets can be
 * filled here and every chart gets one point per bucket.
 */

export const PERIOD_DAYS = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type Period = keyof typeof PERIOD_DAYS;
export const PERIODS = Object.keys(PERIOD_DAYS) as Period[];

export const GRANULARITIES = ['day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export interface PeriodWindow {
  period: Period;
  from: Date;
  to: Date;
}

const DAY_MS = 86_400_000;

/**
 * The last N UTC calendar days, today included, up to `now`. Whole days rather than a rolling
 * N×24 h so the first day bucket is complete and `7d` always answers exactly 7 day buckets.
 */
export function periodWindow(period: Period, now: Date): PeriodWindow {
  const today = truncateUtc(now, 'day');
  return { period, from: new Date(today.getTime() - (PERIOD_DAYS[period] - 1) * DAY_MS), to: now };
}

/** Start of the UTC day, ISO week (Monday, as Postgres' date_trunc('week')) or month of `d`. */
export function truncateUtc(d: Date, granularity: Granularity): Date {
  const day = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  if (granularity === 'day') return day;
  if (granularity === 'month') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * DAY_MS);
}

function nextBucket(start: Date, granularity: Granularity): Date {
  if (granularity === 'day') return new Date(start.getTime() + DAY_MS);
  if (granularity === 'week') return new Date(start.getTime() + 7 * DAY_MS);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/**
 * Every bucket start from the one holding `from` to the one holding `to`. The first week or month
 * bucket may start before `from`; it still counts only rows inside the window.
 */
export function bucketStarts(window: Pick<PeriodWindow, 'from' | 'to'>, granularity: Granularity): Date[] {
  const starts: Date[] = [];
  for (let s = truncateUtc(window.from, granularity); s.getTime() <= window.to.getTime(); s = nextBucket(s, granularity)) starts.push(s);
  return starts;
}

/** The key a bucket is reported and matched by: its UTC start date, `YYYY-MM-DD` (SQL: to_char(…, 'YYYY-MM-DD')). */
export function bucketKey(start: Date): string {
  return start.toISOString().slice(0, 10);
}

/** One entry per bucket start, in order; buckets without a row get `empty()`. */
export function fillBuckets<T extends object>(starts: Date[], rows: Map<string, T>, empty: () => T): Array<{ start: string } & T> {
  return starts.map((s) => {
    const key = bucketKey(s);
    return { start: key, ...(rows.get(key) ?? empty()) };
  });
}

/**
 * `part / whole` as a percentage (0–100) with two decimals, as the spec's `successRate` and the
 * document and template analytics give rates (domain/documents/analytics.ts); null when there is
 * nothing to divide by.
 */
export function percentOf(part: number, whole: number): number | null {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 100 : null;
}
