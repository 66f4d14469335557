import type Database from 'better-sqlite3';
import { MAX_DISCOVERED_COLUMNS, MAX_DISCOVERED_TABLES } from '@formwork/wire';
import type { SqliteReply, SqliteRequest } from './sqlite-protocol';

/**
 * The process that touches a SQLite file (agent/src/sqlite-runner.ts forks one per operation). It
 * opens the file read-only (and only if it exists), prepares one statement, refuses it unless SQLite
 * says it only reads, and sends rows in batches, each after the parent asked for more. SQLite has no
 * statement timeout and a statement busy inside SQLite cannot be stopped from JavaScript (not even by
 * terminating a worker thread): the parent kills this process at the deadline.
 */

const BATCH_ROWS = 500;

const send = (reply: SqliteReply) =>
  new Promise<void>((resolve, reject) => {
    process.send?.(reply, undefined, undefined, (err) => (err ? reject(err) : resolve()));
  });

let resume: (() => void) | null = null;
const more = () =>
  new Promise<void>((resolve) => {
    resume = resolve;
  });

/** A value SQLite can bind: numbers, text, bigints, blobs and null; booleans as 0/1, anything else as text or JSON. */
function bindable(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'bigint' || Buffer.isBuffer(value)) return value;
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

/** Integers come as bigints (safeIntegers): a number while exact, else the decimal string; blobs as base64. */
function cell(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

function storageClass(value: unknown): string | undefined {
  if (typeof value === 'bigint') return 'integer';
  // safeIntegers: every INTEGER value comes as a bigint, so a number is always a REAL (241.0 too).
  if (typeof value === 'number') return 'real';
  if (typeof value === 'string') return 'text';
  if (Buffer.isBuffer(value)) return 'blob';
  return undefined;
}

/** Loaded here rather than imported: an agent whose better-sqlite3 did not build still serves PostgreSQL and MySQL, and says why SQLite fails. */
function driver(): typeof Database {
  try {
    return require('better-sqlite3') as typeof Database;
  } catch (err) {
    throw new Error(`better-sqlite3 cannot be loaded on this agent (${(err as Error).message.split('\n')[0]}): build it with scripts/sqlite-driver.sh (needs a C++ toolchain)`);
  }
}

function open(path: string): Database.Database {
  const Sqlite = driver();
  return new Sqlite(path, { readonly: true, fileMustExist: true });
}

async function test(path: string): Promise<void> {
  const started = Date.now();
  const db = open(path);
  const { version } = db.prepare('SELECT sqlite_version() AS version').get() as { version: string };
  db.close();
  await send({ type: 'result', value: { latencyMs: Date.now() - started, serverVersion: `SQLite ${version}` } });
}

async function schema(path: string): Promise<void> {
  const db = open(path);
  const tables = db
    .prepare(`SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT ?`)
    .all(MAX_DISCOVERED_TABLES + 1) as Array<{ type: string; name: string }>;
  const info = db.prepare(`SELECT cid, name, type, "notnull" AS not_null FROM pragma_table_info(?) ORDER BY cid`);
  const columns: Array<{ table: string; name: string; dataType: string; nullable: boolean; ordinal: number }> = [];
  for (const t of tables.slice(0, MAX_DISCOVERED_TABLES)) {
    for (const c of info.all(t.name) as Array<{ cid: number; name: string; type: string; not_null: number }>) {
      columns.push({ table: t.name, name: c.name, dataType: c.type || 'any', nullable: c.not_null === 0, ordinal: c.cid + 1 });
      if (columns.length > MAX_DISCOVERED_COLUMNS) break;
    }
    if (columns.length > MAX_DISCOVERED_COLUMNS) break;
  }
  db.close();
  await send({ type: 'result', value: { tables: tables.map((t) => ({ name: t.name, type: t.type === 'view' ? 'view' : 'table' })), columns } });
}

async function run(path: string, sql: string, values: unknown[], maxRows: number): Promise<void> {
  const db = open(path);
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(sql);
  } catch (err) {
    if (/more than one statement/i.test((err as Error).message)) {
      await send({ type: 'error', code: 'ERR_QRY_009', message: 'Only one statement may run', reason: 'multiple_statements' });
      return;
    }
    throw err;
  }
  // A SELECT (or a read-only PRAGMA or EXPLAIN) answers rows and changes nothing; ATTACH, PRAGMA
  // writes, INSERT ... RETURNING and every other statement are refused before they run.
  if (!stmt.reader || !stmt.readonly) {
    await send({ type: 'error', code: 'ERR_QRY_009', message: 'Only read statements may run', reason: stmt.reader ? 'writes' : 'not_a_query' });
    return;
  }
  stmt.raw(true);
  stmt.safeIntegers(true);
  const declared = stmt.columns().map((c) => ({ name: c.name, type: c.type }));
  let batch: unknown[][] = [];
  let sentColumns = false;
  let read = 0;
  const flush = async () => {
    if (!sentColumns) {
      // Expressions have no declared type: the first value's storage class names it.
      const columns = declared.map((c, i) => ({ name: c.name, dataType: c.type ?? batch.map((r) => storageClass(r[i])).find((s) => s !== undefined) ?? 'any' }));
      await send({ type: 'columns', columns });
      sentColumns = true;
    }
    if (batch.length) {
      const rows = batch.map((r) => r.map(cell));
      batch = [];
      const asked = more();
      await send({ type: 'rows', rows });
      await asked;
    }
  };
  for (const row of stmt.iterate(...values.map(bindable)) as IterableIterator<unknown[]>) {
    batch.push(row);
    read += 1;
    if (read >= maxRows) break;
    if (batch.length >= BATCH_ROWS) await flush();
  }
  await flush();
  db.close();
  await send({ type: 'end' });
}

async function handle(request: SqliteRequest): Promise<void> {
  try {
    if (request.op === 'test') await test(request.path);
    else if (request.op === 'schema') await schema(request.path);
    else await run(request.path, request.sql, request.values, request.maxRows);
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    await send({ type: 'error', code: 'ERR_QRY_006', message: typeof e.message === 'string' ? e.message : 'SQLite failed', dbCode: typeof e.code === 'string' ? e.code : undefined });
  }
  process.exit(0);
}

let started = false;
process.on('message', (message: SqliteRequest | { op: 'more' }) => {
  if (message.op === 'more') {
    const next = resume;
    resume = null;
    next?.();
  } else if (!started) {
    started = true;
    void handle(message);
  }
});
// The agent went away: nothing is left to answer.
process.on('disconnect', () => process.exit(1));
