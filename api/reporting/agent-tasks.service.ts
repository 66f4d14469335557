import { gunzipSync } from 'node:zlib';
import type { DataSource } from 'typeorm';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { AgentTaskEntity, type AgentTaskKind } from '../../db/reporting/agent-task.entity';
import type { DatasourceEntity, DatasourceLastTest } from '../../db/reporting/datasource.entity';
import type { Queryable } from '../../db/sql';
import { AppError } from '../../domain/errors';
import type { CompiledQuery, DiscoveredSchema } from '../../domain/reporting/query-runner';
import { taskSignals } from '../agents/task-signals';
import { queueAgentTask } from '../../db/reporting/agent-task-state';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Connection tests, schema discovery and previews of datasources reached through an agent (docs/reporting.md "Agents",
 * "Tests, schemas and previews through an agent"): the request records a task for the datasource's agent and waits up
 * to its `wait` for the answer; past it the caller answers 202 with the task id, and GET /api/reporting/tasks/:taskId
 * shows the answer when it comes. A task nobody leases within REPORTING_AGENT_QUEUE_TIMEOUT_SECONDS fails ERR_AGENT_012
 * (the maintenance sweep).
 */

/** How often a waiting request looks at its task (one primary-key read): without the LISTEN connection, and with it. */
const PROBE_INTERVAL_MS = 150;
const SIGNALLED_PROBE_MS = 1000;
const DONE = new Set(['completed', 'failed', 'cancelled', 'expired']);
/** Decompressed bytes of a preview result read back (the preview's own cap is 5 MB). */
const PREVIEW_READ_MAX_BYTES = 6 * 1024 * 1024;
export const DEFAULT_WAIT_SECONDS = 20;

/** Records a task for the datasource's agent and waits up to `waitSeconds` for it to end; answers the task as it then is. */
export async function askAgent(db: DataSource, ds: DatasourceEntity, kind: Exclude<AgentTaskKind, 'query'>, payload: Record<string, unknown>, waitSeconds: number): Promise<AgentTaskEntity> {
  if (ds.connectionMode !== 'agent' || !ds.agentId) throw new AppError('ERR_DS_005', 'This datasource is read by the server, not through an agent');
  const id = await queueAgentTask(db, { projectId: ds.projectId, agentId: ds.agentId, kind, datasourceId: ds.id, payload });
  const repo = db.getRepository(AgentTaskEntity);
  const deadline = Date.now() + waitSeconds * 1000;
  const signals = taskSignals(db);
  for (;;) {
    const ended = signals.arm(`d:${id}`);
    const task = await repo.findOneByOrFail({ id });
    if (DONE.has(task.status) || Date.now() >= deadline) {
      ended.cancel();
      return task;
    }
    await ended.wait(Math.min(signals.live ? SIGNALLED_PROBE_MS : PROBE_INTERVAL_MS, Math.max(1, deadline - Date.now())));
  }
}

export const isDone = (task: AgentTaskEntity) => DONE.has(task.status);

/** The 202 answer of a request whose agent has not answered within its wait. */
export const pending = (task: AgentTaskEntity) => ({ taskId: task.shortId, status: task.status });

/** A finished `test` task as the datasource's `lastTest`: the agent's failure is `ok: false`, like a direct test's. */
export function testOutcome(task: AgentTaskEntity): DatasourceLastTest {
  const at = (task.completedAt ?? new Date()).toISOString();
  if (task.status === 'completed') {
    const r = (task.result ?? {}) as { latencyMs?: unknown; serverVersion?: unknown };
    return { at, ok: true, latencyMs: typeof r.latencyMs === 'number' ? r.latencyMs : undefined, serverVersion: typeof r.serverVersion === 'string' ? r.serverVersion.slice(0, 200) : undefined, error: null };
  }
  return { at, ok: false, error: taskError(task) };
}

