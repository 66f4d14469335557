/** Dates as the reviewer reads them: in the browser's own time zone, which the page names. */

const dateTime = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
// A calendar date (`2026-11-29`) is a day, not an instant: shown as written, in no zone.
const dateOnly = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' });

/** The browser's zone, e.g. "Europe/Paris". */
export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

export function localDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

function localDate(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? day : dateOnly.format(d);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** A string the schema says is a date or date-time, or that is written as one, in the reader's terms; otherwise undefined. */
export function asDate(value: string, format?: string): string | undefined {
  if (format === 'date' || (!format && DATE.test(value))) return DATE.test(value) ? localDate(value) : undefined;
  if (format === 'date-time' || (!format && DATE_TIME.test(value))) return DATE_TIME.test(value) ? localDateTime(value) : undefined;
  return undefined;
}
