import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client, types as pgTypes, type DatabaseError, type FieldDef } from 'pg';
import Cursor from 'pg-cursor';
import { AppError, assembleSchema, cleartextRefused, type CompiledQuery, type ConnectionTest, type DiscoveredSchema, MAX_DISCOVERED_COLUMNS, MAX_DISCOVERED_TABLES, mayRevealPassword, type QueryLimits, type QueryResultSummary, type QueryRunner, type RowSink, type SqlConnectionConfig, type SqlConnectionSecrets } from '@formwork/wire';
import type { TcpGuard } from './tcp-guard';
import { NdjsonWriter } from './ndjson-sink';
import { createWireGuard, PROBE_WIRE_CAPS, resultWireCaps, type WireCaps, type WireGuard } from './wire-guard';
import type { Duplex } from 'node:stream';

/**
 * The direct PostgreSQL runner (docs/reporting.md "Read-only execution"): every connection goes to
 * the address the outbound guard checked, starts with the statement timeout in its startup
 * parameters, and runs one statement per read-only transaction through the extended protocol.
 */

const CONNECT_TIMEOUT_MS = 10_000;
/**
 * The client's own deadline over a connection's whole use, past the server-side statement timeout:
 * a server that completes the handshake and goes silent (or ignores statement_timeout) has its
 * socket destroyed and the call answers ERR_QRY_007 instead of holding it forever.
 */
const CLIENT_GRACE_MS = 5_000;
const DISCOVERY_TIMEOUT_MS = 30_000;
const BATCH_ROWS = 2_000;
/** Catalogue rows read per cursor batch during discovery. */
const DISCOVERY_BATCH_ROWS = 1_000;

/** OIDs whose text is kept as the server sends it: `date` and `timestamp` carry no zone to convert. */
const DATE_OID = 1082;
const TIMESTAMP_OID = 1114;

const resultTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === DATE_OID) return (text: string) => text;
    if (oid === TIMESTAMP_OID) return (text: string) => text.replace(' ', 'T');
    return pgTypes.getTypeParser(oid, format ?? 'text');
  },
};

interface PostgresRunnerInput {
  config: SqlConnectionConfig;
  secrets: SqlConnectionSecrets;
  guard: TcpGuard;
}

function sslOptions(config: SqlConnectionConfig): false | ConnectionOptions {
  if (config.ssl === 'disable') return false;
  if (config.ssl === 'require') return { rejectUnauthorized: false };
  const options: ConnectionOptions = { rejectUnauthorized: true };
  if (config.caCert) options.ca = config.caCert;
  // The socket goes to the checked address; the certificate is still checked against the host name.
  if (!isIP(config.host)) options.servername = config.host;
  return options;
}

const isDatabaseError = (err: unknown): err is DatabaseError =>
  typeof (err as { code?: unknown }).code === 'string' && typeof (err as { severity?: unknown }).severity === 'string';

/**
 * A driver error as the catalogue's: the SQLSTATE always, the server's text only for class 42
 * (syntax and names, which come from the query text, not from the data).
 */
