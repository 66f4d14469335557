import { normalizeTimeZone } from '../identity/time-zones';

/**
 * Cron expressions of report schedules (docs/reporting.md "Scheduling", "Cron rules"). Pure. The
 * grammar is ours and narrower than Temporal's: only what Vixie cron and Temporal read alike is
 * accepted, so a schedule fires when its author expects. Temporal then computes the fire times
 * itself (the schedule's `nextRunTimes`); this module only checks the expression, the zone, the
 * shortest interval and the days the zone's daylight-saving changes make a time vanish or repeat.
 */

/** Longer expressions are refused before any parsing (no valid five-field cron comes near it). */
const CRON_MAX_LENGTH = 200;
/** Items of one comma-separated field. */
const MAX_ITEMS = 60;
/** Days checked for daylight-saving gaps and overlaps. */
const DST_HORIZON_DAYS = 400;
/** Calendar days checked for "never fires" and back-to-back days: four years, one of them leap. */
const CALENDAR_DAYS = 4 * 365 + 1;

export interface CronProblem {
  path: 'cron' | 'timezone';
  code: string;
  message: string;
}

export interface CronWarning {
  code: 'DST_GAP' | 'DST_OVERLAP';
  message: string;
  /** Local dates (YYYY-MM-DD) it happens on within the next 400 days, at most 3. */
  dates: string[];
}

export interface ParsedCron {
  minutes: number[];
  hours: number[];
  daysOfMonth: number[];
  months: number[];
  daysOfWeek: number[];
  /** Whether the field was not `*`: Temporal ANDs the day fields, so both restricted is refused. */
  domRestricted: boolean;
  dowRestricted: boolean;
}

const MACROS: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const DAY_LABELS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_LABELS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** The first name's value (months start at 1, days at 0). */
  nameBase?: number;
}

const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  // 7 (Sunday in Vixie cron) is refused: 0 or SUN says the same in every reader.
  { name: 'day-of-week', min: 0, max: 6, names: DAY_NAMES, nameBase: 0 },
];

class FieldError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const UNSUPPORTED = (field: string) => `The ${field} field uses L, W, # or ?, which Temporal schedules do not read like cron: not accepted`;

function value(spec: FieldSpec, token: string): number {
  const upper = token.toUpperCase();
  if (/^(\d{0,2}[LW]|LW)$/.test(upper)) throw new FieldError('UNSUPPORTED', UNSUPPORTED(spec.name));
  if (spec.names && /^[A-Z]{3}$/.test(upper)) {
    const i = spec.names.indexOf(upper);
    if (i < 0) throw new FieldError('BAD_VALUE', `'${token}' is not a ${spec.name} name`);
    return i + (spec.nameBase ?? 0);
  }
  if (!/^\d{1,2}$/.test(token)) throw new FieldError('BAD_VALUE', `'${token.slice(0, 20)}' is not a ${spec.name} value`);
  const n = Number(token);
  if (n < spec.min || n > spec.max) {
    const hint = spec.name === 'day-of-week' && n === 7 ? ' (write 0 or SUN for Sunday)' : '';
    throw new FieldError('OUT_OF_RANGE', `${spec.name} ${n} is outside ${spec.min}-${spec.max}${hint}`);
  }
  return n;
}

/** One field's values, sorted; `*` and its steps included. */
function parseField(spec: FieldSpec, text: string): { values: number[]; restricted: boolean } {
  const items = text.split(',');
  if (items.length > MAX_ITEMS) throw new FieldError('TOO_MANY_ITEMS', `The ${spec.name} field lists more than ${MAX_ITEMS} items`);
  const set = new Set<number>();
  for (const item of items) {
    if (item === '') throw new FieldError('BAD_VALUE', `The ${spec.name} field has an empty item`);
    const [range, step, extra] = item.split('/');
    if (extra !== undefined) throw new FieldError('BAD_VALUE', `'${item.slice(0, 20)}' has more than one '/'`);
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = spec.min;
      hi = spec.max;
    } else if (range.includes('-')) {
      const [a, b, more] = range.split('-');
      if (more !== undefined || a === '' || b === '') throw new FieldError('BAD_VALUE', `'${item.slice(0, 20)}' is not a range`);
      lo = value(spec, a);
      hi = value(spec, b);
      if (lo > hi) throw new FieldError('BAD_RANGE', `The ${spec.name} range ${a}-${b} runs backwards`);
    } else {
      // `5/15` means 5-max/15 in some crons and is an error in others: spelled out instead.
      if (step !== undefined) throw new FieldError('BAD_VALUE', `'${item.slice(0, 20)}': a step needs '*' or a range (write ${range}-${spec.max}/${step.slice(0, 5)})`);
      lo = hi = value(spec, range);
    }
    let by = 1;
    if (step !== undefined) {
      if (!/^\d{1,2}$/.test(step)) throw new FieldError('BAD_STEP', `'${step.slice(0, 20)}' is not a step`);
      by = Number(step);
      if (by < 1 || by > spec.max - spec.min + 1) throw new FieldError('BAD_STEP', `The ${spec.name} step must be 1-${spec.max - spec.min + 1}`);
    }
    for (let n = lo; n <= hi; n += by) set.add(n);
  }
  return { values: [...set].sort((a, b) => a - b), restricted: text !== '*' };
}

