import { exactNumber } from './bind-datasets';

/**
 * Column types of a CSV file, inferred from its first records (docs/reporting.md "csv"): CSV has no
 * types of its own, so a column whose every non-empty value in the sample reads as one type gets it.
 */
export type CsvColumnType = 'number' | 'boolean' | 'date' | 'string';

/** Records the inference reads (the design's "type inference over the first 1,000 rows"). */
export const CSV_INFERENCE_ROWS = 1000;

const BOOLEAN = /^(true|false)$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date `YYYY-MM-DD` that exists (2024-02-30 does not). */
function isDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = new Date(Date.UTC(y, mo - 1, d));
  return at.getUTCFullYear() === y && at.getUTCMonth() === mo - 1 && at.getUTCDate() === d;
}

/** A number only when the text is a plain decimal a double keeps exactly (`12.50` yes; `007`, `1e3`, 2^53 + 1 no). */
const isNumber = (text: string): boolean => typeof exactNumber(text) === 'number';

const TESTS: Array<[Exclude<CsvColumnType, 'string'>, (text: string) => boolean]> = [
  ['number', isNumber],
  ['boolean', (text) => BOOLEAN.test(text)],
  ['date', isDate],
];

/**
 * The type of each of `width` columns over `sample` (records as parsed): the first of number,
 * boolean and date that every non-empty value (whitespace trimmed) passes; `string` otherwise, and
 * for a column with no value at all.
 */
export function inferCsvTypes(sample: string[][], width: number): CsvColumnType[] {
  const types: CsvColumnType[] = [];
  for (let i = 0; i < width; i += 1) {
    const values = sample.map((r) => (r[i] ?? '').trim()).filter((v) => v !== '');
    const found = values.length === 0 ? undefined : TESTS.find(([, test]) => values.every(test));
    types.push(found ? found[0] : 'string');
  }
  return types;
}

/**
 * A cell as the inferred type gives it: a number or boolean; a date stays its `YYYY-MM-DD` text; an
 * empty cell of a typed column is null. A later value that does not fit its column (past the sample)
 * stays the text it was, so nothing of the file is lost.
 */
export function csvCell(type: CsvColumnType, text: string): unknown {
  if (type === 'string') return text;
  const value = text.trim();
  if (value === '') return null;
  if (type === 'number') return isNumber(value) ? exactNumber(value) : text;
  if (type === 'boolean') return BOOLEAN.test(value) ? value.toLowerCase() === 'true' : text;
  return isDate(value) ? value : text;
}
