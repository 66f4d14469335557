/**
 * Query results → template variables (docs/reporting.md "Report outputs", "How the parts fit"). Pure:
 * the rows come in already read from storage (only the first one for `first_row` and `value`).
 */

export type BindShape = 'rows' | 'first_row' | 'value';

export interface ResultColumnType {
  name: string;
  dataType: string;
}

export type ResultRow = Record<string, unknown>;

/** A report dataset with the rows read from its stored result (`first_row` / `value`: at most the first). */
export interface DatasetRows {
  name: string;
  shape: BindShape;
  /** The template variable; the dataset's name when absent. */
  bindTo?: string;
  /** The query's columns in its order (runDirectQuery's `columns`). */
  columns: ResultColumnType[];
  rows: ResultRow[];
}

/**
 * Exact numeric types the drivers hand over as strings, so no digit is lost on the way: PostgreSQL
 * `int8` and `numeric` (pg-types names), MySQL/MariaDB `BIGINT`, `DECIMAL`, `NEWDECIMAL`, `LONGLONG`
 * (mysql2 type names). Compared case-insensitively.
 */
const EXACT_NUMERIC_TYPES = new Set(['int8', 'numeric', 'bigint', 'decimal', 'newdecimal', 'longlong']);

export function isExactNumericType(dataType: string): boolean {
  return EXACT_NUMERIC_TYPES.has(dataType.toLowerCase());
}

/** What the drivers write for exact numbers: an optional minus, digits, optional fraction; no exponent. */
export const DECIMAL_TEXT = /^-?\d+(?:\.\d+)?$/;

/**
 * A decimal string as a JavaScript number when the number shows the same digits: `"42"` → 42,
 * `"12.50"` → 12.5 (trailing fraction zeros are not digits the number loses), `"-0.00"` → 0. A value
 * a double would round (`"9007199254740993"`, `"0.1000000000000000055"`) or writes in exponent form
 * (`"0.0000001"` is `1e-7`) stays the string it was.
 */
export function exactNumber(text: string): number | string {
  if (!DECIMAL_TEXT.test(text)) return text;
  const n = Number(text);
  if (!Number.isFinite(n)) return text;
  let shown = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  if (shown === '-0') shown = '0';
  const value = n === 0 ? 0 : n; // no -0
  return String(value) === shown ? value : text;
}

/** A function that turns the exact-numeric string cells of a row into numbers (others untouched). */
export function numberConverter(columns: readonly ResultColumnType[]): (row: ResultRow) => ResultRow {
  const numeric = columns.filter((c) => isExactNumericType(c.dataType)).map((c) => c.name);
  if (numeric.length === 0) return (row) => row;
  return (row) => {
    const out: ResultRow = { ...row };
    for (const name of numeric) {
      const v = out[name];
      if (typeof v === 'string') out[name] = exactNumber(v);
    }
    return out;
  };
}

/** How many stored rows a shape needs: all for `rows`, the first for `first_row` and `value`. */
export function rowsNeeded(shape: BindShape): number {
  return shape === 'rows' ? Number.POSITIVE_INFINITY : 1;
}

/** The variable value of one dataset. */
export function boundValue(dataset: DatasetRows): unknown {
  const convert = numberConverter(dataset.columns);
  const first = dataset.rows[0];
  switch (dataset.shape) {
    case 'rows':
      return dataset.rows.map(convert);
    case 'first_row':
      return first === undefined ? null : convert(first);
    case 'value': {
      if (first === undefined) return null;
      const column = dataset.columns[0]?.name ?? Object.keys(first)[0];
      if (column === undefined) return null;
      return convert(first)[column] ?? null;
    }
  }
}

/**
 * The variables a report renders with: each dataset under `bindTo ?? name`, and each report
 * parameter the template declares under its own name, unless a dataset already binds that name
 * (the data wins: publish checked the binding, a parameter only shares the name).
 */
export function bindDatasets(
  datasets: readonly DatasetRows[],
  parameters: Record<string, unknown>,
  templateVariableNames: readonly string[],
): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const d of datasets) variables[d.bindTo ?? d.name] = boundValue(d);
  for (const name of templateVariableNames) {
    if (Object.prototype.hasOwnProperty.call(variables, name)) continue;
    if (Object.prototype.hasOwnProperty.call(parameters, name)) variables[name] = parameters[name];
  }
  return variables;
}
