import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type { CompiledHttpRequest } from '../../domain/reporting/http-request';
import type {
  CompiledQuery,
  ConnectionTest,
  DiscoveredSchema,
  HttpJsonConfig,
  HttpJsonSecrets,
  QueryLimits,
  QueryResultSummary,
  QueryRunner,
  RowSink,
} from '../../domain/reporting/query-runner';
import type { OutboundGuard } from '../http/outbound';
import { NdjsonWriter } from '@formwork/query-runners';

/**
 * The direct runner of `http_json` datasources (docs/reporting.md "http_json", "Datasource kinds",
 * "Read-only execution", "Security rules"): one GET or POST through the outbound guard (every hop checked, redirects
 * only to the same host), the body read with a byte cap while it streams, then parsed and cut into rows by `rowsPath`
 * and `transform` in the evaluation workers (tenant JSONata never runs on the thread that polls Temporal or serves
 * HTTP), and written as NDJSON within the row cap.
 */

export interface HttpJsonRunnerInput {
  config: HttpJsonConfig;
  secrets: HttpJsonSecrets;
  guard: OutboundGuard;
  /** For run(): where rowsPath and transform are evaluated, charged to `tenant` (the project). */
  evaluator?: Evaluator;
  tenant?: string;
}

const TEST_TIMEOUT_MS = 10_000;

/** The datasource's auth as headers, from the decrypted secrets. */
function authHeaders(config: HttpJsonConfig, secrets: HttpJsonSecrets): Record<string, string> {
  switch (config.auth) {
    case 'basic':
      return { authorization: `Basic ${Buffer.from(`${config.username ?? ''}:${secrets.password ?? ''}`).toString('base64')}` };
    case 'bearer':
      return { authorization: `Bearer ${secrets.token ?? ''}` };
    case 'header':
      return config.headerName ? { [config.headerName]: secrets.headerValue ?? '' } : {};
    default:
      return {};
  }
}

/** baseUrl + the compiled path (already encoded) + the query values (encoded by URLSearchParams). */
function requestUrl(baseUrl: string, path: string, query: Array<[string, string]> = []): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  url.hash = '';
  for (const [k, v] of query) url.searchParams.append(k, v);
  return url;
}

const isTimeout = (err: unknown) => (err as { name?: string }).name === 'TimeoutError';

/** A failed exchange as the catalogued errors: the guard's refusal, a timeout, or a connection failure (retried by the activity). */
function exchangeError(err: unknown, cancel?: AbortSignal): unknown {
  if (err instanceof AppError) return err;
  // The deadline (AbortSignal.timeout) aborts with a TimeoutError; a cancelled activity's reason passes as it is.
  if (isTimeout(err)) return new AppError('ERR_QRY_007');
  if (cancel?.aborted) return err;
  const cause = (err as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code ?? 'CONNECTION_FAILED';
  return new AppError('ERR_QRY_006', `The request failed (${code})`, { dbCode: code });
}

/** The body's bytes, at most `maxBytes`: past them the stream is cancelled and ERR_QRY_010 thrown (never read whole). */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new AppError('ERR_QRY_010', undefined, { limit: maxBytes });
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AppError('ERR_QRY_010', undefined, { limit: maxBytes });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export function createHttpJsonRunner(input: HttpJsonRunnerInput): QueryRunner {
  const { config, secrets, guard } = input;

  async function send(request: Pick<CompiledHttpRequest, 'method' | 'path' | 'query' | 'headers' | 'body'>, timeoutMs: number, cancel?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...config.defaultHeaders, ...request.headers, ...authHeaders(config, secrets) };
    let body: string | undefined;
    if (request.method === 'POST') {
      body = JSON.stringify(request.body ?? null);
      headers['content-type'] = 'application/json';
    }
    try {
      return await guard.guardedFetch(requestUrl(config.baseUrl, request.path, request.query), {
        method: request.method,
        headers,
        body,
        signal: cancel,
        timeoutMs,
        sameHostRedirects: true,
      });
    } catch (err) {
      throw exchangeError(err, cancel);
    }
  }

  return {
    async test(): Promise<ConnectionTest> {
      const started = Date.now();
      const response = await send({ method: 'GET', path: config.healthPath || '/', query: [], headers: {} }, TEST_TIMEOUT_MS);
      await response.body?.cancel().catch(() => undefined);
      if (response.status >= 400) throw new AppError('ERR_DS_002', `The server answered ${response.status}`, { status: response.status });
      return { latencyMs: Date.now() - started, serverVersion: response.headers.get('server') ?? '' };
    },

    /** An HTTP API has no catalogue to read: the schema is an empty list of tables (docs/reporting.md). */
    async discoverSchema(): Promise<DiscoveredSchema> {
      return { refreshedAt: new Date().toISOString(), tables: [], truncated: false };
    },

    async run(query: CompiledQuery, limits: QueryLimits, sink: RowSink, signal?: AbortSignal): Promise<QueryResultSummary> {
      const started = Date.now();
      const request = query.request;
      if (!request) throw new AppError('ERR_QRY_002', 'An http_json datasource runs http queries only', { errors: [{ path: 'language', code: 'LANGUAGE_MISMATCH', message: "an http_json datasource runs language 'http'" }] });
      if (!input.evaluator || !input.tenant) throw new Error('the http_json runner needs an evaluator to run queries');
      // One deadline for the exchange and the body; the evaluation has its own budget.
      const deadline = AbortSignal.timeout(limits.timeoutMs);
      const cancel = signal ? AbortSignal.any([signal, deadline]) : deadline;
      const response = await send(request, limits.timeoutMs, cancel);
      let bytes: Uint8Array;
      try {
        if (response.status >= 300) {
          await response.body?.cancel().catch(() => undefined);
          throw new AppError('ERR_QRY_006', `The server answered ${response.status}`, { dbCode: `HTTP_${response.status}` });
        }
        bytes = await readCapped(response, limits.maxBytes);
      } catch (err) {
        throw exchangeError(err, signal);
      }
      const result = await input.evaluator.check(input.tenant, 'httpRows', { body: bytes, rowsPath: request.rowsPath, transform: request.transform, params: request.params });
      const writer = new NdjsonWriter(sink, limits);
      const names = result.columns.map((c) => c.name);
      for (const row of result.rows) {
        if (!(await writer.push(names, row))) break;
      }
      return { columns: result.columns, rowCount: writer.rowCount, truncated: writer.truncated, bytes: writer.bytes, durationMs: Date.now() - started };
    },

    async close() {
      // Nothing is held between calls: each request uses the guard's dispatcher.
    },
  };
}
