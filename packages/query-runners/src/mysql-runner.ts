import { connect as netConnect } from 'node:net';
import type { Readable } from 'node:stream';
import { authPlugins, createConnection, Types, type Connection, type ConnectionOptions, type FieldPacket, type SslOptions } from 'mysql2';
import { AppError, assembleSchema, cleartextRefused, type CompiledQuery, type ConnectionTest, type DiscoveredSchema, MAX_DISCOVERED_COLUMNS, MAX_DISCOVERED_TABLES, mayRevealPassword, type QueryLimits, type QueryResultSummary, type QueryRunner, type RowSink, type SqlConnectionConfig, type SqlConnectionSecrets } from '@formwork/wire';
import type { TcpGuard } from './tcp-guard';
import { NdjsonWriter } from './ndjson-sink';
import { createWireGuard, PROBE_WIRE_CAPS, resultWireCaps, type WireCaps, type WireGuard } from './wire-guard';

/**
 * The direct MySQL/MariaDB runner (docs/reporting.md "Read-only execution"): the socket goes to the
 * address the outbound guard checked, `multipleStatements` is never enabled, and every statement
 * runs as a server-side prepared statement inside `START TRANSACTION READ ONLY` with the server's
 * own statement deadline, then rolls back.
 */

const CONNECT_TIMEOUT_MS = 10_000;
/** The client's own deadline over a test or a discovery (a run's is its timeout and CLIENT_GRACE_MS): a silent server's socket is destroyed (ERR_QRY_007). */
const PROBE_DEADLINE_MS = 30_000;
const CLIENT_GRACE_MS = 5_000;

/** MariaDB's max_statement_time ended it (1969), MySQL's max_execution_time (3024). */
const TIMEOUT_ERRNOS = new Set([1969, 3024]);
/** Write in a read-only transaction (1792); transaction characteristics changed inside one (1568). */
const READ_ONLY_ERRNOS = new Set([1792, 1568]);

interface MysqlRunnerInput {
  config: SqlConnectionConfig;
  secrets: SqlConnectionSecrets;
  guard: TcpGuard;
}

interface MysqlDriverError {
  errno?: number;
  code?: string;
  sqlState?: string;
  sqlMessage?: string;
  fatal?: boolean;
}

/** Syntax (1064) and name errors (42S..): their text comes from the query, not the data. */
const SAFE_TEXT_ERRNOS = new Set([1054, 1064, 1146, 1049, 1052, 1305]);

function mysqlError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as MysqlDriverError;
  if (typeof e.errno === 'number' && typeof e.sqlState === 'string') {
    if (TIMEOUT_ERRNOS.has(e.errno)) return new AppError('ERR_QRY_007');
    const dbCode = String(e.errno);
    if (READ_ONLY_ERRNOS.has(e.errno)) return new AppError('ERR_QRY_009', undefined, { dbCode });
    const detail = SAFE_TEXT_ERRNOS.has(e.errno) && e.sqlMessage ? `: ${e.sqlMessage.slice(0, 200)}` : '';
    return new AppError('ERR_QRY_006', `Query failed in the database (error ${dbCode})${detail}`, { dbCode });
  }
  if (typeof e.code === 'string') {
    return new AppError('ERR_QRY_006', `Could not connect to the database (${e.code})`, { dbCode: e.code });
  }
  return err;
}

function sslOptions(config: SqlConnectionConfig): SslOptions | undefined {
  if (config.ssl === 'disable') return undefined;
  if (config.ssl === 'require') return { rejectUnauthorized: false };
  return { rejectUnauthorized: true, verifyIdentity: true, ...(config.caCert ? { ca: config.caCert } : {}) };
}

/** caching_sha2_password: the server asks for full authentication (the password itself, in TLS or RSA-encrypted to a key it sends). */
const PERFORM_FULL_AUTHENTICATION = Buffer.from([4]);

