import type { KeyObject } from 'node:crypto';
import { createMysqlRunner, createPostgresRunner, type TcpGuard } from '@formwork/query-runners';
import { AppError, isConnectionFailure, type QueryLimits, type QueryResultSummary, type QueryRunner, type SqlConnectionConfig } from '@formwork/wire';
import type { TaskFailure } from './client';
import { ResultFile } from './result-file';
import { createSqliteRunner } from './sqlite-runner';
import { taskSecrets, type LeasedTask } from './task';

/**
 * The agent runs inside the customer's network, next to the databases it was installed for: every
 * host its datasources name is one it is meant to reach, private addresses included. The server's
 * SSRF guard (OUTBOUND_ALLOWLIST) protects the service's network, not this one. The host name is
 * passed on as it is (the driver resolves it).
 */
const ALLOW_ALL: TcpGuard = { resolveTcp: async (host) => host };

const DEFAULT_LIMITS = { maxRows: 10_000, timeoutSeconds: 60 };

/** What a finished task sends: a JSON result (test, schema) or a result file (query, preview). */
export type TaskOutcome = { kind: 'json'; body: Record<string, unknown> } | { kind: 'rows'; file: ResultFile; summary: QueryResultSummary };

function createRunner(task: LeasedTask, secrets: Record<string, string | undefined>): QueryRunner {
  const { kind, config } = task.datasource;
  switch (kind) {
    case 'postgres':
      return createPostgresRunner({ config: config as unknown as SqlConnectionConfig, secrets, guard: ALLOW_ALL });
    case 'mysql':
      return createMysqlRunner({ config: config as unknown as SqlConnectionConfig, secrets, guard: ALLOW_ALL });
    case 'sqlite':
      return createSqliteRunner({ config });
    default:
      throw new AppError('ERR_DS_005', `The agent does not run ${kind} datasources`, { field: 'kind' });
  }
}

function queryLimits(task: LeasedTask, maxResultBytes: number): QueryLimits {
  const l = task.limits ?? {};
  const positive = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback);
  return {
    timeoutMs: Math.round(positive(l.timeoutSeconds, DEFAULT_LIMITS.timeoutSeconds) * 1000),
    maxRows: Math.floor(positive(l.maxRows, DEFAULT_LIMITS.maxRows)),
    maxBytes: Math.min(positive(l.maxBytes, maxResultBytes), maxResultBytes),
    onRowLimit: l.onRowLimit === 'truncate' || (l.onRowLimit === undefined && task.kind === 'preview') ? 'truncate' : 'fail',
  };
}

export interface ExecuteContext {
  projectId: string;
  privateKey: KeyObject;
  maxResultBytes: number;
  signal: AbortSignal;
}

/** Runs a leased task to its outcome; throws what the runner threw (or the abort reason). The caller disposes a result file. */
export async function executeTask(task: LeasedTask, ctx: ExecuteContext): Promise<TaskOutcome> {
  const runner = createRunner(task, taskSecrets(task, ctx.projectId, ctx.privateKey));
  const abortable = <T>(work: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(ctx.signal.reason as Error);
      if (ctx.signal.aborted) return onAbort();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => ctx.signal.removeEventListener('abort', onAbort));
    });
  try {
    if (task.kind === 'test') {
      const { latencyMs, serverVersion } = await abortable(runner.test());
      return { kind: 'json', body: { ok: true, latencyMs, serverVersion } };
    }
    if (task.kind === 'schema') {
      return { kind: 'json', body: { ...(await abortable(runner.discoverSchema())) } };
    }
    if (!task.statement || typeof task.statement.sql !== 'string') throw new AppError('ERR_QRY_002', 'The task has no statement');
    const file = await ResultFile.create();
    try {
      const summary = await runner.run({ text: task.statement.sql, values: Array.isArray(task.statement.values) ? task.statement.values : [] }, queryLimits(task, ctx.maxResultBytes), file.sink, ctx.signal);
      await file.finish();
      return { kind: 'rows', file, summary };
    } catch (err) {
      await file.dispose();
      throw err;
    }
  } finally {
    // test/schema keep running in the driver after an abort until they end on their own; close stops what it can.
    void runner.close().catch(() => undefined);
  }
}

/**
 * A runner error as the task failure the service records: the catalogue code and the runner's
 * message (which holds SQLSTATEs and query-text errors, never a secret); `retryable` only for a
 * connection failure. Anything that is not an AppError is reported without its text.
 */
export function failureOf(err: unknown): TaskFailure {
  if (err instanceof AppError) {
    const dbCode = err.relatedInfo?.dbCode;
    return {
      code: err.code,
      message: err.message.slice(0, 2000),
      retryable: isConnectionFailure(err),
      ...(typeof dbCode === 'string' || typeof dbCode === 'number' ? { dbCode: String(dbCode).slice(0, 32) } : {}),
    };
  }
  return { code: 'AGENT_ERROR', message: `The agent failed to run the task (${err instanceof Error ? err.name : typeof err})`, retryable: false };
}
