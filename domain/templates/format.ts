import type { ColumnFormat } from './template.types';

/**
 * Value formatting shared by the HTML and Excel renderers, so a number looks the same in a PDF
 * table and keeps its type in the workbook.
 */

export interface FormatOptions {
  locale: string;
  currency: string;
}

export const DEFAULT_FORMAT_OPTIONS: FormatOptions = { locale: 'en-US', currency: 'USD' };

export type CellValue = string | number | boolean | Date | null;

// Both run over data values, so neither may have two repetitions that can match the same
// characters (`\d+\.?\d*` could, and took seconds on 100 KB of digits): each repeated part is
// followed by something it cannot match.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** ISO 8601 strings and Date objects; anything else is not a date (no locale-dependent parsing). */
export function toDate(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== 'string' || !ISO_DATE.test(value.trim())) return undefined;
  const text = value.trim();
  // A bare date means that calendar day everywhere: pin it to UTC midnight so no zone shifts it.
  const d = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && NUMERIC.test(value.trim())) return Number(value.trim());
  return undefined;
}

export function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => T): T {
  let f = formatters.get(key);
  if (!f) {
    f = make();
    formatters.set(key, f);
  }
  return f as T;
}

function numberFormat(kind: 'number' | 'currency' | 'percent', o: FormatOptions): Intl.NumberFormat {
  return cached(`${kind}|${o.locale}|${o.currency}`, () => {
    if (kind === 'currency') return new Intl.NumberFormat(o.locale, { style: 'currency', currency: o.currency });
    if (kind === 'percent') return new Intl.NumberFormat(o.locale, { style: 'percent', maximumFractionDigits: 2 });
    return new Intl.NumberFormat(o.locale, { maximumFractionDigits: 6 });
  });
}

function dateFormat(o: FormatOptions): Intl.DateTimeFormat {
  return cached(`date|${o.locale}`, () => new Intl.DateTimeFormat(o.locale, { dateStyle: 'medium', timeZone: 'UTC' }));
}

/** How a value reads when it has no explicit format: dates as YYYY-MM-DD, lists joined. */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object' || v instanceof Date)) {
    return value.map(plainText).join(', ');
  }
  return JSON.stringify(value);
}

/** The text shown in a PDF for a value and an optional column format. */
export function formatValue(value: unknown, format: ColumnFormat | undefined, o: FormatOptions): string {
  if (value === null || value === undefined || value === '') return '';
  switch (format) {
    case 'number':
    case 'currency':
    case 'percent': {
      const n = toNumber(value);
      return n === undefined ? plainText(value) : numberFormat(format, o).format(n);
    }
    case 'date': {
      const d = toDate(value);
      return d ? dateFormat(o).format(d) : plainText(value);
    }
    case 'boolean': {
      const b = toBoolean(value);
      return b === undefined ? plainText(value) : b ? 'Yes' : 'No';
    }
    default:
      return plainText(value);
  }
}

/** The typed value written to a workbook cell: numbers stay numbers, dates stay dates. */
export function toCellValue(value: unknown, format: ColumnFormat | undefined): CellValue {
  if (value === null || value === undefined || value === '') return null;
  switch (format) {
    case 'number':
    case 'currency':
    case 'percent':
      return toNumber(value) ?? plainText(value);
    case 'date':
      return toDate(value) ?? plainText(value);
    case 'boolean':
      return toBoolean(value) ?? plainText(value);
    default:
      if (typeof value === 'number') return Number.isFinite(value) ? value : null;
      if (typeof value === 'boolean' || value instanceof Date) return value;
      return plainText(value);
  }
}

/** Excel number formats matching formatValue's output: the template's currency with its minor unit, its locale's date. */
export function excelNumFmt(format: ColumnFormat | undefined, o: FormatOptions): string | undefined {
  switch (format) {
    case 'currency': {
      const symbol = `"${currencySymbol(o).replace(/"/g, '')}"`;
      const digits = currencyDigits(o);
      const amount = digits > 0 ? `#,##0.${'0'.repeat(digits)}` : '#,##0';
      return `${symbol}${amount};-${symbol}${amount}`;
    }
    case 'percent':
      return '0.00%';
    case 'number':
      return '#,##0.######';
    case 'date':
      return excelDateFormat(o);
    default:
      return undefined;
  }
}

/** The currency's minor unit: its digits after the point (2 for USD and EUR, 0 for JPY, 3 for BHD). */
const minorUnits = new Map<string, number>();
function currencyDigits(o: FormatOptions): number {
  let digits = minorUnits.get(o.currency);
  if (digits === undefined) {
    digits = numberFormat('currency', o).resolvedOptions().maximumFractionDigits ?? 2;
    minorUnits.set(o.currency, digits);
  }
  return digits;
}

/** An amount rounded to the currency's minor unit (22971.140000000003 → 22971.14), as the PDF shows it. */
export function roundCurrency(n: number, o: FormatOptions): number {
  if (!Number.isFinite(n)) return n;
  const digits = currencyDigits(o);
  // Most amounts are whole in the minor unit already (a workbook's 100,000 prices pass here).
  if (Number.isInteger(n * 10 ** digits)) return n;
  // Half away from zero on the decimal the number reads as (1.005 → 1.01, as Intl prints it), by shifting the exponent in text.
  const shortest = String(Math.abs(n));
  const rounded = shortest.includes('e') ? Math.round(Math.abs(n) * 10 ** digits) / 10 ** digits : Number(`${Math.round(Number(`${shortest}e${digits}`))}e-${digits}`);
  return n < 0 && rounded !== 0 ? -rounded : rounded;
}

const excelDates = new Map<string, string>();

/**
 * The Excel number format of the template's date format: the locale's medium date that formatValue
 * prints (en-US `mmm d, yyyy` for "Mar 1, 2024", de-DE `dd.mm.yyyy`, en-GB `d mmm yyyy`), read from
 * Intl's parts of a date whose day and month have one digit, so padding and month names show.
 * Excel writes month names in its own language. `yyyy-mm-dd` when a part is not one Excel has.
 */
export function excelDateFormat(o: FormatOptions): string {
  const known = excelDates.get(o.locale);
  if (known) return known;
  const token = (type: string, v: string): string | undefined => {
    if (type === 'literal') return /^[\s.,/-]*$/.test(v) ? v.replace(/\s/g, ' ') : `"${v.replace(/"/g, '')}"`;
    if (type === 'year') return /^\d{4}$/.test(v) ? 'yyyy' : /^\d{2}$/.test(v) ? 'yy' : undefined;
    if (type === 'day') return v === '1' ? 'd' : v === '01' ? 'dd' : undefined;
    if (type === 'month') {
      if (v === '3' || v === '03') return v === '3' ? 'm' : 'mm';
      const name = v.replace(/\.$/, '');
      if (!/^\p{L}+$/u.test(name)) return undefined;
      return (name.length <= 4 ? 'mmm' : 'mmmm') + (v.endsWith('.') ? '.' : '');
    }
    return undefined;
  };
  const tokens = dateFormat(o).formatToParts(new Date(Date.UTC(2024, 2, 1))).map((p) => token(p.type, p.value));
  const numFmt = tokens.every((t): t is string => t !== undefined) ? tokens.join('') : 'yyyy-mm-dd';
  excelDates.set(o.locale, numFmt);
  return numFmt;
}

function currencySymbol(o: FormatOptions): string {
  const part = numberFormat('currency', o).formatToParts(0).find((p) => p.type === 'currency');
  return part?.value ?? o.currency;
}