/**
 * mysql2's own authentication plugins, except that the password itself leaves only when the datasource
 * may reveal it (`mayRevealPassword`: `allowCleartextPassword` or `verify-full` TLS):
 * `mysql_clear_password` sends it in clear; `sha256_password` and the full authentication of
 * `caching_sha2_password` send it inside TLS or encrypted to an RSA key the server itself hands over,
 * which a hostile server decrypts. Refused, the plugin throws before anything is written;
 * `refused()` tells the runner why the handshake failed. Scrambles (native, sha2 fast auth) are unchanged.
 */
function guardedAuthPlugins(config: SqlConnectionConfig, onRefused: () => void): NonNullable<ConnectionOptions['authPlugins']> {
  if (mayRevealPassword(config)) return {};
  // A rejected promise: mysql2 fails the handshake with it (authSwitchPluginError) and writes nothing.
  const refuse = (): Promise<never> => {
    onRefused();
    return Promise.reject(cleartextRefused());
  };
  return {
    mysql_clear_password: () => () => refuse(),
    sha256_password: () => () => refuse(),
    caching_sha2_password: (meta) => {
      const plugin = authPlugins.caching_sha2_password({})(meta);
      return (data) => (PERFORM_FULL_AUTHENTICATION.equals(data) ? refuse() : plugin(data));
    },
  };
}

function call<T>(conn: Connection, sql: string, values?: unknown[]): Promise<T> {
  return new Promise((resolve, reject) => {
    conn.query(sql, values ?? [], (err, result) => (err ? reject(err) : resolve(result as T)));
  });
}

function typeName(field: FieldPacket): string {
  const type = (field as { columnType?: number; type?: number }).columnType ?? field.type;
  const names = Types as unknown as Record<string | number, string | number>;
  const name = type === undefined ? undefined : names[type];
  return typeof name === 'string' ? name : String(type);
}

/**
 * Counts what the server sends before mysql2's packet parser buffers it (packages/query-runners/src/wire-guard.ts):
 * the connection hands every chunk, plain or decrypted, to `packetParser.execute`, so the guard sits in front of it.
 */
function guardPackets(conn: Connection, caps: WireCaps): WireGuard {
  const wire = createWireGuard('mysql', caps);
  const internals = conn as unknown as { packetParser: { execute(chunk: Buffer): void }; stream?: { destroy(): void } };
  const parser = internals.packetParser;
  internals.packetParser = {
    execute(chunk) {
      if (wire.accept(chunk)) parser.execute(chunk);
      else internals.stream?.destroy();
    },
  };
  return wire;
}

