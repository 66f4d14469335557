import { AGENT_DATASOURCE_KINDS, type DatasourceKind } from '../../domain/reporting/query-runner';
import { randomUUID, createPublicKey } from 'node:crypto';
import type { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import type { DataSource } from 'typeorm';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { AgentEntity, type AgentPool, type AgentRecentError, type AgentSession } from '../../db/reporting/agent.entity';
import { AgentTaskEntity } from '../../db/reporting/agent-task.entity';
import { DatasourceEntity } from '../../db/reporting/datasource.entity';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { keyFingerprint } from '../../domain/reporting/key-fingerprint';
import { sealedSecretAad, sealSecret } from '@formwork/wire';
import { agentKeyStatus, confirmedKey } from './agents.service';
import type { HeartbeatInput, OpenSessionInput, TaskFailureInput } from './agents.schema';
import { taskSignals } from './task-signals';
import { answerTask, leaseNextTask } from '../../db/reporting/agent-task-state';
import { isUuid } from '../../domain/ids';

/**
 * The agent protocol (docs/reporting.md "Agents", "Why agents speak HTTPS, not Temporal", "The agent protocol",
 * "Limits"): sessions, the long poll that leases tasks, heartbeats that renew leases, and result/failure uploads.
 * Tenant isolation is enforced in SQL: an agent leases only queued tasks of its own project whose
 * datasource is bound to it (docs/reporting.md "Tenant scoping").
 */

const POLL_WAIT_SECONDS = 50;
/** At most this long between two heartbeats of an agent; shorter when the heartbeat timeout is (a third of it). */
const HEARTBEAT_INTERVAL_SECONDS = 20;
/**
 * How often a waiting long poll probes for a queued task (one indexed query, no event-loop blocking):
 * often without the LISTEN connection (api/agents/task-signals.ts), rarely with it (the probe then only
 * notices that the agent hung up, or a task its capacity had to leave queued).
 */
const PROBE_INTERVAL_MS = 250;
const SIGNALLED_PROBE_MS = 1000;
/** Result rows: at most this many columns and this long a single NDJSON line (400 ERR_AGENT_008 past either). */
const MAX_RESULT_COLUMNS = 1000;
const MAX_LINE_BYTES = 8 * 1024 * 1024;
const RECENT_ERRORS = 20;
const DATASET_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,99}$/;

/**
 * Where the lead connects Temporal (docs/reporting.md "Why agents speak HTTPS, not Temporal"): `onAgentHeartbeat` gets
 * the agent's queued and leased tasks on every poll and heartbeat (to heartbeat their activities), `onAgentTaskDone` a
 * task that just completed, failed or was cancelled (to complete or fail its activity).
 */
export interface AgentHooks {
  onAgentHeartbeat(tasks: AgentTaskEntity[]): Promise<void>;
  onAgentTaskDone(task: AgentTaskEntity): Promise<void>;
}

export interface ProtocolDeps {
  db: DataSource;
  storage: ArtefactStorage;
  maxResultBytes: number;
  /** REPORTING_AGENT_HEARTBEAT_TIMEOUT_SECONDS: a lease lasts this long, and agents beat three times within it. */
  heartbeatTimeoutSeconds: number;
  hooks: AgentHooks;
}

const leaseSeconds = (deps: ProtocolDeps) => deps.heartbeatTimeoutSeconds;
const heartbeatIntervalSeconds = (deps: ProtocolDeps) => Math.max(1, Math.min(HEARTBEAT_INTERVAL_SECONDS, Math.floor(deps.heartbeatTimeoutSeconds / 3)));

async function loadAgent(db: DataSource, agentId: string): Promise<AgentEntity> {
  const agent = await db.getRepository(AgentEntity).findOneBy({ id: agentId });
  if (!agent) throw new AppError('ERR_AGENT_002');
  return agent;
}

