import type { Format } from './gate.types';

/**
 * The five `format` checks of contract §5. Each is a linear scan (fixed, non-nested patterns), so
 * they are safe on any input; none of them resolves or fetches anything.
 */

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1];
}

function isEmail(v: string): boolean {
  return v.length <= 254 && EMAIL.test(v);
}

/** Absolute http(s) URL with a host. */
function isUrl(v: string): boolean {
  if (v.length > 2048) return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/** ISO 8601 calendar date `YYYY-MM-DD` that exists (no 2023-02-29). */
function isDate(v: string): boolean {
  const m = DATE.exec(v);
  return !!m && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** RFC 3339 date-time with a zone (`2024-05-01T12:00:00Z`, `…+02:00`). */
function isDateTime(v: string): boolean {
  const m = DATE_TIME.exec(v);
  if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 60) return false;
  return m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
}

export const FORMAT_CHECKS: Record<Format, (v: string) => boolean> = {
  email: isEmail,
  url: isUrl,
  date: isDate,
  'date-time': isDateTime,
  uuid: (v) => UUID.test(v),
};

export const FORMAT_LABELS: Record<Format, string> = {
  email: 'an e-mail address',
  url: 'an absolute http(s) URL',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date-time with a time zone (RFC 3339)',
  uuid: 'a UUID',
};

/** Characters as a person counts them: code points, so an emoji is one, not two UTF-16 units. */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}
