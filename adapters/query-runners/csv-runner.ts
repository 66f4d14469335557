import { Readable } from 'node:stream';
import { parse, type Parser } from 'csv-parse';
import { AppError } from '../../domain/errors';
import { CSV_MAX_BYTES, CSV_MAX_RECORD_CHARS, csvSourceKey, TRANSFORM_FIELD_OVERHEAD, TRANSFORM_MAX_BYTES, TRANSFORM_MAX_RECORDS } from '../../domain/reporting/csv-source';
import type { Evaluator } from '../../domain/evaluation';
import type {
  CompiledQuery,
  ConnectionTest,
  CsvConfig,
  DiscoveredSchema,
  QueryLimits,
  QueryResultSummary,
  QueryRunner,
  RowSink,
} from '../../domain/reporting/query-runner';
import type { OutboundGuard } from '../http/outbound';
import type { ArtefactStorage } from '../storage/storage';
import { NdjsonWriter } from '@formwork/query-runners';
import { CSV_INFERENCE_ROWS, csvCell, inferCsvTypes, type CsvColumnType } from '../../domain/reporting/csv-types';

/**
 * The direct runner of `csv` datasources (docs/reporting.md "csv", "Datasource kinds"): the uploaded file
 * (artefact storage) or the file at `url` (through the outbound guard, same-host redirects only)
 * streamed through csv-parse into the NdjsonWriter with the row and byte caps. Column types (number,
 * boolean, date, string) are inferred from the first 1,000 records (domain/reporting/csv-types.ts),
 * which are held until then. A `transform` (tenant JSONata) runs in the evaluation workers over all
 * rows, as text.
 */

const TEST_TIMEOUT_MS = 10_000;
const DISCOVERY_ROWS = CSV_INFERENCE_ROWS;

export interface CsvRunnerInput {
  config: CsvConfig;
  guard: OutboundGuard;
  storage?: ArtefactStorage;
  /** The datasource's project and id (the uploaded file's key). */
  tenant?: string;
  datasourceId?: string;
  evaluator?: Evaluator;
}

const tooLarge = () => new AppError('ERR_QRY_010', `The CSV file is larger than ${CSV_MAX_BYTES} bytes`, { limit: CSV_MAX_BYTES });

/** Past what a transform may read (TRANSFORM_MAX_RECORDS, TRANSFORM_MAX_BYTES): ERR_QRY_010 naming the cap. */
const transformInputTooLarge = (what: 'records' | 'bytes') =>
  new AppError(
    'ERR_QRY_010',
    what === 'records'
      ? `A transform reads at most ${TRANSFORM_MAX_RECORDS} records of the CSV file`
      : `A transform reads at most ${TRANSFORM_MAX_BYTES} bytes of the CSV file`,
    { limit: what === 'records' ? TRANSFORM_MAX_RECORDS : TRANSFORM_MAX_BYTES, stage: 'transform' },
  );

/** Counts bytes as they pass; past the cap the stream fails with ERR_QRY_010. */
async function* capped(source: AsyncIterable<Uint8Array>, max: number): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of source) {
    size += chunk.byteLength;
    if (size > max) throw tooLarge();
    yield chunk;
  }
}

/** csv-parse's errors as the query's answer: what is wrong and where, never a crash. */
function parseError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; message?: string; lines?: number };
  if (typeof e.code === 'string' && e.code.startsWith('CSV_')) {
    return new AppError('ERR_QRY_006', `The CSV file is invalid: ${(e.message ?? e.code).slice(0, 300)}`, { dbCode: e.code, line: e.lines });
  }
  if ((err as { name?: string }).name === 'TimeoutError') return new AppError('ERR_QRY_007');
  return err;
}

/** Header names: trimmed, empty ones `column_<n>`, repeated ones `<name>_<n>`. */
function columnNames(header: string[] | null, width: number): string[] {
  const names: string[] = [];
  const used = new Set<string>();
  for (let i = 0; i < width; i += 1) {
    let name = (header?.[i] ?? '').trim() || `column_${i + 1}`;
    for (let n = 2; used.has(name); n += 1) name = `${(header?.[i] ?? '').trim() || `column_${i + 1}`}_${n}`;
    used.add(name);
    names.push(name);
  }
  return names;
}

