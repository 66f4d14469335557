import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AppError } from '../../domain/errors';
import type { ResultRow } from '../../domain/reporting/bind-datasets';
import type { ArtefactStorage } from '../../adapters/storage/storage';

const NEWLINE = 0x0a;

function parseRow(line: string, key: string, index: number): ResultRow {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    throw new Error(`Stored result ${key} is not NDJSON (line ${index + 1})`);
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new Error(`Stored result ${key}: line ${index + 1} is not an object`);
  return row as ResultRow;
}

/**
 * The rows of a stored query result (gzip NDJSON as runDirectQuery writes it), read as they are
 * needed: stopping the iteration (`break`, `limit`) stops reading and closes the file. More than
 * `maxBytes` uncompressed (REPORTING_RESULT_MAX_BYTES: the cap the writer had) is ERR_QRY_010 as
 * soon as it is seen, so a gzip bomb is never inflated past the cap.
 */
export async function* storedRows(storage: ArtefactStorage, key: string, opts: { maxBytes: number; limit?: number }): AsyncGenerator<ResultRow> {
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  if (limit <= 0) return;
  const { body } = await storage.get(key);
  const gunzip = createGunzip();
  body.on('error', (err: Error) => gunzip.destroy(err));
  body.pipe(gunzip);
  let bytes = 0;
  let count = 0;
  let pending: Buffer[] = [];
  const line = (tail: Buffer): string => {
    const text = (pending.length === 0 ? tail : Buffer.concat([...pending, tail])).toString('utf8');
    pending = [];
    return text;
  };
  try {
    for await (const chunk of gunzip as Readable & AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > opts.maxBytes) throw new AppError('ERR_QRY_010', `Stored result is over ${opts.maxBytes} bytes`, { limit: opts.maxBytes });
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        const text = line(chunk.subarray(start, nl));
        start = nl + 1;
        if (text.trim() === '') continue;
        yield parseRow(text, key, count);
        if (++count >= limit) return;
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
    const rest = line(Buffer.alloc(0));
    if (rest.trim() !== '') yield parseRow(rest, key, count);
  } finally {
    body.unpipe(gunzip);
    body.destroy();
    gunzip.destroy();
  }
}
