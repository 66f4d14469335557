import { AppError, type QueryLimits, type RowSink } from '@formwork/wire';

/**
 * One JSON value of a result cell. Numbers the driver gives as numbers stay numbers; what it gives
 * as strings stays strings (PostgreSQL `int8` and `numeric`, MySQL `BIGINT` and `DECIMAL`: exact
 * values a JavaScript number could round); `bigint` becomes its decimal string; dates become ISO 8601
 * (`toISOString`, UTC); bytes become base64; objects (json columns) pass through.
 */
function jsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

/**
 * Writes rows to a RowSink as NDJSON while counting rows and bytes: past `maxBytes` it throws
 * ERR_QRY_010 at once; past `maxRows` it throws ERR_QRY_008 (`fail`) or marks the result truncated
 * and tells the runner to stop reading (`truncate`).
 */
export class NdjsonWriter {
  rowCount = 0;
  bytes = 0;
  truncated = false;

  constructor(
    private readonly sink: RowSink,
    private readonly limits: Pick<QueryLimits, 'maxRows' | 'maxBytes' | 'onRowLimit'>,
  ) {}

  /** Writes one row (column names → values); false when the runner should read no further. */
  async push(columns: string[], values: unknown[]): Promise<boolean> {
    if (this.rowCount >= this.limits.maxRows) {
      if (this.limits.onRowLimit === 'fail') {
        throw new AppError('ERR_QRY_008', undefined, { limit: this.limits.maxRows });
      }
      this.truncated = true;
      return false;
    }
    const row: Record<string, unknown> = {};
    columns.forEach((name, i) => {
      row[name] = jsonValue(values[i]);
    });
    const line = `${JSON.stringify(row)}\n`;
    const size = Buffer.byteLength(line);
    if (this.bytes + size > this.limits.maxBytes) {
      throw new AppError('ERR_QRY_010', undefined, { limit: this.limits.maxBytes });
    }
    await this.sink.write(line);
    this.bytes += size;
    this.rowCount += 1;
    return true;
  }
}