function assertSession(agent: AgentEntity, sessionId: string | undefined): string {
  const current = agent.session?.id;
  if (!current || (sessionId !== undefined && sessionId !== current)) throw new AppError('ERR_AGENT_011');
  return current;
}

/** A PEM public key Node can read (RSA or X25519); anything else is 400. */
function checkPublicKey(pem: string): string {
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'x25519') throw new Error('type');
    return key.export({ type: 'spki', format: 'pem' }).toString();
  } catch {
    throw new AppError('ERR_VALID_001', 'publicKey must be a PEM RSA or X25519 public key', { field: 'publicKey' });
  }
}

/**
 * The datasource kinds a session reaches: those it named, or every kind an agent reads when it
 * named none (earlier agents sent their task kinds here; a session stored then reads the same way).
 */
function reachableKinds(capabilities: string[]): DatasourceKind[] {
  const kinds = AGENT_DATASOURCE_KINDS.filter((k) => capabilities.includes(k));
  return kinds.length > 0 ? kinds : [...AGENT_DATASOURCE_KINDS];
}

/** A new session replaces the previous one; tasks it leased stay leased until their lease runs out. */
export async function openSession(deps: ProtocolDeps, agentId: string, input: OpenSessionInput) {
  const agent = await loadAgent(deps.db, agentId);
  let publicKey = agent.publicKey;
  if (input.publicKey !== undefined) {
    const pem = checkPublicKey(input.publicKey);
    if (publicKey && publicKey !== pem) throw new AppError('ERR_AGENT_010');
    publicKey = pem;
  }
  const session: AgentSession = {
    id: randomUUID(),
    version: input.version,
    hostname: input.hostname,
    platform: input.platform,
    startedAt: new Date().toISOString(),
    capabilities: reachableKinds(input.capabilities),
    maxConcurrency: input.maxConcurrency,
  };
  // The key is written only while none is set, even against a concurrent session; a new key waits
  // for an admin's confirmation (docs/agent.md "Confirming the key").
  const [pinned] = await modifyReturning<{ public_key: string | null; key_confirmed_at: Date | null }>(
    deps.db,
    `UPDATE reporting_agents SET session = $2, public_key = COALESCE(public_key, $3), last_seen_at = now(), updated_at = now() WHERE id = $1 RETURNING public_key, key_confirmed_at`,
    [agent.id, session, publicKey],
  );
  if (pinned && input.publicKey !== undefined && pinned.public_key !== publicKey) throw new AppError('ERR_AGENT_010');
  const key = { publicKey: pinned?.public_key ?? null, keyConfirmedAt: pinned?.key_confirmed_at ?? null };
  return {
    agentId: agent.shortId,
    keyStatus: agentKeyStatus(key),
    keyFingerprint: key.publicKey ? keyFingerprint(key.publicKey) : null,
    projectId: agent.projectId,
    sessionId: session.id,
    pollWaitSeconds: POLL_WAIT_SECONDS,
    heartbeatIntervalSeconds: heartbeatIntervalSeconds(deps),
    leaseSeconds: leaseSeconds(deps),
    maxResultBytes: deps.maxResultBytes,
  };
}

async function touch(db: DataSource, agentId: string): Promise<void> {
  await db.query(`UPDATE reporting_agents SET last_seen_at = now() WHERE id = $1`, [agentId]);
}

/** The agent's queued and leased tasks, for the Temporal heartbeat hook. */
async function liveTasks(db: DataSource, agent: AgentEntity): Promise<AgentTaskEntity[]> {
  return db.getRepository(AgentTaskEntity).find({ where: [{ agentId: agent.id, projectId: agent.projectId, status: 'queued' }, { agentId: agent.id, projectId: agent.projectId, status: 'leased' }] });
}

/**
 * Leases the oldest queued task of a datasource bound to this agent in its project, if the session
 * is still current, the agent active, its public key (if it sent one) confirmed by an admin, and
 * the session below its `maxConcurrency`. SKIP LOCKED lets
 * concurrent polls (and replicas) take different tasks without waiting on each other.
 */
