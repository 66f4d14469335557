import { pipeline, Readable } from 'node:stream';
import { stringify, type CastingContext } from 'csv-stringify';
import { DECIMAL_TEXT, isExactNumericType, type ResultColumnType, type ResultRow } from './bind-datasets';

/**
 * CSV of a report output (docs/reporting.md "Report outputs"): RFC 4180 with CRLF line ends, a
 * header of the query's column names in its order, UTF-8 without BOM (the caller encodes), and the
 * OWASP guard against formula injection. csv-stringify writes the lines and does the quoting (a
 * field holding `"`, `,`, CR or LF is quoted, quotes doubled); the cast functions below decide each
 * cell's text and guard it.
 */

const CSV_LINE_END = '\r\n';

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * CSV injection (OWASP): a spreadsheet runs a cell starting with `=`, `+`, `-` or `@` (or a tab or
 * carriage return before one) as a formula. Such a cell gets a leading apostrophe, which spreadsheets
 * show as text and do not evaluate; every other text is written as it is. csv-stringify's own
 * `escape_formulas` also guards the full-width forms (`＝`, …), which would change the bytes of
 * outputs written so far; this guard stays the one every CSV of the service uses.
 */
export function guardFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** Which columns hold exact decimals; read when a cell is cast (the header is known only at the first row). */
interface Layout {
  names: string[];
  numeric: boolean[];
}

/**
 * A cell's text. `null` and missing are empty (csv-stringify's default); numbers and booleans as
 * JavaScript writes them (never guarded: `-5` is a number, not a formula); a decimal string of an
 * exact numeric column (PostgreSQL `numeric`, MySQL `DECIMAL`, …) digit for digit, unguarded, like
 * a number; objects and arrays (json columns) as JSON text; every other string is guarded text. The
 * header is the first record (records 0): column names are always text.
 */
function castFor(layout: Layout) {
  const text = (value: unknown) => guardFormula(String(value));
  return {
    string: (value: string, ctx: CastingContext) => (ctx.records > 0 && layout.numeric[ctx.index] && DECIMAL_TEXT.test(value) ? value : guardFormula(value)),
    number: (value: number) => (Number.isFinite(value) ? String(value) : text(value)),
    boolean: (value: boolean) => String(value),
    bigint: (value: bigint) => String(value),
    date: (value: Date) => text(JSON.stringify(value)),
    object: (value: object) => text(JSON.stringify(value)),
  };
}

/**
 * The CSV text of a result's rows, streamed: a row is read when the reader takes the text before
 * it. Without columns (a result that reported none) the first row's keys are the header, and an
 * empty result is an empty file. Rows go to csv-stringify as arrays in header order (its object
 * records would read a column named `a.b` as a path). An error of `rows` ends the stream with it.
 */
export function csvStream(columns: readonly ResultColumnType[], rows: AsyncIterable<ResultRow> | Iterable<ResultRow>): Readable {
  const layout: Layout = { names: columns.map((c) => c.name), numeric: columns.map((c) => isExactNumericType(c.dataType)) };
  async function* records(): AsyncGenerator<unknown[]> {
    let headed = layout.names.length > 0;
    if (headed) yield layout.names;
    for await (const row of rows) {
      if (!headed) {
        layout.names = Object.keys(row);
        layout.numeric = layout.names.map(() => false);
        headed = true;
        yield layout.names;
      }
      yield layout.names.map((n) => row[n]);
    }
  }
  // A lone CR or LF is quoted too: csv-stringify quotes only the record delimiter itself once one is set.
  const csv = stringify({ record_delimiter: CSV_LINE_END, quote_record_delimiter: true, cast: castFor(layout) });
  pipeline(Readable.from(records()), csv, () => undefined); // an error destroys `csv` with it: its reader sees it
  return csv;
}