/** A finished task's error in the catalogue's words (the agent's code when it gave one). */
function taskError(task: AgentTaskEntity): { code: string; message: string } {
  if (task.status === 'expired') return { code: 'ERR_AGENT_006', message: 'The agent lost the task (its lease ran out)' };
  if (task.status === 'cancelled') return { code: 'ERR_AGENT_006', message: 'The task was cancelled' };
  const e = (task.error ?? {}) as { code?: unknown; message?: unknown };
  return { code: typeof e.code === 'string' && e.code ? e.code.slice(0, 50) : 'ERR_AGENT_012', message: typeof e.message === 'string' ? e.message.slice(0, 300) : 'The agent could not run the task' };
}

/**
 * A finished `schema` task's answer, bounded as a discovered schema is (docs/reporting.md "Limits"): at most 2,000
 * tables.
 */
export function schemaOutcome(task: AgentTaskEntity): DiscoveredSchema {
  if (task.status !== 'completed') {
    const e = taskError(task);
    throw new AppError('ERR_QRY_006', e.message, { agentCode: e.code });
  }
  const r = (task.result ?? {}) as { tables?: unknown; truncated?: unknown };
  const tables = Array.isArray(r.tables) ? (r.tables as DiscoveredSchema['tables']).slice(0, 2000) : [];
  return { refreshedAt: (task.completedAt ?? new Date()).toISOString(), tables, truncated: r.truncated === true || (Array.isArray(r.tables) && r.tables.length > 2000) };
}

/**
 * A preview task for a compiled statement, in the agent's task payload shape (docs/reporting.md "The agent protocol").
 */
export function previewPayload(ds: DatasourceEntity, compiled: CompiledQuery, limits: { maxRows: number; timeoutSeconds: number; maxBytes: number }) {
  return { statement: { dialect: ds.kind, sql: compiled.text, values: compiled.values }, limits: { ...limits, onRowLimit: 'truncate' } };
}

/** A finished `preview` task's rows, read back from its result file; the agent's failure is thrown with its code. */
export async function previewOutcome(storage: ArtefactStorage, task: AgentTaskEntity) {
  if (task.status !== 'completed' || !task.resultKey) {
    const e = taskError(task);
    throw new AppError(/^ERR_(QRY|AGENT)_\d{3}$/.test(e.code) ? (e.code as 'ERR_QRY_006') : 'ERR_QRY_006', e.message);
  }
  const { body } = await storage.get(task.resultKey);
  const chunks: Buffer[] = [];
  for await (const c of body as AsyncIterable<Buffer>) chunks.push(c);
  const text = gunzipSync(Buffer.concat(chunks), { maxOutputLength: PREVIEW_READ_MAX_BYTES }).toString('utf8');
  const rows = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  const r = (task.result ?? {}) as { columns?: Array<{ name: string; type: string }>; rowCount?: number; truncated?: boolean; durationMs?: number };
  return { columns: (r.columns ?? []).map((c) => ({ name: c.name, dataType: c.type })), rows, rowCount: r.rowCount ?? rows.length, truncated: r.truncated ?? false, durationMs: r.durationMs ?? 0 };
}

/** GET /api/reporting/tasks/:taskId: an agent task of the project by `atk_` id or UUID (another project's: 404 ERR_AGENT_004). */
export async function getTask(db: Queryable, projectId: string, ref: string): Promise<AgentTaskEntity> {
  const task = await findByIdOrShortId(db, AgentTaskEntity, projectId, ref, 'atk_', 40);
  if (!task) throw new AppError('ERR_AGENT_004');
  return task;
}

/** A finished task's answer for GET /tasks/:taskId: a test's outcome, a schema, a preview's rows, or a query's summary; a failure's error. */
export async function taskAnswer(storage: ArtefactStorage, task: AgentTaskEntity): Promise<unknown> {
  if (task.kind === 'test') return testOutcome(task);
  if (task.status !== 'completed') return { error: taskError(task) };
  if (task.kind === 'schema') return schemaOutcome(task);
  if (task.kind === 'preview') {
    const p = await previewOutcome(storage, task);
    return { ...p, columns: p.columns.map((c) => ({ name: c.name, type: c.dataType })), executedBy: 'agent' };
  }
  const r = (task.result ?? {}) as { rowCount?: number; truncated?: boolean; bytes?: number; durationMs?: number };
  return { rowCount: r.rowCount ?? 0, truncated: r.truncated ?? false, bytes: r.bytes ?? 0, durationMs: r.durationMs ?? 0 };
}