async function leaseNext(deps: ProtocolDeps, agent: AgentEntity, session: AgentSession): Promise<string | null> {
  return leaseNextTask(deps.db, {
    projectId: agent.projectId,
    agentId: agent.id,
    sessionId: session.id,
    kinds: reachableKinds(session.capabilities),
    maxConcurrency: session.maxConcurrency,
    leaseSeconds: leaseSeconds(deps),
  });
}

/**
 * The datasource's secrets as its agent receives them (docs/reporting.md "Datasource kinds"; docs/agent.md "Secrets as
 * the agent sees them"): a `sealed` value only the agent's private key opens, or nothing for `agent_local` (the
 * agent reads `config.secretEnv`). `stored` values are sealed to the agent's confirmed key for this
 * lease, so a stolen token without the key file receives nothing it can open; only an agent that
 * never sent a key receives them in clear (over HTTPS, to the one agent the datasource is bound to).
 */
function leasedSecrets(ds: DatasourceEntity, agent: AgentEntity) {
  if (ds.secretMode === 'agent_local') return { mode: 'agent_local' as const };
  if (ds.secretMode === 'sealed') return { mode: 'sealed' as const, ...(ds.secrets.password ? { sealed: ds.secrets.password.value } : {}) };
  const values = Object.fromEntries(Object.entries(ds.secrets).map(([name, s]) => [name, s.value]));
  const key = confirmedKey(agent);
  if (key && Object.keys(values).length > 0) return { mode: 'sealed' as const, sealed: sealSecret(key, JSON.stringify(values), sealedSecretAad(ds.projectId, ds.id)) };
  return { mode: 'stored' as const, values };
}

/** The task as the agent receives it (docs/reporting.md "The agent protocol"). */
async function presentLeased(db: DataSource, agent: AgentEntity, taskId: string) {
  const task = await db.getRepository(AgentTaskEntity).findOneByOrFail({ id: taskId });
  const ds = await db.getRepository(DatasourceEntity).findOneByOrFail({ id: task.datasourceId, projectId: task.projectId });
  const { statement, limits } = task.payload as { statement?: unknown; limits?: unknown };
  return {
    taskId: task.shortId,
    kind: task.kind,
    attempt: task.attempt,
    leaseExpiresAt: task.leaseExpiresAt?.toISOString() ?? null,
    datasource: { id: ds.id, kind: ds.kind, config: ds.config, pool: ds.pool, secrets: leasedSecrets(ds, agent) },
    ...(statement !== undefined ? { statement } : {}),
    ...(limits !== undefined ? { limits } : {}),
  };
}

/**
 * GET /me/tasks/next: probes every PROBE_INTERVAL_MS until a task is leased, `wait` seconds pass,
 * or the agent hangs up. Each probe is one short query; the wait is a timer, so the event loop and
 * the connection pool stay free between probes.
 */
export async function nextTask(deps: ProtocolDeps, agentId: string, sessionId: string, waitSeconds: number, gone: () => boolean) {
  const agent = await loadAgent(deps.db, agentId);
  assertSession(agent, sessionId);
  const session = agent.session as AgentSession;
  await touch(deps.db, agent.id);
  await deps.hooks.onAgentHeartbeat(await liveTasks(deps.db, agent));
  const deadline = Date.now() + waitSeconds * 1000;
  const signals = taskSignals(deps.db);
  // An agent that hung up leases nothing more: the task would sit leased to nobody until its lease ran out.
  while (!gone()) {
    // Armed before looking: a task queued between the look and the wait still wakes it.
    const queued = signals.arm(`q:${agent.id}`);
    const leased = await leaseNext(deps, agent, session);
    if (leased) {
      queued.cancel();
      await touch(deps.db, agent.id);
      return presentLeased(deps.db, agent, leased);
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      queued.cancel();
      break;
    }
    await queued.wait(Math.min(signals.live ? SIGNALLED_PROBE_MS : PROBE_INTERVAL_MS, left));
  }
  // Nobody is listening any more: no answer to make.
  if (gone()) return null;
  // A session replaced during the wait is told so, like one that was stale from the start.
  assertSession(await loadAgent(deps.db, agentId), sessionId);
  await touch(deps.db, agent.id);
  return null;
}