/** The expression's fields, or the problems that refuse it (ERR_SCHED_002's `relatedInfo.errors`). */
export function parseCron(expression: unknown): { cron?: ParsedCron; errors: CronProblem[] } {
  const fail = (code: string, message: string) => ({ errors: [{ path: 'cron' as const, code, message }] });
  if (typeof expression !== 'string') return fail('BAD_VALUE', 'The cron expression must be a string');
  if (expression.length > CRON_MAX_LENGTH) return fail('TOO_LONG', `The cron expression is longer than ${CRON_MAX_LENGTH} characters`);
  const trimmed = expression.trim();
  if (/^(CRON_)?TZ=/i.test(trimmed)) return fail('TZ_PREFIX', 'A CRON_TZ= or TZ= prefix is not accepted: give the zone in `timezone`');
  const text = trimmed.startsWith('@') ? MACROS[trimmed.toLowerCase()] : trimmed;
  if (text === undefined) return fail('UNKNOWN_MACRO', `'${trimmed.slice(0, 20)}' is not one of @hourly, @daily, @weekly, @monthly, @yearly`);
  const fields = text.split(/\s+/);
  if (fields.length !== 5) {
    return fail('FIELD_COUNT', `A cron expression has exactly five fields (minute hour day-of-month month day-of-week); this one has ${fields.length}`);
  }
  const errors: CronProblem[] = [];
  const parsed: Array<{ values: number[]; restricted: boolean }> = [];
  fields.forEach((f, i) => {
    if (/[#?]/.test(f)) {
      errors.push({ path: 'cron', code: 'UNSUPPORTED', message: UNSUPPORTED(FIELDS[i].name) });
      return;
    }
    try {
      parsed.push(parseField(FIELDS[i], f));
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      errors.push({ path: 'cron', code: err.code, message: err.message });
    }
  });
  if (errors.length > 0) return { errors };
  const [minutes, hours, dom, months, dow] = parsed;
  if (dom.restricted && dow.restricted) {
    return fail(
      'DOM_AND_DOW',
      'Day-of-month and day-of-week are both restricted: classic cron runs on either (OR), Temporal only when both match (AND). Restrict one of them and leave the other *',
    );
  }
  return {
    cron: {
      minutes: minutes.values,
      hours: hours.values,
      daysOfMonth: dom.values,
      months: months.values,
      daysOfWeek: dow.values,
      domRestricted: dom.restricted,
      dowRestricted: dow.restricted,
    },
    errors: [],
  };
}

/** Whether the cron's day fields take a calendar date (Temporal's AND of day-of-month and day-of-week). */
function dayMatches(c: ParsedCron, year: number, month: number, day: number): boolean {
  if (!c.months.includes(month)) return false;
  if (!c.daysOfMonth.includes(day)) return false;
  return c.daysOfWeek.includes(new Date(Date.UTC(year, month - 1, day)).getUTCDay());
}

/** Minutes of the day the cron fires at, ascending. */
const dayMinutes = (c: ParsedCron): number[] => c.hours.flatMap((h) => c.minutes.map((m) => h * 60 + m));

/**
 * The shortest wall-clock time between two fire times, in minutes; null when it never fires (a
 * date that does not exist, such as 31 February). Back-to-back days count only when two consecutive
 * calendar days both match.
 */
export function shortestIntervalMinutes(c: ParsedCron): number | null {
  const start = Date.UTC(2024, 0, 1);
  let any = false;
  let consecutive = false;
  let previous = false;
  for (let i = 0; i < CALENDAR_DAYS; i++) {
    const d = new Date(start + i * 86_400_000);
    const match = dayMatches(c, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
    if (match && previous) consecutive = true;
    any ||= match;
    previous = match;
  }
  if (!any) return null;
  const times = dayMinutes(c);
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) shortest = Math.min(shortest, times[i] - times[i - 1]);
  if (consecutive) shortest = Math.min(shortest, times[0] + 1440 - times[times.length - 1]);
  return Number.isFinite(shortest) ? shortest : 7 * 1440;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in ms (local wall clock minus UTC). */
function offsetAt(zone: string, at: number): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(at))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - Math.floor(at / 1000) * 1000;
}

