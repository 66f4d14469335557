/**
 * The schedule form's cron builder (docs/web.md "Reporting: reports, schedules, runs, channels and
 * imports"): a preset with its fields, and the five-field expression it stands for, kept in sync both
 * ways. An expression no preset writes is `custom` and stays as typed.
 */
export type Preset = 'daily' | 'weekdays' | 'weekly' | 'monthly' | 'hourly' | 'custom';

export interface Builder {
  preset: Preset;
  /** `HH:MM` (daily, weekdays, weekly, monthly). */
  time: string;
  /** 0 (Sunday) to 6 (weekly). */
  dayOfWeek: number;
  /** 1 to 28 (monthly: every month has it). */
  dayOfMonth: number;
  /** 0 to 59 (hourly). */
  minute: number;
}

export const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export const PRESETS: Array<{ value: Preset; label: string }> = [
  { value: 'daily', label: 'Every day' },
  { value: 'weekdays', label: 'Weekdays' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'monthly', label: 'Monthly' },
  { value: 'hourly', label: 'Hourly' },
  { value: 'custom', label: 'Custom' },
];

export const DEFAULT_BUILDER: Builder = { preset: 'daily', time: '07:00', dayOfWeek: 1, dayOfMonth: 1, minute: 0 };

/** Hours and minutes of `HH:MM`; null while the time is being typed (`7`, `7:`, `7:3`). */
const hm = (time: string): [number, number] | null => {
  const m = /^(\d{1,2}):(\d{2})$/.exec(time);
  return m ? [Math.min(23, Number(m[1])), Math.min(59, Number(m[2]))] : null;
};

/**
 * The expression a preset writes; null for `custom` (the typed expression stands) and while the
 * time is incomplete (the expression written last stands, rather than midnight).
 */
export function cronOf(b: Builder): string | null {
  if (b.preset === 'hourly') return `${b.minute} * * * *`;
  const time = hm(b.time);
  if (!time) return null;
  const [h, m] = time;
  switch (b.preset) {
    case 'daily':
      return `${m} ${h} * * *`;
    case 'weekdays':
      return `${m} ${h} * * 1-5`;
    case 'weekly':
      return `${m} ${h} * * ${b.dayOfWeek}`;
    case 'monthly':
      return `${m} ${h} ${b.dayOfMonth} * *`;
    default:
      return null;
  }
}

const num = (s: string, min: number, max: number) => (/^\d{1,2}$/.test(s) && Number(s) >= min && Number(s) <= max ? Number(s) : null);
const pad = (n: number) => String(n).padStart(2, '0');
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const dayOf = (s: string) => num(s, 0, 6) ?? (DAY_NAMES.includes(s.toUpperCase()) ? DAY_NAMES.indexOf(s.toUpperCase()) : null);

/** The preset an expression is, with its fields (the rest kept from `base`); `custom` when no preset writes it. */
export function builderOf(cron: string, base: Builder): Builder {
  const f = cron.trim().split(/\s+/);
  const custom = { ...base, preset: 'custom' as const };
  if (f.length !== 5) return custom;
  const [mi, ho, dom, mon, dow] = f;
  const m = num(mi, 0, 59);
  if (m === null || mon !== '*') return custom;
  if (ho === '*' && dom === '*' && dow === '*') return { ...base, preset: 'hourly', minute: m };
  const h = num(ho, 0, 23);
  if (h === null) return custom;
  const time = `${pad(h)}:${pad(m)}`;
  if (dom === '*' && dow === '*') return { ...base, preset: 'daily', time };
  if (dom === '*' && /^(1-5|MON-FRI)$/i.test(dow)) return { ...base, preset: 'weekdays', time };
  const d = dayOf(dow);
  if (dom === '*' && d !== null) return { ...base, preset: 'weekly', time, dayOfWeek: d };
  const day = num(dom, 1, 28);
  if (dow === '*' && day !== null) return { ...base, preset: 'monthly', time, dayOfMonth: day };
  return custom;
}

/** Every IANA zone the browser knows, UTC first. */
export function timeZones(): string[] {
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...all.filter((z) => z !== 'UTC')];
}

/** The browser's own zone. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