/** Renews the listed leases, records load and pools, and answers what the agent must stop. */
export async function heartbeat(deps: ProtocolDeps, agentId: string, input: HeartbeatInput) {
  const agent = await loadAgent(deps.db, agentId);
  const sessionId = assertSession(agent, input.sessionId);
  // Temporal first: a run cancelled or gone since the last beat shows up in this answer's `cancel`.
  await deps.hooks.onAgentHeartbeat(await liveTasks(deps.db, agent));
  const renewed = input.running.length
    ? await modifyReturning<{ short_id: string; lease_expires_at: Date }>(
        deps.db,
        `UPDATE reporting_agent_tasks SET lease_expires_at = now() + make_interval(secs => $4)
          WHERE agent_id = $1 AND session_id = $2 AND status = 'leased' AND short_id = ANY($3::text[])
          RETURNING short_id, lease_expires_at`,
        [agent.id, sessionId, input.running, leaseSeconds(deps)],
      )
    : [];
  const cancelRows: Array<{ short_id: string }> = await deps.db.query(
    `SELECT short_id FROM reporting_agent_tasks WHERE agent_id = $1 AND session_id = $2 AND status = 'cancel_requested'`,
    [agent.id, sessionId],
  );
  const renewedIds = new Set(renewed.map((r) => r.short_id));
  // A listed task that is no longer leased to this session (cancelled, expired, unknown) is one to stop.
  const cancel = [...new Set([...cancelRows.map((r) => r.short_id), ...input.running.filter((id) => !renewedIds.has(id))])];

  const bound: Array<{ id: string; kind: string }> = await deps.db.query(`SELECT id, kind FROM reporting_datasources WHERE project_id = $1 AND agent_id = $2`, [agent.projectId, agent.id]);
  const kinds = new Map(bound.map((d) => [d.id, d.kind]));
  const now = new Date().toISOString();
  const previous = new Map(agent.pools.map((p) => [p.datasourceId, p]));
  // Only pools of datasources bound to this agent are kept: an agent cannot write another's health.
  const pools: AgentPool[] = input.pools
    .filter((p) => kinds.has(p.datasourceId))
    .map((p) => ({
      datasourceId: p.datasourceId,
      kind: kinds.get(p.datasourceId) ?? null,
      size: p.size,
      max: p.max,
      idle: p.idle,
      waiting: p.waiting,
      lastError: p.lastError || null,
      lastErrorAt: p.lastError ? (previous.get(p.datasourceId)?.lastError === p.lastError ? previous.get(p.datasourceId)?.lastErrorAt ?? now : now) : null,
      reportedAt: now,
    }));
  const unhealthy = pools.some((p) => p.lastError || p.waiting > 0);
  const [{ n: queued }] = await deps.db.query(`SELECT count(*)::int AS n FROM reporting_agent_tasks WHERE agent_id = $1 AND status = 'queued'`, [agent.id]);
  const load = {
    running: input.load?.running ?? renewed.length,
    capacity: input.load?.capacity ?? agent.session?.maxConcurrency ?? 0,
    queued,
    unhealthyBeats: unhealthy ? (agent.load?.unhealthyBeats ?? 0) + 1 : 0,
  };
  await deps.db.query(`UPDATE reporting_agents SET last_seen_at = now(), load = $2, pools = $3 WHERE id = $1`, [agent.id, load, JSON.stringify(pools)]);
  return {
    cancel,
    leaseExpiresAt: Object.fromEntries(renewed.map((r) => [r.short_id, new Date(r.lease_expires_at).toISOString()])),
    serverTime: new Date().toISOString(),
  };
}

