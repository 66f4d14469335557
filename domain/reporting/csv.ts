import { DECIMAL_TEXT, isExactNumericType, type ResultColumnType, type ResultRow } from './bind-datasets';

/**
 * CSV lines of a report output (docs/reporting.md "Report outputs"): RFC 4180 with CRLF line ends,
 * a header of the query's column names in its order, UTF-8 without BOM (the caller encodes), and
 * the OWASP guard against formula injection. Pure: one line at a time, so a caller can stream.
 */

const CSV_LINE_END = '\r\n';

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** A text field: `'` before a formula-like start, then quoted when it holds `"`, `,`, CR or LF. */
export function csvText(text: string): string {
  const guarded = FORMULA_START.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/**
 * One cell. `null` and missing are empty; numbers and booleans as JavaScript writes them (never
 * guarded: `-5` is a number, not a formula); a decimal string of an exact numeric column (PostgreSQL
 * `numeric`, MySQL `DECIMAL`, …) is written digit for digit, unguarded, like a number; objects and
 * arrays (json columns) as JSON text; every other string is text (guarded, quoted as needed).
 */
export function csvCell(value: unknown, exactNumeric = false): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : csvText(String(value));
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return exactNumeric && DECIMAL_TEXT.test(value) ? value : csvText(value);
  return csvText(JSON.stringify(value));
}

/** Writes rows of one result: `header()` once, then `row(r)` per row; every line ends in CRLF. */
export interface CsvFormatter {
  header(): string;
  row(row: ResultRow): string;
}

/**
 * A formatter for a result's columns. Without columns (a result that reported none) the first row's
 * keys are used. Column names are text like any other cell (guarded and quoted).
 */
export function csvFormatter(columns: readonly ResultColumnType[]): CsvFormatter {
  let names = columns.map((c) => c.name);
  let numeric = columns.map((c) => isExactNumericType(c.dataType));
  return {
    header: () => (names.length === 0 ? '' : names.map(csvText).join(',') + CSV_LINE_END),
    row(row) {
      let prefix = '';
      if (names.length === 0) {
        names = Object.keys(row);
        numeric = names.map(() => false);
        prefix = names.map(csvText).join(',') + CSV_LINE_END;
      }
      return prefix + names.map((n, i) => csvCell(row[n], numeric[i])).join(',') + CSV_LINE_END;
    },
  };
}