function postgresError(err: unknown, text?: string): unknown {
  if (err instanceof AppError) return err;
  if (isDatabaseError(err)) {
    const dbCode = err.code;
    if (dbCode === '42601' && text !== undefined) {
      // The subquery did not parse and the statement does not start as a query (INSERT, COPY,
      // CALL, SET...), or it is a SELECT ... INTO: a refusal, not a syntax mistake.
      const first = /^\s*\(*\s*([a-z]+)/i.exec(text)?.[1]?.toLowerCase();
      if ((first && !QUERY_STARTS.has(first)) || /SELECT \.\.\. INTO/.test(err.message)) {
        return new AppError('ERR_QRY_009', undefined, { dbCode, reason: 'not_a_query' });
      }
    }
    if (dbCode === '57014') return new AppError('ERR_QRY_007');
    if (dbCode === '25006' || dbCode === '25001') return new AppError('ERR_QRY_009', undefined, { dbCode });
    if (dbCode === '42601' && /multiple commands/.test(err.message)) {
      return new AppError('ERR_QRY_009', 'Only one statement may run', { dbCode });
    }
    if (dbCode === '0A000' && /data-modifying/.test(err.message)) return new AppError('ERR_QRY_009', undefined, { dbCode });
    const detail = dbCode?.startsWith('42') ? `: ${err.message.slice(0, 200)}` : '';
    return new AppError('ERR_QRY_006', `Query failed in the database (SQLSTATE ${dbCode})${detail}`, { dbCode });
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') {
    return new AppError('ERR_QRY_006', `Could not connect to the database (${code})`, { dbCode: code });
  }
  if (err instanceof Error && /timeout/i.test(err.message)) {
    return new AppError('ERR_QRY_006', 'Could not connect to the database (timeout)', { dbCode: 'CONNECT_TIMEOUT' });
  }
  return err;
}

/**
 * Counts what the server sends before node-postgres's parser buffers it (packages/query-runners/src/wire-guard.ts):
 * the guard listens on the socket (or, with TLS, the decrypted stream) ahead of the parser, which
 * the client attaches in `connection.attachListeners`.
 */
function guardMessages(client: Client, caps: WireCaps): WireGuard {
  const wire = createWireGuard('postgres', caps);
  const connection = (client as unknown as { connection: { attachListeners(stream: Duplex): void } }).connection;
  const attach = connection.attachListeners.bind(connection);
  connection.attachListeners = (stream) => {
    stream.on('data', (chunk: Buffer) => {
      if (!wire.accept(chunk)) stream.destroy();
    });
    attach(stream);
  };
  return wire;
}

/** Reads a cursor to its end, at most `max` rows (the rest is not read). */
async function readAll<T>(cursor: Cursor<T>, max: number): Promise<T[]> {
  const rows: T[] = [];
  for (;;) {
    const batch = await cursor.read(Math.min(DISCOVERY_BATCH_ROWS, max - rows.length));
    rows.push(...batch);
    if (batch.length === 0 || rows.length >= max) break;
  }
  await cursor.close();
  return rows;
}

export function createPostgresRunner({ config, secrets, guard }: PostgresRunnerInput): QueryRunner {
  const open = new Set<Client>();
  const wires = new WeakMap<Client, WireGuard>();
  const deadlines = new Map<Client, { timer: NodeJS.Timeout; expired: boolean; ms: number }>();

  /** The deadline's error when it ended the connection, the guard's when it cut it, else the driver error as the catalogue's. */
  const failure = (client: Client | undefined, err: unknown, text?: string) => {
    const deadline = client && deadlines.get(client);
    if (deadline?.expired) return new AppError('ERR_QRY_007', `The database server did not answer within ${Math.round(deadline.ms / 1000)} s`, { dbCode: 'CLIENT_DEADLINE' });
    return (client && wires.get(client)?.tripped()) || postgresError(err, text);
  };

  async function connect(statementTimeoutMs: number, caps: WireCaps): Promise<Client> {
    const address = await guard.resolveTcp(config.host);
    let cleartextAsked = false;
    const client = new Client({
      host: address,
      port: config.port,
      database: config.database,
      user: config.user,
      // A function, so pg asks for the password only once it knows the method: refused for cleartext (above).
      password: async () => {
        if (cleartextAsked && !mayRevealPassword(config)) throw cleartextRefused();
        return secrets.password as string;
      },
      ssl: sslOptions(config),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: statementTimeoutMs,
      idle_in_transaction_session_timeout: statementTimeoutMs + CONNECT_TIMEOUT_MS,
      application_name: 'formwork-reporting',
    });
    const wire = guardMessages(client, caps);
    wires.set(client, wire);
    const ms = CONNECT_TIMEOUT_MS + statementTimeoutMs + CLIENT_GRACE_MS;
    const deadline = {
      ms,
      expired: false,
      timer: setTimeout(() => {
        deadline.expired = true;
        (client as unknown as ClientInternals).connection.stream.destroy();
      }, ms),
    };
    deadlines.set(client, deadline);
    // Emitted before pg asks for the password (the password function runs after every listener).
    client.connection.on('authenticationCleartextPassword', () => (cleartextAsked = true));
    // A server that goes away mid-query is reported by the query itself; this keeps it from being unhandled.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      const answer = failure(client, err);
      await release(client);
      throw answer;
    }
    open.add(client);
    return client;
  }

  async function release(client: Client): Promise<void> {
    open.delete(client);
    const deadline = deadlines.get(client);
    // A connection the deadline or the guard cut has no server to say goodbye to; a server that
    // never closes its end is cut by the deadline, still armed while end() waits.
    if (!deadline?.expired && !wires.get(client)?.tripped()) await client.end().catch(() => undefined);
    clearTimeout(deadline?.timer);
    deadlines.delete(client);
  }

  async function test(): Promise<ConnectionTest> {
    const started = Date.now();
    const client = await connect(CONNECT_TIMEOUT_MS, PROBE_WIRE_CAPS);
    try {
      const [row] = await readAll(client.query(new Cursor<{ version: string }>('SELECT version() AS version')), 1);
      return { latencyMs: Date.now() - started, serverVersion: String(row?.version ?? '').slice(0, 500) };
    } catch (err) {
      throw failure(client, err);
    } finally {
      await release(client);
    }
  }

  async function discoverSchema(): Promise<DiscoveredSchema> {
    const client = await connect(DISCOVERY_TIMEOUT_MS, PROBE_WIRE_CAPS);
    try {
      await client.query('BEGIN READ ONLY');
      const schemas = config.schemas?.length ? config.schemas : null;
      // Through cursors, one past the cap at most: a server that ignores LIMIT is read no further.
      const tables = await readAll(client.query(new Cursor<{ table_schema: string; table_name: string; table_type: string }>(
        `SELECT table_schema, table_name, table_type FROM information_schema.tables
          WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg\\_toast%'
            AND table_schema NOT LIKE 'pg\\_temp%' AND ($1::text[] IS NULL OR table_schema = ANY($1))
          ORDER BY table_schema, table_name LIMIT $2`,
        [schemas, MAX_DISCOVERED_TABLES + 1],
      )), MAX_DISCOVERED_TABLES + 1);
      const kept = tables.slice(0, MAX_DISCOVERED_TABLES);
      const columns = await readAll(client.query(new Cursor<{
        table_schema: string;
        table_name: string;
        column_name: string;
        data_type: string;
        udt_name: string;
        is_nullable: string;
        ordinal_position: number;
      }>(
        `SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable, c.ordinal_position
           FROM information_schema.columns c
           JOIN unnest($1::text[], $2::text[]) AS t(s, n) ON c.table_schema = t.s AND c.table_name = t.n
          ORDER BY c.table_schema, c.table_name, c.ordinal_position LIMIT $3`,
        [kept.map((t) => t.table_schema), kept.map((t) => t.table_name), MAX_DISCOVERED_COLUMNS + 1],
      )), MAX_DISCOVERED_COLUMNS + 1);
      await client.query('ROLLBACK');
      return assembleSchema(
        tables.map((t) => ({ schema: t.table_schema, name: t.table_name, type: t.table_type === 'VIEW' ? 'view' : 'table' })),
        columns.map((c) => ({
          schema: c.table_schema,
          table: c.table_name,
          name: c.column_name,
          dataType: c.data_type === 'USER-DEFINED' || c.data_type === 'ARRAY' ? c.udt_name : c.data_type,
          nullable: c.is_nullable === 'YES',
          ordinal: Number(c.ordinal_position),
        })),
      );
    } catch (err) {
      throw failure(client, err);
    } finally {
      await release(client);
    }
  }

  async function run(
    query: CompiledQuery,
    limits: QueryLimits,
    sink: RowSink,
    signal?: AbortSignal,
  ): Promise<QueryResultSummary> {
    const started = Date.now();
    signal?.throwIfAborted();
    const client = await connect(limits.timeoutMs, resultWireCaps(limits.maxBytes));
    // Cancelling sends the server a cancel request for this backend (from a second socket to the same
    // checked address, as pg does) and closes the connection at once.
    const onAbort = () => cancel(client);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await client.query('BEGIN READ ONLY');
      // Takes the snapshot: from here on `SET TRANSACTION READ WRITE` fails (25001).
      await client.query('SELECT 1');
      const cursor = client.query(new Cursor(asSubquery(query.text), query.values, { rowMode: 'array', types: resultTypes }));
      const writer = new NdjsonWriter(sink, limits);
      let fields: FieldDef[] = [];
      let names: string[] = [];
      for (let reading = true; reading; ) {
        const want = Math.min(BATCH_ROWS, limits.maxRows + 1 - writer.rowCount);
        const rows = await new Promise<unknown[][]>((resolve, reject) => {
          cursor.read(want, (err, batch, result) => {
            if (err) return reject(err);
            if (result?.fields?.length && !fields.length) {
              fields = result.fields;
              names = fields.map((f) => f.name);
            }
            resolve(batch as unknown as unknown[][]);
          });
        });
        for (const row of rows) {
          if (!(await writer.push(names, row))) {
            reading = false;
            break;
          }
        }
        if (rows.length < want || writer.rowCount > limits.maxRows) reading = false;
      }
      await cursor.close();
      await client.query('ROLLBACK');
      return {
        columns: fields.map((f) => ({ name: f.name, dataType: typeName(f.dataTypeID) })),
        rowCount: writer.rowCount,
        truncated: writer.truncated,
        bytes: writer.bytes,
        durationMs: Date.now() - started,
      };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw failure(client, err, query.text);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await release(client);
    }
  }

  async function close(): Promise<void> {
    await Promise.all([...open].map(release));
  }

  return { test, discoverSchema, run, close };
}