/**
 * A task of this agent by `atk_` id or UUID, only while its datasource is bound to this agent in its
 * project (docs/reporting.md "Tenant scoping"); any other answers 404 ERR_AGENT_004, so ids cannot be probed.
 */
async function ownTask(db: DataSource, agent: AgentEntity, ref: string): Promise<AgentTaskEntity> {
  const column = isUuid(ref) ? 't.id' : ref.startsWith('atk_') && ref.length <= 40 ? 't.shortId' : null;
  const task = column
    ? await db
        .getRepository(AgentTaskEntity)
        .createQueryBuilder('t')
        .where(`${column} = :ref AND t.agentId = :agentId AND t.projectId = :projectId`, { ref, agentId: agent.id, projectId: agent.projectId })
        .andWhere(`EXISTS (SELECT 1 FROM reporting_datasources d WHERE d.id = t.datasource_id AND d.project_id = t.project_id AND d.agent_id = t.agent_id)`)
        .getOne()
    : null;
  if (!task) throw new AppError('ERR_AGENT_004');
  return task;
}

/** A task of this agent (by `atk_` id or UUID) that may take an upload: leased to the current session. */
export async function taskForUpload(deps: ProtocolDeps, agentId: string, ref: string, sessionId: string | undefined): Promise<{ agent: AgentEntity; task: AgentTaskEntity; session: string }> {
  const agent = await loadAgent(deps.db, agentId);
  const session = assertSession(agent, sessionId);
  const task = await ownTask(deps.db, agent, ref);
  if (task.status === 'expired') throw new AppError('ERR_AGENT_006');
  if (task.status !== 'leased' || task.sessionId !== session) throw new AppError('ERR_AGENT_005', undefined, { status: task.status });
  return { agent, task, session };
}

/** Ends a leased task; a lease lost meanwhile (expired, cancelled, another session) is refused. */
async function finish(
  deps: ProtocolDeps,
  task: AgentTaskEntity,
  session: string,
  set: { status: 'completed' | 'failed' | 'cancelled' } & Partial<Pick<AgentTaskEntity, 'result' | 'resultKey' | 'error'>>,
): Promise<AgentTaskEntity> {
  const moved = await answerTask(deps.db, { taskId: task.id, sessionId: session, ...set });
  const done = await deps.db.getRepository(AgentTaskEntity).findOneByOrFail({ id: task.id });
  if (!moved) throw new AppError(done.status === 'expired' ? 'ERR_AGENT_006' : 'ERR_AGENT_005', undefined, { status: done.status });
  await deps.hooks.onAgentTaskDone(done);
  return done;
}

/** A `test` or `schema` task's JSON answer (bounded by the JSON body limit). */
export async function acceptJsonResult(deps: ProtocolDeps, task: AgentTaskEntity, session: string, body: Record<string, unknown>): Promise<void> {
  await finish(deps, task, session, { status: 'completed', result: body });
}

interface ResultColumn {
  name: string;
  type: string;
}

interface ResultSummary {
  columns: ResultColumn[];
  rowCount: number;
  truncated: boolean;
  durationMs: number;
  bytes: number;
}

const malformed = (message: string, line?: number) => new AppError('ERR_AGENT_008', message, line === undefined ? undefined : { line });

function parseLine(text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformed('A line is not valid JSON', line);
  }
}

function parseColumns(value: unknown): ResultColumn[] {
  const cols = (value as { columns?: unknown } | null)?.columns;
  if (!value || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length !== 1 || !Array.isArray(cols)) {
    throw malformed('The first line must be {"columns": [{name, type}]}', 1);
  }
  if (cols.length < 1 || cols.length > MAX_RESULT_COLUMNS) throw malformed(`A result has 1 to ${MAX_RESULT_COLUMNS} columns`, 1);
  return cols.map((c: unknown) => {
    const { name, type } = (c ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || name.length > 255 || typeof type !== 'string' || type.length > 64) throw malformed('Each column is {name, type} (strings)', 1);
    return { name, type };
  });
}