/** A local wall-clock minute as `YYYY-MM-DDTHH:mm` (the occurrence key's first part). */
function wallMinute(zone: string, at: Date): string {
  return new Date(at.getTime() - (at.getTime() % 60_000) + offsetAt(zone, at.getTime())).toISOString().slice(0, 16);
}

/**
 * The occurrence a scheduled start stands for: its local wall-clock minute and the zone
 * (`2026-10-25T02:30 Europe/Berlin`). The two fires of a repeated hour (clocks going back) share it,
 * so the unique index on runs records the second as a `skipped` duplicate.
 */
export function occurrenceKey(scheduledFor: Date, zone: string): string {
  return `${wallMinute(zone, scheduledFor)} ${zone}`;
}

const pad = (n: number) => String(n).padStart(2, '0');
const hhmm = (minuteOfDay: number) => `${pad(Math.floor(minuteOfDay / 60))}:${pad(minuteOfDay % 60)}`;

/**
 * The fire times that do not exist (clocks go forward: DST_GAP, Temporal does not fire) or happen
 * twice (clocks go back: DST_OVERLAP, the second becomes a `skipped` duplicate) in the zone within
 * the next 400 days.
 */
function dstWarnings(c: ParsedCron, zone: string, now: Date): CronWarning[] {
  const gaps: Array<{ date: string; time: string }> = [];
  const overlaps: Array<{ date: string; time: string }> = [];
  const today = new Date(now.getTime() + offsetAt(zone, now.getTime()));
  const first = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const times = dayMinutes(c);
  for (let i = 0; i <= DST_HORIZON_DAYS; i++) {
    const dayStart = first + i * 86_400_000;
    const d = new Date(dayStart);
    if (!dayMatches(c, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())) continue;
    // Offsets span -12 h..+14 h: these two instants lie before and after the whole local day.
    const before = offsetAt(zone, dayStart - 15 * 3_600_000);
    const after = offsetAt(zone, dayStart + 86_400_000 + 13 * 3_600_000);
    if (before === after) continue;
    const date = d.toISOString().slice(0, 10);
    for (const t of times) {
      const wall = dayStart + t * 60_000;
      const instants = new Set([before, after].filter((o) => offsetAt(zone, wall - o) === o).map((o) => wall - o));
      if (instants.size === 0) gaps.push({ date, time: hhmm(t) });
      else if (instants.size > 1) overlaps.push({ date, time: hhmm(t) });
    }
  }
  const warnings: CronWarning[] = [];
  const summary = (list: Array<{ date: string; time: string }>) => {
    const dates = [...new Set(list.map((x) => x.date))].slice(0, 3);
    const firstTimes = [...new Set(list.filter((x) => x.date === dates[0]).map((x) => x.time))];
    const shown = firstTimes.length > 3 ? `${firstTimes.slice(0, 3).join(', ')}, …` : firstTimes.join(', ');
    return { dates, shown };
  };
  if (gaps.length > 0) {
    const { dates, shown } = summary(gaps);
    warnings.push({
      code: 'DST_GAP',
      message: `${shown} does not exist on ${dates.join(', ')} in ${zone} (clocks go forward): the schedule does not run at that time on that day`,
      dates,
    });
  }
  if (overlaps.length > 0) {
    const { dates, shown } = summary(overlaps);
    warnings.push({
      code: 'DST_OVERLAP',
      message: `${shown} happens twice on ${dates.join(', ')} in ${zone} (clocks go back): the first runs, the second is recorded as skipped (duplicate_occurrence)`,
      dates,
    });
  }
  return warnings;
}

function listLabel(values: number[], labels: string[], offset: number, all: number): string {
  // Runs of consecutive values as "A–B" (Monday–Friday).
  const parts: string[] = [];
  for (let i = 0; i < values.length; i++) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j] + 1) j++;
    const from = labels[values[i] - offset];
    parts.push(j - i >= 2 ? `${from}–${labels[values[j] - offset]}` : j === i ? from : `${from}, ${labels[values[j] - offset]}`);
    i = j;
  }
  return values.length === all ? '' : parts.join(', ');
}

/** A short English reading of the expression ("At 07:30 on Monday–Friday (Europe/Berlin)"). */
function describeCron(expression: string, c: ParsedCron, zone: string): string {
  const fields = (MACROS[expression.trim().toLowerCase()] ?? expression.trim()).split(/\s+/);
  const [minuteField, hourField] = fields;
  let time: string;
  if (c.minutes.length === 60 && c.hours.length === 24) time = 'Every minute';
  else if (minuteField.startsWith('*/') && c.hours.length === 24) time = `Every ${minuteField.slice(2)} minutes`;
  else if (c.minutes.length === 1 && c.hours.length === 24) time = `At minute ${c.minutes[0]} of every hour`;
  else if (c.minutes.length === 1 && hourField.startsWith('*/')) time = `At minute ${c.minutes[0]} of every ${hourField.slice(2)} hours`;
  else if (c.minutes.length * c.hours.length <= 6) time = `At ${dayMinutes(c).map(hhmm).join(', ')}`;
  else time = `At minutes ${c.minutes.join(',')} past hours ${c.hours.join(',')}`;
  const parts = [time];
  if (c.dowRestricted) parts.push(`on ${listLabel(c.daysOfWeek, DAY_LABELS, 0, 7)}`);
  if (c.domRestricted) parts.push(`on day ${c.daysOfMonth.join(', ')} of the month`);
  const months = listLabel(c.months, MONTH_LABELS, 1, 12);
  if (months) parts.push(`in ${months}`);
  return `${parts.join(' ')} (${zone})`;
}

