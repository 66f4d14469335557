import { isUuid } from '../ids';
import type { Format } from './gate.types';

/**
 * The five `format` checks of contract §5. Each is a linear scan (fixed, non-nested patterns), so
 * they are safe on any input; none of them resolves or fetches anything.
 */

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= (m === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : DAYS_IN_MONTH[m - 1]);
}

/** The value of the `len` ASCII digits at `at`, or -1 when any of them is not one (or lies past the end). */
function digitsAt(v: string, at: number, len: number): number {
  let n = 0;
  for (let i = at; i < at + len; i += 1) {
    const c = v.charCodeAt(i) - 48;
    if (!(c >= 0 && c <= 9)) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** `YYYY-MM-DD` at the start of `v`, a date that exists. */
function dateAtStart(v: string): boolean {
  if (v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45) return false;
  const y = digitsAt(v, 0, 4);
  const m = digitsAt(v, 5, 2);
  const d = digitsAt(v, 8, 2);
  return y >= 0 && m >= 0 && d >= 0 && validDate(y, m, d);
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

/** ISO 8601 calendar date `YYYY-MM-DD` that exists (no 2023-02-29). A fixed-position scan, no regex. */
function isDate(v: string): boolean {
  return v.length === 10 && dateAtStart(v);
}

/**
 * RFC 3339 date-time with a zone (`2024-05-01T12:00:00Z`, `…+02:00`): `YYYY-MM-DD`, `T` or `t`,
 * `hh:mm:ss` (second 60 for a leap second), an optional fraction of 1 to 9 digits, then `Z`, `z` or
 * `±hh:mm`. A fixed-position scan, no regex.
 */
function isDateTime(v: string): boolean {
  const n = v.length;
  if (n < 20 || !dateAtStart(v)) return false;
  const t = v.charCodeAt(10);
  if ((t !== 84 && t !== 116) || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return false;
  const hh = digitsAt(v, 11, 2);
  const mm = digitsAt(v, 14, 2);
  const ss = digitsAt(v, 17, 2);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return false;
  let i = 19;
  if (v.charCodeAt(i) === 46) {
    const first = (i += 1);
    while (i < n && i - first < 9 && digitsAt(v, i, 1) >= 0) i += 1;
    if (i === first) return false;
  }
  const zone = v.charCodeAt(i);
  if (zone === 90 || zone === 122) return i + 1 === n;
  if ((zone !== 43 && zone !== 45) || i + 6 !== n || v.charCodeAt(i + 3) !== 58) return false;
  const zh = digitsAt(v, i + 1, 2);
  const zm = digitsAt(v, i + 4, 2);
  return zh >= 0 && zh <= 23 && zm >= 0 && zm <= 59;
}

export const FORMAT_CHECKS: Record<Format, (v: string) => boolean> = {
  email: isEmail,
  url: isUrl,
  date: isDate,
  'date-time': isDateTime,
  uuid: isUuid,
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