export function createMysqlRunner({ config, secrets, guard }: MysqlRunnerInput): QueryRunner {
  const open = new Set<Connection>();
  const wires = new WeakMap<Connection, WireGuard>();
  const deadlines = new WeakMap<Connection, { timer: NodeJS.Timeout; expired: boolean; ms: number }>();

  /** The deadline's error when it ended the connection, the guard's when it cut it, else the driver error as the catalogue's. */
  const failure = (conn: Connection, err: unknown) => {
    const deadline = deadlines.get(conn);
    if (deadline?.expired) return new AppError('ERR_QRY_007', `The database server did not answer within ${Math.round(deadline.ms / 1000)} s`, { dbCode: 'CLIENT_DEADLINE' });
    return wires.get(conn)?.tripped() || mysqlError(err);
  };

  async function connect(caps: WireCaps = PROBE_WIRE_CAPS, deadlineMs = PROBE_DEADLINE_MS): Promise<{ conn: Connection; version: string; mariadb: boolean }> {
    const address = await guard.resolveTcp(config.host);
    let refused = false;
    const conn = createConnection({
      // The name stays for TLS (servername, identity check); the socket goes to the checked address.
      host: config.host,
      port: config.port,
      stream: () => netConnect(config.port, address),
      user: config.user,
      password: secrets.password,
      authPlugins: guardedAuthPlugins(config, () => (refused = true)),
      enableCleartextPlugin: mayRevealPassword(config),
      database: config.database,
      ssl: sslOptions(config),
      connectTimeout: CONNECT_TIMEOUT_MS,
      multipleStatements: false,
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: ['DATE'],
      timezone: 'Z',
      rowsAsArray: true,
    });
    const wire = guardPackets(conn, caps);
    wires.set(conn, wire);
    const deadline = {
      ms: deadlineMs,
      expired: false,
      timer: setTimeout(() => {
        deadline.expired = true;
        release(conn);
      }, deadlineMs),
    };
    deadlines.set(conn, deadline);
    conn.on('error', () => undefined);
    try {
      await new Promise<void>((resolve, reject) => {
        conn.once('connect', () => resolve());
        conn.once('error', reject);
      });
      open.add(conn);
      const [[version]] = await call<string[][]>(conn, 'SELECT VERSION()');
      // TIMESTAMP values come in UTC, which is how the driver reads them (`timezone: 'Z'`).
      await call(conn, "SET time_zone = '+00:00'");
      return { conn, version, mariadb: /mariadb/i.test(version) };
    } catch (err) {
      const answer = failure(conn, err);
      release(conn);
      throw refused ? cleartextRefused() : answer;
    }
  }

  /** Closes at once: the driver's destroy() only half-closes the socket, which a busy server keeps open. */
  function release(conn: Connection): void {
    open.delete(conn);
    clearTimeout(deadlines.get(conn)?.timer);
    conn.destroy();
    (conn as unknown as { stream?: { destroy(): void } }).stream?.destroy();
  }

  /** Says goodbye; a server that never answers it is cut by the deadline, still armed meanwhile. */
  async function end(conn: Connection): Promise<void> {
    open.delete(conn);
    await new Promise<void>((resolve) => conn.end(() => resolve()));
    clearTimeout(deadlines.get(conn)?.timer);
  }

  async function test(): Promise<ConnectionTest> {
    const started = Date.now();
    const { conn, version } = await connect();
    await end(conn);
    return { latencyMs: Date.now() - started, serverVersion: version };
  }

  async function discoverSchema(): Promise<DiscoveredSchema> {
    const { conn } = await connect();
    try {
      await call(conn, 'START TRANSACTION READ ONLY');
      const excluded = ['information_schema', 'performance_schema', 'mysql', 'sys'];
      const schemas = config.schemas?.length ? config.schemas : [config.database];
      const tables = await call<Array<[string, string, string]>>(
        conn,
        `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES
          WHERE TABLE_SCHEMA NOT IN (?, ?, ?, ?) AND TABLE_SCHEMA IN (?)
          ORDER BY TABLE_SCHEMA, TABLE_NAME LIMIT ?`,
        [...excluded, schemas, MAX_DISCOVERED_TABLES + 1],
      );
      // Columns of every listed schema's tables; assembleSchema drops those of tables past the cap.
      const columns = await call<Array<[string, string, string, string, string, number]>>(
        conn,
        `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, ORDINAL_POSITION
           FROM information_schema.COLUMNS
          WHERE TABLE_SCHEMA NOT IN (?, ?, ?, ?) AND TABLE_SCHEMA IN (?)
          ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION LIMIT ?`,
        [...excluded, schemas, MAX_DISCOVERED_COLUMNS + 1],
      );
      await call(conn, 'ROLLBACK');
      await end(conn);
      return assembleSchema(
        tables.map(([schema, name, type]) => ({ schema, name, type: /VIEW/.test(type) ? 'view' : 'table' })),
        columns.map(([schema, table, name, dataType, nullable, ordinal]) => ({ schema, table, name, dataType, nullable: nullable === 'YES', ordinal: Number(ordinal) })),
      );
    } catch (err) {
      release(conn);
      throw failure(conn, err);
    }
  }

  async function run(
    query: CompiledQuery,
    limits: QueryLimits,
    sink: RowSink,
    signal?: AbortSignal,
  ): Promise<QueryResultSummary> {
    signal?.throwIfAborted();
    const { conn, mariadb } = await connect(resultWireCaps(limits.maxBytes), CONNECT_TIMEOUT_MS + limits.timeoutMs + CLIENT_GRACE_MS);
    // Cancelling closes the connection (the server ends the statement and rolls back) and answers at
    // once: the driver does not fail a command whose socket it destroyed.
    let stream: Readable | undefined;
    let onAbort = () => undefined as void;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        reject(new Error('aborted'));
        stream?.destroy();
        release(conn);
        void killQuery(conn.threadId);
      };
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    const state = { clean: false };
    const work = execute(conn, mariadb, query, limits, sink, (s) => (stream = s), state);
    work.catch(() => undefined);
    try {
      return await (signal ? Promise.race([work, aborted]) : work);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw failure(conn, err);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // A result not read to its end (cap reached, error) closes the connection: the server rolls back.
      if (state.clean && !signal?.aborted) await end(conn);
      else release(conn);
    }
  }

  /** The server keeps running a statement whose client left: a second connection ends it. */
  async function killQuery(threadId: number | null): Promise<void> {
    if (!threadId) return;
    try {
      const { conn } = await connect();
      await call(conn, `KILL QUERY ${Number(threadId)}`).catch(() => undefined);
      await end(conn);
    } catch {
      // Best effort: the statement's own deadline ends it anyway.
    }
  }

  async function execute(
    conn: Connection,
    mariadb: boolean,
    query: CompiledQuery,
    limits: QueryLimits,
    sink: RowSink,
    onStream: (stream: Readable) => void,
    state: { clean: boolean },
  ): Promise<QueryResultSummary> {
    const started = Date.now();
    await call(conn, 'START TRANSACTION READ ONLY');
    let text = query.text;
    if (mariadb) {
      const seconds = Math.max(0.001, limits.timeoutMs / 1000);
      text = `SET STATEMENT max_statement_time=${seconds} FOR ${text}`;
    } else {
      await call(conn, `SET SESSION max_execution_time=${Math.max(1, Math.round(limits.timeoutMs))}`);
    }
    // Only a statement that answers with rows may run: the server's own description of the
    // prepared statement says so before anything executes. DROP, CALL, SET GLOBAL, DO and
    // SELECT ... INTO OUTFILE / @var have no result columns (a READ ONLY transaction alone lets
    // MariaDB run DROP TABLE, and a privileged user SET GLOBAL).
    const columnCount = await new Promise<number>((resolve, reject) => {
      conn.prepare(text, (err, statement) =>
        err ? reject(err) : resolve((statement as unknown as { columns: unknown[] }).columns.length),
      );
    });
    if (columnCount === 0) {
      throw new AppError('ERR_QRY_009', 'Only statements that return rows may run', { reason: 'no_result_columns' });
    }
    const writer = new NdjsonWriter(sink, limits);
    let fields: FieldPacket[] = [];
    const command = conn.execute(text, query.values as never[]);
    command.on('fields', (f: FieldPacket[] | FieldPacket) => {
      if (!fields.length) fields = Array.isArray(f) ? f : [f];
    });
    const stream = command.stream({ highWaterMark: 100 });
    onStream(stream);
    let stopped = false;
    for await (const row of stream) {
      const names = fields.map((f) => f.name);
      if (!(await writer.push(names, row as unknown[]))) {
        stopped = true;
        break;
      }
    }
    if (!stopped) {
      await call(conn, 'ROLLBACK');
      state.clean = true;
    }
    return {
      columns: fields.map((f) => ({ name: f.name, dataType: typeName(f) })),
      rowCount: writer.rowCount,
      truncated: writer.truncated,
      bytes: writer.bytes,
      durationMs: Date.now() - started,
    };
  }

  async function close(): Promise<void> {
    for (const conn of [...open]) release(conn);
  }

  return { test, discoverSchema, run, close };
}
