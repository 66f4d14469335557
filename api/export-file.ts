import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Context } from 'koa';
import { guardFormula } from '../domain/reporting/csv';

/**
 * Answers an export (documents' jobs, reporting runs) as a streamed attachment `<name>-<day>.<format>`:
 * JSON as one array written row by row, CSV with a header in `columns` order and every string cell
 * through guardFormula (filenames, metadata and messages are caller text: CSV injection). Rows are read
 * as the client takes them, so an export of any size holds one page in memory.
 */
export function sendExport(ctx: Context, rows: Readable, opts: { format: 'csv' | 'json'; name: string; columns: readonly string[] }): void {
  const day = new Date().toISOString().slice(0, 10);
  ctx.set('Content-Disposition', `attachment; filename="${opts.name}-${day}.${opts.format}"`);
  if (opts.format === 'json') {
    ctx.type = 'application/json';
    ctx.body = Readable.from(jsonArray(rows));
  } else {
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = rows.pipe(stringify({ header: true, columns: [...opts.columns], cast: { string: guardFormula } }));
  }
}

async function* jsonArray(rows: AsyncIterable<unknown>): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const row of rows) {
    yield (first ? '' : ',') + JSON.stringify(row);
    first = false;
  }
  yield ']';
}