/**
 * Reads an NDJSON result (docs/reporting.md "The agent protocol") as it streams: decompressed bytes are counted against
 * `maxBytes` (413 ERR_AGENT_007 the moment they pass it, whatever Content-Length said, so a gzip bomb
 * stops at the cap), each line is bounded, the first line names the columns, every row is an array
 * of that many cells, and the trailer's rowCount must match. The lines are stored gzip-compressed.
 */
async function readNdjson(source: Readable, maxBytes: number, sink: (columns: ResultColumn[], row: unknown[]) => void): Promise<ResultSummary> {
  let bytes = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  let columns: ResultColumn[] | null = null;
  let rows = 0;
  let trailer: { rowCount: number; truncated: boolean; durationMs: number } | null = null;

  const onLine = (raw: Buffer) => {
    lineNo += 1;
    const text = raw.toString('utf8').trim();
    if (text === '') return;
    if (trailer) throw malformed('Nothing may follow the trailer line', lineNo);
    const value = parseLine(text, lineNo);
    if (!columns) {
      columns = parseColumns(value);
    } else if (Array.isArray(value)) {
      if (value.length !== columns.length) throw malformed(`A row has ${value.length} cells for ${columns.length} columns`, lineNo);
      rows += 1;
      sink(columns, value);
    } else {
      const t = value as Record<string, unknown> | null;
      if (!t || t.end !== true || !Number.isInteger(t.rowCount) || typeof t.truncated !== 'boolean' || (t.durationMs !== undefined && typeof t.durationMs !== 'number')) {
        throw malformed('A row must be an array; the last line {"end": true, "rowCount": n, "truncated": bool, "durationMs": n}', lineNo);
      }
      if (t.rowCount !== rows) throw malformed(`The trailer says ${String(t.rowCount)} rows; ${rows} were sent`, lineNo);
      trailer = { rowCount: rows, truncated: t.truncated, durationMs: typeof t.durationMs === 'number' ? Math.max(0, Math.round(t.durationMs)) : 0 };
    }
  };

  for await (const chunk of source as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw new AppError('ERR_AGENT_007', `A result may have at most ${maxBytes} bytes (uncompressed)`, { maxBytes });
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, nl));
      onLine(Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_LINE_BYTES) throw malformed(`A line may have at most ${MAX_LINE_BYTES} bytes`, lineNo + 1);
    }
  }
  if (pendingBytes > 0) onLine(Buffer.concat(pending));
  if (!columns) throw malformed('The result is empty: the first line must name the columns');
  if (!trailer) throw malformed('The result has no trailer line {"end": true, ...}');
  const end = trailer as { rowCount: number; truncated: boolean; durationMs: number };
  return { columns, rowCount: end.rowCount, truncated: end.truncated, durationMs: end.durationMs, bytes };
}

/**
 * Storage key of a task's rows: a run's dataset file (named by the task, so a late upload of an
 * earlier attempt can never replace or delete a later attempt's file), or a preview's own file.
 */
function resultKey(task: AgentTaskEntity): string {
  const name = (task.payload as { datasetName?: unknown }).datasetName;
  if (task.kind === 'query' && task.runId) return `reporting/${task.projectId}/runs/${task.runId}/datasets/${typeof name === 'string' && DATASET_NAME.test(name) ? name : 'dataset'}.${task.shortId}.ndjson.gz`;
  return `reporting/${task.projectId}/agent-tasks/${task.shortId}.ndjson.gz`;
}

/**
 * POST /me/tasks/:taskId/result for `query` and `preview` tasks: the NDJSON stream, checked, then
 * stored the way a direct query stores its rows (one JSON object per line, gzip; what rendering
 * reads), at most the task's `maxRows` rows (400 ERR_AGENT_008 past them) and `maxBytes` bytes either way.
 */
