/**
 * The port every datasource driver implements (docs/reporting.md "Datasource kinds"): the server's
 * runners (adapters/query-runners/, the PostgreSQL and MySQL ones from `@formwork/query-runners`) and
 * the agent's. Types only: no I/O here.
 */
/** Datasource kinds (docs/reporting.md "Datasource kinds"). `sqlite` exists only through an agent. */
export type DatasourceKind = 'postgres' | 'mysql' | 'sqlite' | 'http_json' | 'csv';
/** The kinds an agent reads on its host (docs/reporting.md "Datasource kinds"); an agent session names those it can reach. */
export const AGENT_DATASOURCE_KINDS: DatasourceKind[] = ['postgres', 'mysql', 'sqlite'];

/** The non-secret settings of a SQL datasource (`config`); the password comes from `secrets`. */
export interface SqlConnectionConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  /** `verify-full` checks the certificate and host name; `require` encrypts only; `disable` is plain TCP. */
  ssl: 'disable' | 'require' | 'verify-full';
  caCert?: string;
  /**
   * Send the password itself to a server that asks for it (PostgreSQL cleartext authentication,
   * MySQL `mysql_clear_password`, or `caching_sha2_password`/`sha256_password` full authentication)
   * without `verify-full` TLS. Default false: the runner refuses (ERR_QRY_006, dbCode CLEARTEXT_PASSWORD_REFUSED).
   */
  allowCleartextPassword?: boolean;
  /** postgres: the schemas discovery lists (default: every schema but the system ones). */
  schemas?: string[];
}

export interface SqlConnectionSecrets {
  password?: string;
}

/** The non-secret settings of an http_json datasource; the password, token or header value comes from `secrets`. */
export interface HttpJsonConfig {
  baseUrl: string;
  auth: 'none' | 'basic' | 'bearer' | 'header';
  username?: string;
  headerName?: string;
  healthPath: string;
  defaultHeaders?: Record<string, string>;
}

/** The settings of a csv datasource: an uploaded file (PUT /datasources/:id/file) or a file at `url`. */
export interface CsvConfig {
  source: 'upload' | 'url';
  url?: string;
  delimiter: string;
  encoding: 'utf-8' | 'latin1' | 'utf-16le';
  header: boolean;
}

export interface HttpJsonSecrets {
  password?: string;
  token?: string;
  headerValue?: string;
}

/** The request as it is sent, values substituted; no secret (the activity adds the datasource's auth). */
export interface CompiledHttpRequest {
  method: 'GET' | 'POST';
  /** Encoded path, relative to the datasource's baseUrl. */
  path: string;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** JSON body (POST). */
  body?: unknown;
  rowsPath?: string;
  transform?: string;
  /** The values, for `transform` (`{rows, params}`), as JSON. */
  params: Record<string, unknown>;
}

/**
 * A statement with bind parameters only ($1.. for postgres, ? for mysql), from domain/reporting/sql.ts;
 * for an http query `text` is empty and `request` holds the request (domain/reporting/http-request.ts).
 */
export interface CompiledQuery {
  text: string;
  values: unknown[];
  request?: CompiledHttpRequest;
  /** A `table` query (csv): its optional transform and the values it sees as `params`. */
  table?: { transform?: string; params: Record<string, unknown> };
}

export interface QueryLimits {
  /** The statement's deadline; the database cancels it (ERR_QRY_007). */
  timeoutMs: number;
  /** Rows kept; one more is read to know whether the result was cut. */
  maxRows: number;
  /** Uncompressed NDJSON bytes of the result (ERR_QRY_010). */
  maxBytes: number;
  /** `fail`: ERR_QRY_008 past maxRows; `truncate`: keep maxRows and say `truncated`. */
  onRowLimit: 'fail' | 'truncate';
}

/** Where a runner writes the result, one JSON object per line, while it reads it. */
export interface RowSink {
  write(line: string): Promise<void>;
}

export interface ResultColumn {
  name: string;
  /** The database's type name as it reports it (`int4`, `numeric`, `varchar`, `DECIMAL`...). */
  dataType: string;
}

export interface QueryResultSummary {
  columns: ResultColumn[];
  rowCount: number;
  truncated: boolean;
  /** NDJSON bytes written to the sink. */
  bytes: number;
  durationMs: number;
}

export interface DiscoveredSchema {
  refreshedAt: string;
  tables: Array<{
    schema: string;
    name: string;
    type: 'table' | 'view';
    columns: Array<{ name: string; dataType: string; nullable: boolean; ordinal: number }>;
  }>;
  /** More than 2,000 tables or 50,000 columns: the list was cut there. */
  truncated: boolean;
}

export interface ConnectionTest {
  latencyMs: number;
  serverVersion: string;
}

export interface QueryRunner {
  /** Opens a connection, asks the server's version, closes. */
  test(): Promise<ConnectionTest>;
  discoverSchema(): Promise<DiscoveredSchema>;
  /** Runs one read-only statement within the limits, streaming rows to the sink. */
  run(query: CompiledQuery, limits: QueryLimits, sink: RowSink, signal?: AbortSignal): Promise<QueryResultSummary>;
  close(): Promise<void>;
}