export function createCsvRunner(input: CsvRunnerInput): QueryRunner {
  const { config, guard } = input;

  /** The file's bytes as a stream, at most CSV_MAX_BYTES. */
  async function open(signal: AbortSignal | undefined, timeoutMs: number): Promise<AsyncIterable<Uint8Array>> {
    if (config.source === 'url') {
      let response: Response;
      try {
        response = await guard.guardedFetch(config.url ?? '', { method: 'GET', signal, timeoutMs, sameHostRedirects: true, headers: { accept: 'text/csv, */*' } });
      } catch (err) {
        if (err instanceof AppError || signal?.aborted) throw err;
        if ((err as { name?: string }).name === 'TimeoutError') throw new AppError('ERR_QRY_007');
        const code = (err as { cause?: { code?: string } }).cause?.code ?? 'CONNECTION_FAILED';
        throw new AppError('ERR_QRY_006', `The CSV file could not be fetched (${code})`, { dbCode: code });
      }
      if (response.status >= 300) {
        await response.body?.cancel().catch(() => undefined);
        throw new AppError('ERR_QRY_006', `The CSV server answered ${response.status}`, { dbCode: `HTTP_${response.status}` });
      }
      if (Number(response.headers.get('content-length') ?? 0) > CSV_MAX_BYTES) {
        await response.body?.cancel().catch(() => undefined);
        throw tooLarge();
      }
      return capped((response.body ?? Readable.from([])) as AsyncIterable<Uint8Array>, CSV_MAX_BYTES);
    }
    if (!input.storage || !input.tenant || !input.datasourceId) throw new Error('the csv runner needs storage and the datasource to read an upload');
    const key = csvSourceKey(input.tenant, input.datasourceId);
    if (!(await input.storage.exists(key))) throw new AppError('ERR_QRY_006', 'No CSV file uploaded yet: PUT it to /api/reporting/datasources/:id/file', { dbCode: 'NO_FILE' });
    const { body } = await input.storage.get(key);
    return capped(body as AsyncIterable<Uint8Array>, CSV_MAX_BYTES);
  }

  /** Records of the file, the header (when `header`) first, while they are read. */
  async function* records(signal: AbortSignal | undefined, timeoutMs: number): AsyncGenerator<string[]> {
    const parser: Parser = parse({
      delimiter: config.delimiter,
      encoding: config.encoding === 'latin1' ? 'latin1' : config.encoding === 'utf-16le' ? 'utf16le' : 'utf8',
      bom: true,
      skip_empty_lines: true,
      max_record_size: CSV_MAX_RECORD_CHARS,
      relax_column_count: false,
    });
    const source = Readable.from(await open(signal, timeoutMs));
    source.on('error', (err) => parser.destroy(err));
    source.pipe(parser);
    try {
      for await (const record of parser) {
        if (signal?.aborted) throw signal.reason instanceof Error && signal.reason.name === 'TimeoutError' ? new AppError('ERR_QRY_007') : signal.reason;
        yield record as string[];
      }
    } catch (err) {
      throw parseError(err);
    } finally {
      source.destroy();
      parser.destroy();
    }
  }

  async function header(signal: AbortSignal | undefined, timeoutMs: number, rows: number): Promise<{ names: string[]; sample: string[][] }> {
    const sample: string[][] = [];
    let first: string[] | null = null;
    for await (const record of records(signal, timeoutMs)) {
      if (config.header && !first) first = record;
      else sample.push(record);
      if (sample.length >= rows) break;
    }
    return { names: columnNames(config.header ? first : null, (first ?? sample[0] ?? []).length), sample };
  }

  return {
    async test(): Promise<ConnectionTest> {
      const started = Date.now();
      const { names } = await header(AbortSignal.timeout(TEST_TIMEOUT_MS), TEST_TIMEOUT_MS, 0);
      return { latencyMs: Date.now() - started, serverVersion: `csv (${names.length} columns)` };
    },

    /** One table, `source`, its columns from the header, typed from the first 1,000 records. */
    async discoverSchema(): Promise<DiscoveredSchema> {
      const { names, sample } = await header(AbortSignal.timeout(TEST_TIMEOUT_MS), TEST_TIMEOUT_MS, DISCOVERY_ROWS);
      const types = inferCsvTypes(sample, names.length);
      return {
        refreshedAt: new Date().toISOString(),
        tables: [{ schema: '', name: 'source', type: 'table', columns: names.map((name, i) => ({ name, dataType: types[i], nullable: types[i] !== 'string' && sample.some((r) => (r[i] ?? '').trim() === ''), ordinal: i + 1 })) }],
        truncated: false,
      };
    },

    async run(query: CompiledQuery, limits: QueryLimits, sink: RowSink, signal?: AbortSignal): Promise<QueryResultSummary> {
      const started = Date.now();
      if (!query.table) throw new AppError('ERR_QRY_002', 'A csv datasource runs table queries only', { errors: [{ path: 'language', code: 'LANGUAGE_MISMATCH', message: "a csv datasource runs language 'table'" }] });
      const deadline = AbortSignal.timeout(limits.timeoutMs);
      const cancel = signal ? AbortSignal.any([signal, deadline]) : deadline;
      const writer = new NdjsonWriter(sink, limits);
      let names: string[] | null = null;
      const kept: string[][] = [];
      let keptBytes = 0;
      const transform = query.table.transform;
      // Without a transform: the first records are held until their column types are known, then written typed.
      // The sample is bounded by bytes as well (TRANSFORM_MAX_BYTES, counted like a transform's input), so
      // 1,000 records of 1 MiB are never held: the types are inferred from what was read by then.
      const sample: string[][] = [];
      let sampleBytes = 0;
      let types: CsvColumnType[] | null = null;
      const write = (record: string[]) => writer.push(names!, record.map((text, i) => csvCell(types![i], text)));
      const flushSample = async (): Promise<boolean> => {
        types = inferCsvTypes(sample, names?.length ?? 0);
        for (const record of sample.splice(0)) if (!(await write(record))) return false;
        return true;
      };
      for await (const record of records(cancel, limits.timeoutMs)) {
        if (!names) {
          names = columnNames(config.header ? record : null, record.length);
          if (config.header) continue;
        }
        if (transform) {
          // Counted while read: the records a transform takes are held until it runs.
          if (kept.length >= TRANSFORM_MAX_RECORDS) throw transformInputTooLarge('records');
          for (const field of record) keptBytes += field.length + TRANSFORM_FIELD_OVERHEAD;
          if (keptBytes > TRANSFORM_MAX_BYTES) throw transformInputTooLarge('bytes');
          kept.push(record);
        } else if (types) {
          if (!(await write(record))) break;
        } else {
          sample.push(record);
          for (const field of record) sampleBytes += field.length + TRANSFORM_FIELD_OVERHEAD;
          if ((sample.length >= CSV_INFERENCE_ROWS || sampleBytes > TRANSFORM_MAX_BYTES) && !(await flushSample())) break;
        }
      }
      if (!transform && !types) await flushSample();
      const typeOf = (i: number): string => (transform ? 'string' : (types?.[i] ?? 'string'));
      let columns = (names ?? []).map((name, i) => ({ name, dataType: typeOf(i) }));
      if (transform) {
        if (!input.evaluator || !input.tenant) throw new Error('the csv runner needs an evaluator to run a transform');
        const result = await input.evaluator.check(input.tenant, 'transformedRows', { columns: names ?? [], rows: kept, transform, params: query.table.params });
        columns = result.columns;
        const out = result.columns.map((c) => c.name);
        for (const row of result.rows) if (!(await writer.push(out, row))) break;
      }
      return { columns, rowCount: writer.rowCount, truncated: writer.truncated, bytes: writer.bytes, durationMs: Date.now() - started };
    },

    async close() {
      // Nothing is held between calls.
    },
  };
}