export async function acceptNdjsonResult(deps: ProtocolDeps, task: AgentTaskEntity, session: string, body: Readable, encoding: string): Promise<void> {
  let source: Readable = body;
  if (encoding === 'gzip') {
    const gunzip = createGunzip();
    gunzip.on('error', () => undefined);
    source = body.pipe(gunzip);
  } else if (encoding !== '' && encoding !== 'identity') {
    throw malformed('Content-Encoding must be gzip or absent');
  }
  const limits = ((task.payload as { limits?: { maxRows?: unknown; maxBytes?: unknown } }).limits ?? {}) as { maxRows?: unknown; maxBytes?: unknown };
  const maxRows = typeof limits.maxRows === 'number' ? limits.maxRows : Number.MAX_SAFE_INTEGER;
  const maxBytes = Math.min(deps.maxResultBytes, typeof limits.maxBytes === 'number' ? limits.maxBytes : Number.MAX_SAFE_INTEGER);
  const gzip = createGzip();
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const gzipped = new Promise<void>((resolve, reject) => {
    gzip.once('end', resolve);
    gzip.once('error', reject);
  });
  let stored = 0;
  let rows = 0;
  const storeRow = (columns: ResultColumn[], values: unknown[]) => {
    rows += 1;
    if (rows > maxRows) throw malformed(`The task allows at most ${maxRows} rows`);
    const row: Record<string, unknown> = {};
    columns.forEach((c, i) => {
      row[c.name] = values[i];
    });
    const line = Buffer.from(`${JSON.stringify(row)}\n`);
    stored += line.length;
    if (stored > maxBytes) throw new AppError('ERR_AGENT_007', `A result may have at most ${maxBytes} bytes (uncompressed)`, { maxBytes });
    gzip.write(line);
  };
  let summary: ResultSummary;
  try {
    summary = await readNdjson(source, maxBytes, storeRow);
  } catch (err) {
    gzip.destroy();
    if (source !== body) source.destroy();
    if (err instanceof AppError) throw err;
    throw malformed('The result body could not be read (bad gzip data?)');
  }
  gzip.end();
  await gzipped;
  const key = resultKey(task);
  await deps.storage.put(key, Buffer.concat(out), 'application/gzip');
  try {
    await finish(deps, task, session, { status: 'completed', resultKey: key, result: { resultKey: key, ...summary, bytes: stored } });
  } catch (err) {
    await deps.storage.delete(key);
    throw err;
  }
}

/** POST /me/tasks/:taskId/failure: a leased task fails; one the service asked to cancel ends `cancelled`. */
export async function failTask(deps: ProtocolDeps, agentId: string, ref: string, input: TaskFailureInput): Promise<void> {
  const agent = await loadAgent(deps.db, agentId);
  const session = assertSession(agent, undefined);
  const task = await ownTask(deps.db, agent, ref);
  if (task.status === 'expired') throw new AppError('ERR_AGENT_006');
  if ((task.status !== 'leased' && task.status !== 'cancel_requested') || task.sessionId !== session) throw new AppError('ERR_AGENT_005', undefined, { status: task.status });
  const error = { code: input.code, message: input.message, retryable: input.retryable, ...(input.dbCode ? { dbCode: input.dbCode } : {}) };
  await finish(deps, task, session, { status: task.status === 'cancel_requested' ? 'cancelled' : 'failed', error });
  const entry: AgentRecentError = { at: new Date().toISOString(), taskId: task.shortId, code: input.code, message: input.message.slice(0, 500) };
  await deps.db.query(
    `UPDATE reporting_agents SET recent_errors = (SELECT COALESCE(jsonb_agg(e ORDER BY n), '[]') FROM (
       SELECT e, n FROM jsonb_array_elements(recent_errors || $2::jsonb) WITH ORDINALITY AS x(e, n) ORDER BY n DESC LIMIT ${RECENT_ERRORS}) last)
     WHERE id = $1`,
    [agent.id, JSON.stringify([entry])],
  );
}
