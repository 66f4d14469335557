import jsonata from 'jsonata';
import { cpuTimedJsonataOptions, startCpuBudget, type CpuBudget } from '../cpu-budget';
import { AppError } from '../errors';
import { JSONATA_REGEX } from '../user-regex';

/**
 * Rows of the `http` and `table` query languages (docs/reporting.md "http_json", "csv"): the
 * response body parsed, `rowsPath` and `transform` (tenant JSONata) evaluated, the rows flattened
 * one level into columns. Runs in the evaluation workers (domain/checks.ts `httpRows`,
 * `transformedRows`) under the check budget of CPU time: JSONata stops with D1012 when it is spent
 * (ERR_LIMIT_008); what it cannot interrupt is ended by the pool killing the worker.
 */

const GUARDRAILS = { stack: 500, sequence: 1_000_000 } as const;

export interface JsonRows {
  columns: Array<{ name: string; dataType: string }>;
  /** One array of values per row, in `columns` order. */
  rows: unknown[][];
}

function budgetError(stage: string, budget: CpuBudget): AppError {
  return new AppError('ERR_LIMIT_008', `The query's ${stage} exceeded the evaluation budget (${budget.budgetMs} ms)`, { field: stage, limitMs: budget.budgetMs });
}

/** Fails a run of the query (ERR_QRY_006, `relatedInfo.dbCode` says which step). */
const rowsError = (dbCode: string, message: string) => new AppError('ERR_QRY_006', message, { dbCode });

async function evaluate(expression: string, input: unknown, stage: string, budget: CpuBudget): Promise<unknown> {
  const timed = cpuTimedJsonataOptions({ ...GUARDRAILS, ...JSONATA_REGEX });
  let expr: ReturnType<typeof jsonata>;
  try {
    expr = jsonata(expression, timed.options);
  } catch (err) {
    throw new AppError('ERR_QRY_002', `${stage} is not valid JSONata: ${(err as Error).message}`, { errors: [{ path: stage, code: 'INVALID_EXPRESSION', message: (err as Error).message }] });
  }
  timed.use(budget);
  try {
    return await expr.evaluate(input);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'D1012') throw budgetError(stage, budget);
    throw rowsError(stage === 'transform' ? 'TRANSFORM_FAILED' : 'ROWS_PATH_FAILED', `${stage} failed: ${e.message ?? 'evaluation failed'}`);
  }
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Objects flattened one level (`{a: {b: 1}}` → column `a.b`); deeper values and arrays stay JSON
 * values of their column. Columns in the order they first appear; a row without one has null.
 */
export function flattenRows(list: unknown[], stage: string): JsonRows {
  const index = new Map<string, number>();
  const types: string[] = [];
  const rows: unknown[][] = [];
  const put = (row: unknown[], name: string, value: unknown) => {
    let at = index.get(name);
    if (at === undefined) {
      at = index.size;
      index.set(name, at);
      types.push('null');
    }
    if (types[at] === 'null' && value !== null) types[at] = typeOf(value);
    row[at] = value === undefined ? null : value;
  };
  list.forEach((item, i) => {
    if (!isPlainObject(item)) throw rowsError('ROW_NOT_OBJECT', `${stage}: row ${i} is ${typeOf(item)}, not an object`);
    const row: unknown[] = [];
    for (const [k, v] of Object.entries(item)) {
      if (isPlainObject(v)) for (const [sub, w] of Object.entries(v)) put(row, `${k}.${sub}`, w);
      else put(row, k, v);
    }
    rows.push(row);
  });
  const width = index.size;
  for (const row of rows) for (let c = 0; c < width; c += 1) if (row[c] === undefined) row[c] = null;
  return { columns: [...index.keys()].map((name, i) => ({ name, dataType: types[i] })), rows };
}

/** JSONata answers a one-item result as the item itself, and no result as undefined. */
function asList(value: unknown, stage: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return Array.from(value);
  if (isPlainObject(value)) return [value];
  throw rowsError('ROWS_NOT_ARRAY', `${stage} must give an array of objects, not ${typeOf(value)}`);
}

/** `transform` over `{rows, params}`, the result an array of objects. */
async function applyTransform(rows: unknown[], transform: string | undefined, params: Record<string, unknown>, budget: CpuBudget): Promise<unknown[]> {
  if (!transform) return rows;
  const out = await evaluate(transform, { rows, params }, 'transform', budget);
  // JSON round trip: JSONata's sequences carry internal flags, and functions are not data.
  return asList(out === undefined ? undefined : JSON.parse(JSON.stringify(out) ?? 'null'), 'transform');
}

export interface HttpRowsInput {
  /** The response body's bytes (UTF-8 JSON). */
  body: Uint8Array;
  rowsPath?: string;
  transform?: string;
  params: Record<string, unknown>;
}

/** The rows of an http query's response. */
export async function httpRows(input: HttpRowsInput, budget: CpuBudget = startCpuBudget(1000)): Promise<JsonRows> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength).toString('utf8'));
  } catch {
    throw rowsError('INVALID_JSON', 'The response is not JSON');
  }
  let rows: unknown[];
  if (input.rowsPath) rows = asList(await evaluate(input.rowsPath, parsed, 'rowsPath', budget), 'rowsPath');
  else if (Array.isArray(parsed)) rows = parsed;
  else throw rowsError('ROWS_NOT_ARRAY', 'The response is not an array: give request.rowsPath (e.g. data.items)');
  if (input.rowsPath) rows = JSON.parse(JSON.stringify(rows)) as unknown[];
  return flattenRows(await applyTransform(rows, input.transform, input.params, budget), input.transform ? 'transform' : 'rows');
}

export interface TableRowsInput {
  columns: string[];
  rows: string[][];
  transform?: string;
  params: Record<string, unknown>;
}

/** A table's rows (csv) through its `transform`. */
export async function transformedRows(input: TableRowsInput, budget: CpuBudget = startCpuBudget(1000)): Promise<JsonRows> {
  const objects = input.rows.map((r) => Object.fromEntries(input.columns.map((c, i) => [c, r[i] ?? null])));
  return flattenRows(await applyTransform(objects, input.transform, input.params, budget), 'transform');
}