export interface ScheduleCheck {
  valid: boolean;
  errors: CronProblem[];
  warnings: CronWarning[];
  /** Empty when invalid. */
  description: string;
  /** The zone in its proper spelling. */
  timezone: string;
  /** Set when the only problem is the interval (ERR_SCHED_003 rather than ERR_SCHED_002). */
  tooFrequent?: { shortestMinutes: number; minIntervalMinutes: number };
}

/**
 * Everything a schedule's cron and zone are checked for: the grammar and the zone
 * (ERR_SCHED_002), the shortest interval against `minIntervalMinutes` (ERR_SCHED_003), and the
 * daylight-saving warnings of the next 400 days.
 */
export function checkSchedule(expression: unknown, timezone: unknown, opts: { minIntervalMinutes: number; now: Date }): ScheduleCheck {
  const errors: CronProblem[] = [];
  const zone = typeof timezone === 'string' && timezone.length <= 100 ? normalizeTimeZone(timezone) : undefined;
  if (!zone) errors.push({ path: 'timezone', code: 'UNKNOWN_TIME_ZONE', message: `'${String(timezone).slice(0, 100)}' is not an IANA time zone` });
  const { cron, errors: cronErrors } = parseCron(expression);
  errors.push(...cronErrors);
  if (cron) {
    const shortest = shortestIntervalMinutes(cron);
    if (shortest === null) errors.push({ path: 'cron', code: 'NEVER_FIRES', message: 'The expression names no date that exists (such as 31 February): it would never run' });
    else if (shortest < opts.minIntervalMinutes && errors.length === 0) {
      return {
        valid: false,
        errors: [{ path: 'cron', code: 'TOO_FREQUENT', message: `Two runs would be ${shortest} minutes apart; the minimum is ${opts.minIntervalMinutes}` }],
        warnings: [],
        description: '',
        timezone: zone!,
        tooFrequent: { shortestMinutes: shortest, minIntervalMinutes: opts.minIntervalMinutes },
      };
    }
  }
  if (errors.length > 0 || !cron || !zone) return { valid: false, errors, warnings: [], description: '', timezone: zone ?? String(timezone) };
  return { valid: true, errors: [], warnings: dstWarnings(cron, zone, opts.now), description: describeCron(expression as string, cron, zone), timezone: zone };
}

/** Days looked through for the next fire times: eight years, enough for two 29 Februaries. */
const NEXT_HORIZON_DAYS = 8 * 366;

/**
 * The next `count` fire times after `from` of a valid expression read as wall-clock time in `zone`,
 * as Temporal fires them (docs/reporting.md "Time zones and daylight saving"): a time the clocks skip
 * (DST_GAP) is not a fire time; a time they repeat (DST_OVERLAP) is listed once, at its first
 * instant (the second fire is recorded as a skipped duplicate). At most eight years ahead; empty for
 * an expression or zone the checks refuse.
 */
export function nextFireTimes(expression: unknown, zone: string, from: Date, count: number): Date[] {
  const { cron } = parseCron(expression);
  const name = normalizeTimeZone(zone);
  if (!cron || !name) return [];
  const found: Date[] = [];
  const today = new Date(from.getTime() + offsetAt(name, from.getTime()));
  const first = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const times = dayMinutes(cron);
  for (let i = 0; i <= NEXT_HORIZON_DAYS && found.length < count; i++) {
    const dayStart = first + i * 86_400_000;
    const d = new Date(dayStart);
    if (!dayMatches(cron, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())) continue;
    const before = offsetAt(name, dayStart - 15 * 3_600_000);
    const after = offsetAt(name, dayStart + 86_400_000 + 13 * 3_600_000);
    for (const t of times) {
      const wall = dayStart + t * 60_000;
      const instants = (before === after ? [wall - before] : [before, after].filter((o) => offsetAt(name, wall - o) === o).map((o) => wall - o)).sort((a, b) => a - b);
      const at = instants[0];
      if (at === undefined || at <= from.getTime()) continue;
      found.push(new Date(at));
      if (found.length === count) break;
    }
  }
  return found;
}
