import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { NdjsonWriter } from '@formwork/query-runners';
import { AppError, assembleSchema, type CompiledQuery, type ConnectionTest, type DiscoveredSchema, type QueryLimits, type QueryResultSummary, type QueryRunner, type ResultColumn, type RowSink } from '@formwork/wire';
import type { SqliteCatalog, SqliteReply, SqliteRequest } from './sqlite-protocol';

/**
 * The SQLite runner of the agent (docs/agent.md "SQLite"; docs/reporting.md "Datasource kinds", "Read-only execution"):
 * the same QueryRunner port as the server's PostgreSQL and MySQL runners. The file is opened read-only and must exist;
 * only a statement SQLite itself calls a read-only reader runs (else ERR_QRY_009); rows go through
 * the same NdjsonWriter (maxRows + 1 read, onRowLimit, maxBytes, value conversion).
 *
 * Each operation runs in a child process (agent/src/sqlite-child.ts) that is killed at the deadline
 * (ERR_QRY_007) or on abort. Not a worker thread: a statement busy inside SQLite (an aggregate over
 * a long recursive CTE) never returns to JavaScript, so Worker.terminate() waits for it forever and
 * even process.exit() hangs behind it; a process can be killed wherever it is.
 */

const CHILD_FILE = join(__dirname, 'sqlite-child.js');
const TEST_TIMEOUT_MS = 10_000;
const DISCOVERY_TIMEOUT_MS = 30_000;

/** Children still running: killed with the agent, whatever they are doing. */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

interface Conversation {
  /** Each message in order; resolve `finish` to end the conversation (the child is killed if still running). */
  onMessage(reply: SqliteReply, ask: () => void): Promise<boolean>;
}

/** Forks a child for `request`, feeds its replies to `conversation`, and kills it at `timeoutMs` or on abort. */
function converse(request: SqliteRequest, timeoutMs: number, signal: AbortSignal | undefined, conversation: Conversation): Promise<void> {
  signal?.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const child = fork(CHILD_FILE, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'], execArgv: [] });
    children.add(child);
    let settled = false;
    let queue = Promise.resolve();
    const end = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      children.delete(child);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (err === undefined) resolve();
      else reject(err as Error);
    };
    const timer = setTimeout(() => end(new AppError('ERR_QRY_007', undefined, { timeoutMs })), timeoutMs);
    const onAbort = () => end(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const ask = () => {
      if (!settled && child.connected) child.send({ op: 'more' });
    };
    child.on('message', (reply: SqliteReply) => {
      queue = queue
        .then(async () => {
          if (settled) return;
          if (reply.type === 'error') {
            const detail = reply.code === 'ERR_QRY_006' ? new AppError('ERR_QRY_006', `Query failed in SQLite${reply.dbCode ? ` (${reply.dbCode})` : ''}: ${reply.message.slice(0, 300)}`, reply.dbCode ? { dbCode: reply.dbCode } : undefined) : new AppError(reply.code, reply.message, reply.reason ? { reason: reply.reason } : undefined);
            end(detail);
          } else if (await conversation.onMessage(reply, ask)) {
            end();
          }
        })
        .catch(end);
    });
    child.on('error', (err) => end(new AppError('ERR_QRY_006', `The SQLite process could not run: ${err.message}`)));
    // 'close' comes after the exit and after the IPC channel delivered its last message; replies
    // already received are handled first (the child exits right after its last one).
    child.on('close', (code, sig) => {
      void queue.then(() => end(new AppError('ERR_QRY_006', `The SQLite process ended early (${sig ?? `exit ${String(code)}`})`)));
    });
    child.send(request);
  });
}

export function createSqliteRunner({ config }: { config: { path?: unknown } }): QueryRunner {
  const path = typeof config.path === 'string' ? config.path : '';

  function requirePath(): void {
    if (!path) throw new AppError('ERR_DS_002', 'A sqlite datasource needs config.path (the file on the agent host)', { field: 'config.path' });
  }

  async function test(): Promise<ConnectionTest> {
    requirePath();
    let answer: ConnectionTest | undefined;
    await converse({ op: 'test', path }, TEST_TIMEOUT_MS, undefined, {
      onMessage: async (reply) => {
        if (reply.type !== 'result') return false;
        answer = reply.value as ConnectionTest;
        return true;
      },
    });
    return answer as ConnectionTest;
  }

  async function discoverSchema(): Promise<DiscoveredSchema> {
    requirePath();
    let catalog: SqliteCatalog | undefined;
    await converse({ op: 'schema', path }, DISCOVERY_TIMEOUT_MS, undefined, {
      onMessage: async (reply) => {
        if (reply.type !== 'result') return false;
        catalog = reply.value as SqliteCatalog;
        return true;
      },
    });
    const { tables, columns } = catalog as SqliteCatalog;
    return assembleSchema(
      tables.map((t) => ({ schema: 'main', name: t.name, type: t.type })),
      columns.map((c) => ({ schema: 'main', table: c.table, name: c.name, dataType: c.dataType, nullable: c.nullable, ordinal: c.ordinal })),
    );
  }

  async function run(query: CompiledQuery, limits: QueryLimits, sink: RowSink, signal?: AbortSignal): Promise<QueryResultSummary> {
    requirePath();
    const started = Date.now();
    const writer = new NdjsonWriter(sink, limits);
    let columns: ResultColumn[] = [];
    let names: string[] = [];
    await converse({ op: 'run', path, sql: query.text, values: query.values ?? [], maxRows: limits.maxRows + 1 }, limits.timeoutMs, signal, {
      onMessage: async (reply, ask) => {
        if (reply.type === 'columns') {
          columns = reply.columns;
          names = columns.map((c) => c.name);
          return false;
        }
        if (reply.type === 'rows') {
          for (const row of reply.rows) {
            // Truncated: enough rows are kept; the child is stopped.
            if (!(await writer.push(names, row))) return true;
          }
          ask();
          return false;
        }
        return reply.type === 'end';
      },
    });
    return { columns, rowCount: writer.rowCount, truncated: writer.truncated, bytes: writer.bytes, durationMs: Date.now() - started };
  }

  return { test, discoverSchema, run, close: async () => undefined };
}