interface ClientInternals {
  host: string;
  port: number;
  activeQuery: unknown;
  connection: { stream: { destroy(): void } };
  cancel(target: Client, query: unknown): void;
}

function cancel(client: Client): void {
  const target = client as unknown as ClientInternals;
  const canceller = new Client({ host: target.host, port: target.port }) as unknown as ClientInternals & Client;
  canceller.on('error', () => undefined);
  if (target.activeQuery) canceller.cancel(client, target.activeQuery);
  target.connection.stream.destroy();
}

/**
 * The statement as a subquery, so only a query can run: `COPY` (whose `TO STDOUT` data pg-cursor
 * cannot take and whose `TO '<file>'` writes on the server as a superuser), `SELECT ... INTO`,
 * a data-modifying `WITH`, `CALL`, `SET` and every other command fail to parse here before the
 * read-only transaction is even needed. The line breaks keep a trailing `--` comment inside.
 */
function asSubquery(text: string): string {
  // SHOW and EXPLAIN cannot be subqueries; they answer with rows and the read-only transaction
  // refuses what EXPLAIN ANALYZE would write.
  if (/^\s*(show|explain)\s/i.test(text)) return text;
  return `SELECT * FROM (\n${text}\n) AS formwork_query`;
}

/** The words a query may start with inside a subquery. */
const QUERY_STARTS = new Set(['select', 'with', 'values', 'table', 'show', 'explain']);

/** pg's builtin type names by OID (`int4`, `numeric`...), the OID itself for others. */
function typeName(oid: number): string {
  const builtins = pgTypes.builtins as unknown as Record<string, number>;
  for (const [name, id] of Object.entries(builtins)) {
    if (id === oid) return name.toLowerCase();
  }
  return String(oid);
}
