import { checkQueryLimits, defaultQueryLimits, type SystemLimits } from './limits';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type Joi from 'joi';
import type { DataSource } from 'typeorm';
import { isUniqueViolation, type Queryable } from '../../db/sql';
import { DatasourceEntity, type DatasourceLastTest, type DatasourceSecrets } from '../../db/reporting/datasource.entity';
import { AppError } from '../../domain/errors';
import { AGENT_DATASOURCE_KINDS, type DatasourceKind, type DiscoveredSchema, type QueryRunner } from '../../domain/reporting/query-runner';
import { randomBase62 } from '../../domain/signing';
import type { RunnerTarget } from '../../adapters/query-runners/runner-target';
import { assertSavedTarget, type OutboundGuard, type SavedTarget } from '../../adapters/http/outbound';
import { createReadStream } from 'node:fs';
import { CSV_MAX_BYTES, csvSourceKey } from '../../domain/reporting/csv-source';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { AgentEntity } from '../../db/reporting/agent.entity';
import { agentKeyStatus, agentStatus, confirmedKey } from '../agents/agents.service';
import { askAgent, DEFAULT_WAIT_SECONDS, isDone, pending, schemaOutcome, testOutcome } from './agent-tasks.service';
import { sealedSecretAad, sealSecret } from '@formwork/wire';
import { csvConfigSchema, sqliteConfigSchema, httpJsonConfigSchema, httpJsonSecretsSchema, noSecretsSchema, sqlConfigSchema, sqlSecretsSchema, type CreateDatasourceInput, type ListDatasourcesQuery, type UpdateDatasourceInput } from './datasources.schema';
import { isUuid } from '../../domain/ids';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Reporting datasources (docs/reporting.md "Datasources"). Every lookup is
 * `(project_id, id)`: another project's datasource answers ERR_DS_001 like one that does not
 * exist. Secrets are write-only and encrypted at rest by the entity's column transformer.
 */

export interface DatasourceDeps {
  db: DataSource;
  /** REPORTING_QUERY_TIMEOUT_SECONDS and REPORTING_MAX_ROWS: the bounds of `defaults`. */
  limits: SystemLimits;
  /** Opens a direct runner with the process's outbound guard bound in (adapters/query-runners/runner-target.ts). */
  connect: (target: RunnerTarget) => QueryRunner;
  /** csv: where uploaded files are kept (artefact storage). */
  storage?: ArtefactStorage;
  /** Checks a direct datasource's target when it is saved (OUTBOUND_ALLOWLIST); every connection checks it again. */
  guard: OutboundGuard;
}

const SHORT_ID_PREFIX = 'ds_';
const DEFAULT_POOL = { max: 5, idleTimeoutSeconds: 60 };
const ERROR_MESSAGE_MAX = 300;

interface FieldError {
  path: string;
  message: string;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError('ERR_DS_002', `Datasource configuration invalid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
}

function check<T>(schema: Joi.Schema, value: unknown, prefix: string): { value: T; errors: FieldError[] } {
  const { value: out, error } = schema.validate(value ?? {}, { abortEarly: false, convert: true, allowUnknown: false });
  const errors = (error?.details ?? []).map((d) => ({ path: [prefix, ...d.path].join('.'), message: d.message.replace(/"/g, "'") }));
  return { value: out as T, errors };
}

/**
 * Kinds a server connects to itself, and kinds an agent runs (docs/reporting.md "Datasource kinds"; http_json and csv
 * stay on the server).
 */
const DIRECT_KINDS: DatasourceKind[] = ['postgres', 'mysql', 'http_json', 'csv'];
const AGENT_KINDS = AGENT_DATASOURCE_KINDS;

type ConnectionMode = DatasourceEntity['connectionMode'];
type SecretMode = DatasourceEntity['secretMode'];

/** Where a datasource's queries run and how its secrets are kept, as a body asks for them. */
interface ModeRequest {
  connectionMode?: ConnectionMode;
  agentId?: string | null;
  secretMode?: SecretMode;
  secrets?: Record<string, string | null>;
}

interface Placement {
  mode: ConnectionMode;
  agent: AgentEntity | null;
  secretMode: SecretMode;
}

/**
 * The connection mode, agent and secret mode of a datasource (docs/reporting.md "Datasource kinds", "Datasources"):
 * `sqlite` only through an agent, `http_json` and `csv` only direct (ERR_DS_005); an agent of this project
 * (ERR_DS_006); `sealed` and `agent_local` only with an agent, `sealed` only once the agent has registered its
 * public key (ERR_DS_007). `current` is the stored datasource of a PATCH: what the body leaves out stays.
 */
async function placement(db: Queryable, projectId: string, kind: DatasourceKind, req: ModeRequest, current?: DatasourceEntity): Promise<Placement> {
  const mode = req.connectionMode ?? current?.connectionMode ?? (req.agentId ? 'agent' : 'direct');
  if (mode === 'direct') {
    if (!DIRECT_KINDS.includes(kind)) throw new AppError('ERR_DS_005', `A ${kind} datasource needs connectionMode agent (it is read on the agent's host)`, { field: 'connectionMode' });
    if (req.agentId) throw invalid([{ path: 'agentId', message: "'agentId' is allowed only with connectionMode agent" }]);
    if (req.secretMode !== undefined && req.secretMode !== 'stored') throw invalid([{ path: 'secretMode', message: "'secretMode' must be stored for a direct datasource" }]);
    return { mode, agent: null, secretMode: 'stored' };
  }
  if (!AGENT_KINDS.includes(kind)) throw new AppError('ERR_DS_005', `A ${kind} datasource is read by the server, not through an agent`, { field: 'connectionMode' });
  const agentRef = req.agentId ?? (current?.connectionMode === 'agent' ? current.agentId : null);
  if (!agentRef) throw new AppError('ERR_DS_006', 'connectionMode agent needs agentId: an agent of this project', { field: 'agentId' });
  const agent = await findAgent(db, projectId, agentRef);
  if (!agent) throw new AppError('ERR_DS_006', undefined, { field: 'agentId' });
  const secretMode = req.secretMode ?? defaultSecretMode(agent, req, current);
  // Only a key an admin confirmed counts (docs/agent.md "Confirming the key"): a pending one may be a thief's.
  const key = confirmedKey(agent);
  if (secretMode === 'sealed' && !key) throw new AppError('ERR_DS_007', undefined, { field: 'secretMode', agentId: agent.shortId, keyStatus: agentKeyStatus(agent) });
  if (secretMode === 'stored' && key && req.secretMode === 'stored') {
    throw new AppError('ERR_DS_010', `Agent ${agent.shortId} has a confirmed public key: seal the secrets to it (secretMode sealed) or keep them on its host (agent_local)`, { field: 'secretMode', agentId: agent.shortId });
  }
  return { mode, agent, secretMode };
}

/**
 * The secret mode a body that names none gets (docs/reporting.md "Secret modes"): once the agent has a
 * confirmed public key, `sealed` for a datasource new to the agent that is given a secret and for a stored one given a new secret (which
 * is then sealed with the stored ones); `stored` before the agent has a key. A datasource that stays on
 * its agent keeps its mode otherwise, so datasources stored before the key keep working.
 */
function defaultSecretMode(agent: AgentEntity, req: ModeRequest, current?: DatasourceEntity): SecretMode {
  const sameAgent = current?.connectionMode === 'agent' && current.agentId === agent.id;
  if (!confirmedKey(agent)) return sameAgent ? current.secretMode : 'stored';
  const writesSecret = Object.values(req.secrets ?? {}).some((v) => typeof v === 'string');
  // Nothing given, nothing to seal (a SQLite file, a server that trusts the agent's host): `stored`, with
  // nothing stored; the agent would refuse a sealed task that carries no sealed value.
  if (!sameAgent) return writesSecret ? 'sealed' : 'stored';
  return current.secretMode === 'stored' && writesSecret ? 'sealed' : current.secretMode;
}

async function findAgent(db: Queryable, projectId: string, ref: string): Promise<AgentEntity | null> {
  const qb = db.getRepository(AgentEntity).createQueryBuilder('a').where('a.projectId = :projectId', { projectId });
  if (isUuid(ref)) return qb.andWhere('a.id = :ref', { ref }).getOne();
  if (ref.startsWith('agt_')) return qb.andWhere('a.shortId = :ref', { ref }).getOne();
  return null;
}

/** The config and secrets as stored: defaults applied, every problem reported at once. */
function checkSettings(kind: DatasourceKind, secretMode: SecretMode, config: unknown, secrets: Record<string, string | null> | undefined) {
  const [configSchema, secretsSchema] =
    kind === 'http_json'
      ? [httpJsonConfigSchema, httpJsonSecretsSchema]
      : kind === 'csv'
        ? [csvConfigSchema, noSecretsSchema]
        : kind === 'sqlite'
          ? [sqliteConfigSchema, noSecretsSchema]
          : [sqlConfigSchema(kind as 'postgres' | 'mysql', secretMode === 'agent_local'), secretMode === 'agent_local' ? noSecretsSchema : sqlSecretsSchema];
  const c = check<Record<string, unknown>>(configSchema, config, 'config');
  const s = check<Record<string, string | null>>(secretsSchema, secrets ?? {}, 'secrets');
  const errors = [...c.errors, ...s.errors];
  if (errors.length > 0) throw invalid(errors);
  return { config: c.value, secrets: s.value };
}

/** Stored secrets with the given ones applied: a string replaces, null clears, a missing name keeps. */
function applySecrets(stored: DatasourceSecrets, given: Record<string, string | null>, now: Date): DatasourceSecrets {
  const out = { ...stored };
  for (const [name, value] of Object.entries(given)) {
    if (value === null) delete out[name];
    else out[name] = { value, updatedAt: now.toISOString() };
  }
  return out;
}

/**
 * The config fields that say where a datasource's secrets go and how they travel (docs/security.md
 * "Reporting datasources: secrets tied to their target"). `database`, `user` and `schemas` are not
 * among them: the password still goes to the same server.
 */
const TARGET_FIELDS: Partial<Record<DatasourceKind, string[]>> = {
  postgres: ['host', 'port', 'ssl', 'caCert', 'allowCleartextPassword'],
  mysql: ['host', 'port', 'ssl', 'caCert', 'allowCleartextPassword'],
  http_json: ['baseUrl'],
};

/** The target fields a change would change: config fields, the connection mode, the agent. */
function targetChanges(current: DatasourceEntity, place: Placement, config: Record<string, unknown>): string[] {
  const norm = (field: string, v: unknown) => (field === 'allowCleartextPassword' ? v === true : (v ?? null));
  const changed = (TARGET_FIELDS[current.kind] ?? []).filter((f) => !isDeepStrictEqual(norm(f, current.config[f]), norm(f, config[f]))).map((f) => `config.${f}`);
  if (place.mode !== current.connectionMode) changed.push('connectionMode');
  if ((place.agent?.id ?? null) !== current.agentId) changed.push('agentId');
  return changed;
}

const isKeptMarker = (v: unknown) => typeof v === 'object' && v !== null && (v as { set?: unknown }).set === true;

/**
 * http_json `defaultHeaders` to store (write-only values): a string sets, `{"set": true}` keeps the
 * stored value of that name, `given` left out keeps every stored header. With `dropStored` (a target
 * change) nothing stored is kept: the stored names not given again are `missing`.
 */
function resolveDefaultHeaders(given: Record<string, unknown> | undefined, stored: Record<string, string> | undefined, dropStored: boolean) {
  const missing: string[] = [];
  const errors: FieldError[] = [];
  const storedNames = Object.keys(stored ?? {});
  if (given === undefined) {
    if (dropStored) missing.push(...storedNames.map((n) => `config.defaultHeaders.${n}`));
    return { headers: dropStored || storedNames.length === 0 ? undefined : stored, missing, errors };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (typeof value === 'string') headers[name] = value;
    else if (isKeptMarker(value) && stored?.[name] !== undefined) {
      if (dropStored) missing.push(`config.defaultHeaders.${name}`);
      else headers[name] = stored[name];
    } else errors.push({ path: `config.defaultHeaders.${name}`, message: 'no value is stored for this header: send the value itself' });
  }
  return { headers, missing, errors };
}

/** The config as stored, its `defaultHeaders` resolved (see resolveDefaultHeaders); 400 ERR_DS_002 for a marker with nothing behind it. */
function withHeaders(config: Record<string, unknown>, given: Record<string, unknown> | undefined, stored: Record<string, string> | undefined, dropStored: boolean) {
  const { headers, missing, errors } = resolveDefaultHeaders(given, stored, dropStored);
  if (errors.length > 0) throw invalid(errors);
  const out = { ...config };
  if (headers && Object.keys(headers).length > 0) out.defaultHeaders = headers;
  else delete out.defaultHeaders;
  return { config: out, missing };
}

/**
 * The secrets a datasource keeps in its secret mode (docs/reporting.md "Datasource kinds"). `stored`: the values,
 * encrypted at rest with the service's key. `agent_local`: none (the agent reads `config.secretEnv`). `sealed`: the
 * values sealed to the agent's public key as one value (JSON of the secrets) that only the agent can
 * open; the plaintext lives in this request's memory only. Sealed values cannot be read back, so a
 * datasource moved to another agent needs them again, while stored ones are sealed as they are.
 */
function keptSecrets(ds: Pick<DatasourceEntity, 'id' | 'projectId'>, place: Placement, current: DatasourceEntity | undefined, given: Record<string, string | null>, now: Date): DatasourceSecrets {
  if (place.secretMode === 'agent_local') return {};
  const before = current?.secretMode === 'stored' ? current.secrets : {};
  if (place.secretMode === 'stored') {
    if (current?.secretMode === 'sealed' && current.secrets.password && given.password === undefined) {
      throw invalid([{ path: 'secrets.password', message: 'sealed secrets can only be read by the agent: give the password again to store it' }]);
    }
    return applySecrets(before, given, now);
  }
  const sameAgent = current?.secretMode === 'sealed' && current.agentId === place.agent?.id;
  if (given.password === undefined && sameAgent) return current.secrets;
  if (given.password === undefined && current?.secretMode === 'sealed' && current.secrets.password) {
    throw invalid([{ path: 'secrets.password', message: 'the password is sealed to the previous agent: give it again' }]);
  }
  const plain = applySecrets(before, given, now);
  const values = Object.fromEntries(Object.entries(plain).map(([name, v]) => [name, v.value]));
  if (Object.keys(values).length === 0) return {};
  const sealed = sealSecret(confirmedKey(place.agent!)!, JSON.stringify(values), sealedSecretAad(ds.projectId, ds.id));
  return Object.fromEntries(Object.keys(values).map((name) => [name, { value: sealed, updatedAt: now.toISOString() }]));
}

function nameTaken(name: string): AppError {
  return new AppError('ERR_DS_003', `A datasource named '${name}' exists in this project`, { field: 'name' });
}

/** A datasource from a create body, checked (400 ERR_DS_002 with every problem, ERR_VALID_001 over a limit), not saved. */
async function buildDatasource(deps: Pick<DatasourceDeps, 'db' | 'limits'>, projectId: string, input: CreateDatasourceInput): Promise<DatasourceEntity> {
  checkQueryLimits(input.defaults, deps.limits, 'defaults.');
  const place = await placement(deps.db, projectId, input.kind, input);
  const checked = checkSettings(input.kind, place.secretMode, input.config, input.secrets);
  const secrets = checked.secrets;
  const { config } = withHeaders(checked.config, checked.config.defaultHeaders as Record<string, unknown> | undefined, undefined, false);
  const now = new Date();
  const ds = Object.assign(new DatasourceEntity(), {
    id: randomUUID(),
    projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    name: input.name,
    description: input.description || null,
    kind: input.kind,
    connectionMode: place.mode,
    agentId: place.agent?.id ?? null,
    config,
    secretMode: place.secretMode,
    pool: { ...DEFAULT_POOL, ...input.pool },
    defaults: { ...defaultQueryLimits(deps.limits), ...input.defaults },
    lastTest: null,
    schema: null,
    schemaRefreshedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  ds.secrets = keptSecrets(ds, place, undefined, secrets, now);
  return ds;
}

/**
 * Where a direct datasource connects (postgres and mysql `host`, http_json `baseUrl`, csv `url`);
 * one behind an agent is reached from the agent's host, which the service's guard does not judge.
 */
function directTarget(ds: Pick<DatasourceEntity, 'kind' | 'connectionMode' | 'config'>): SavedTarget | undefined {
  if (ds.connectionMode !== 'direct') return undefined;
  const { config } = ds;
  if ((ds.kind === 'postgres' || ds.kind === 'mysql') && typeof config.host === 'string') return { field: 'config.host', host: config.host };
  if (ds.kind === 'http_json' && typeof config.baseUrl === 'string') return { field: 'config.baseUrl', url: config.baseUrl };
  if (ds.kind === 'csv' && config.source === 'url' && typeof config.url === 'string') return { field: 'config.url', url: config.url };
  return undefined;
}

/**
 * A new or changed direct target is checked by the outbound guard when saved (400 ERR_OUTBOUND_001
 * naming the field and OUTBOUND_ALLOWLIST, docs/reporting.md "Private networks"); a target the save
 * leaves as it was is not judged again (every connection is).
 */
async function checkTarget(deps: Pick<DatasourceDeps, 'guard'>, ds: DatasourceEntity, before?: Record<string, unknown>, beforeMode?: DatasourceEntity['connectionMode']): Promise<void> {
  const target = directTarget(ds);
  if (!target) return;
  if (before && beforeMode && isDeepStrictEqual(target, directTarget({ kind: ds.kind, connectionMode: beforeMode, config: before }))) return;
  await assertSavedTarget(deps.guard, target);
}

export async function createDatasource(deps: Pick<DatasourceDeps, 'db' | 'limits' | 'guard'>, projectId: string, input: CreateDatasourceInput): Promise<DatasourceEntity> {
  const ds = await buildDatasource(deps, projectId, input);
  await checkTarget(deps, ds);
  try {
    await deps.db.getRepository(DatasourceEntity).save(ds);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
  return ds;
}

export async function listDatasources(deps: Pick<DatasourceDeps, 'db'>, projectId: string, query: ListDatasourcesQuery): Promise<{ datasources: DatasourceEntity[]; total: number }> {
  const qb = deps.db.getRepository(DatasourceEntity).createQueryBuilder('d').where('d.projectId = :projectId', { projectId });
  if (query.kind) qb.andWhere('d.kind = :kind', { kind: query.kind });
  if (query.agentId) qb.andWhere('d.agentId::text = :agentId', { agentId: query.agentId });
  if (query.search) qb.andWhere(`strpos(lower(d.name), lower(:search)) > 0`, { search: query.search });
  const [datasources, total] = await qb
    .orderBy('d.createdAt', 'DESC')
    .addOrderBy('d.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { datasources, total };
}

/** By UUID or short id (`ds_…`), within the project. */
/** A datasource of the project by UUID or short id; `db` may be a transaction's manager. */
export async function getDatasource(deps: { db: Queryable }, projectId: string, ref: string): Promise<DatasourceEntity> {
  const found = await findByIdOrShortId(deps.db, DatasourceEntity, projectId, ref, SHORT_ID_PREFIX);
  if (!found) throw new AppError('ERR_DS_001');
  return found;
}

export async function updateDatasource(deps: Pick<DatasourceDeps, 'db' | 'limits' | 'guard'>, projectId: string, ref: string, patch: UpdateDatasourceInput): Promise<DatasourceEntity> {
  checkQueryLimits(patch.defaults, deps.limits, 'defaults.');
  const ds = await getDatasource(deps, projectId, ref);
  const place = await placement(deps.db, projectId, ds.kind, patch, ds);
  const checked = checkSettings(ds.kind, place.secretMode, patch.config ?? ds.config, patch.secrets);
  const secrets = checked.secrets;
  // A change of where the secrets go drops them all: each one stored must come again in this request.
  const changed = targetChanges(ds, place, checked.config);
  const dropStored = changed.length > 0;
  const storedHeaders = ds.config.defaultHeaders as Record<string, string> | undefined;
  const givenHeaders = patch.config === undefined ? undefined : (checked.config.defaultHeaders as Record<string, unknown> | undefined);
  const { config, missing } = withHeaders(checked.config, givenHeaders, storedHeaders, dropStored);
  if (dropStored && place.secretMode !== 'agent_local') missing.push(...Object.keys(ds.secrets).filter((n) => secrets[n] === undefined).map((n) => `secrets.${n}`));
  if (missing.length > 0) {
    throw new AppError('ERR_DS_009', `Changing ${changed.join(', ')} drops the stored secrets; give them again in the same request: ${missing.join(', ')}`, { changed, missing });
  }
  await checkTarget(deps, Object.assign(new DatasourceEntity(), ds, { config, connectionMode: place.mode }), ds.config, ds.connectionMode);
  const now = new Date();
  if (patch.name !== undefined) ds.name = patch.name;
  if (patch.description !== undefined) ds.description = patch.description || null;
  const before = dropStored ? Object.assign(new DatasourceEntity(), ds, { secrets: {} }) : ds;
  ds.secrets = keptSecrets(ds, place, before, secrets, now);
  ds.config = config;
  ds.connectionMode = place.mode;
  ds.agentId = place.agent?.id ?? null;
  ds.secretMode = place.secretMode;
  if (patch.pool) ds.pool = { ...ds.pool, ...patch.pool };
  if (patch.defaults) ds.defaults = { ...ds.defaults, ...patch.defaults };
  ds.updatedAt = now;
  try {
    await deps.db.getRepository(DatasourceEntity).save(ds);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(ds.name);
    throw err;
  }
  return ds;
}

export async function deleteDatasource(deps: Pick<DatasourceDeps, 'db'>, projectId: string, ref: string): Promise<void> {
  const ds = await getDatasource(deps, projectId, ref);
  // A datasource its query objects still name stays: deleting it would leave them unable to run.
  const [{ n }] = await deps.db.query(`SELECT count(*)::int AS n FROM reporting_queries WHERE project_id = $1 AND datasource_id = $2 AND deleted_at IS NULL`, [projectId, ds.id]);
  if (n > 0) throw new AppError('ERR_DS_004', undefined, { queries: n });
  await deps.db.getRepository(DatasourceEntity).delete({ id: ds.id, projectId });
}

/** The error a failed connection test reports: its code, and a short message that never holds a secret. */
function testError(err: unknown, secretValues: string[]): { code: string; message: string } {
  const raw = (err as { code?: unknown }).code;
  const code = err instanceof AppError ? err.code : typeof raw === 'string' && raw ? raw : 'CONNECTION_FAILED';
  let message = err instanceof Error ? err.message : String(err);
  for (const s of secretValues) if (s) message = message.split(s).join('***');
  if (message.length > ERROR_MESSAGE_MAX) message = `${message.slice(0, ERROR_MESSAGE_MAX - 1)}…`;
  return { code, message };
}

async function withRunner<T>(deps: DatasourceDeps, ds: DatasourceEntity, use: (runner: QueryRunner) => Promise<T>): Promise<T> {
  const secrets = Object.fromEntries(Object.entries(ds.secrets).map(([name, s]) => [name, s.value]));
  const runner = deps.connect({ kind: ds.kind, config: ds.config, secrets, storage: deps.storage, tenant: ds.projectId, datasourceId: ds.id });
  try {
    return await use(runner);
  } finally {
    await runner.close().catch(() => undefined);
  }
}

/**
 * Connects, asks the server's version and records the outcome as `lastTest`. A connection that
 * fails (refused by the outbound guard, wrong password, host down) is an answer, `ok: false`. A
 * datasource behind an agent is tested there: the answer waits up to `wait` seconds, then is
 * `{pending}` (202 with the task id; the outcome lands on `lastTest` when the agent answers).
 */
export async function testDatasource(deps: DatasourceDeps, projectId: string, ref: string, wait = DEFAULT_WAIT_SECONDS): Promise<{ test: DatasourceLastTest; executedBy: 'server' | 'agent' } | { pending: { taskId: string; status: string } }> {
  const ds = await getDatasource(deps, projectId, ref);
  if (ds.connectionMode === 'agent') {
    const task = await askAgent(deps.db, ds, 'test', {}, wait);
    return isDone(task) ? { test: testOutcome(task), executedBy: 'agent' } : { pending: pending(task) };
  }
  const result = await connectionTest(deps, ds);
  await deps.db.getRepository(DatasourceEntity).update({ id: ds.id, projectId }, { lastTest: result });
  return { test: result, executedBy: 'server' };
}

/**
 * POST /datasources/test: a create body tested as it would be saved (the same checks, the outbound
 * guard), and nothing saved. A csv datasource with `source: upload` has no file before it exists,
 * so its test reports that as the error.
 */
export async function testUnsavedDatasource(deps: DatasourceDeps, projectId: string, input: CreateDatasourceInput): Promise<DatasourceLastTest> {
  const ds = await buildDatasource(deps, projectId, input);
  if (ds.connectionMode === 'agent') throw new AppError('ERR_VALID_001', 'A datasource reached through an agent is tested once saved: POST /api/reporting/datasources/:id/test', { field: 'connectionMode' });
  return connectionTest(deps, ds);
}

async function connectionTest(deps: DatasourceDeps, ds: DatasourceEntity): Promise<DatasourceLastTest> {
  const started = Date.now();
  try {
    const t = await withRunner(deps, ds, (r) => r.test());
    return { at: new Date().toISOString(), ok: true, latencyMs: t.latencyMs, serverVersion: t.serverVersion, error: null };
  } catch (err) {
    const error = testError(err, Object.values(ds.secrets).map((s) => s.value));
    return { at: new Date().toISOString(), ok: false, latencyMs: Date.now() - started, serverVersion: undefined, error };
  }
}

/**
 * GET /datasources/:id/health (docs/reporting.md "Datasources"). A direct datasource: the server opens a connection per
 * query (no pool is kept between queries), so `pool` shows the configured maximum and nothing open;
 * the status is the last connection test's (`ok`, `failing`, or `unknown` before the first test). A
 * datasource behind an agent: its pool as the agent's last heartbeat reported it, `failing` when that
 * pool reported an error, `offline` when the agent has not been seen for a minute.
 */
export async function datasourceHealth(deps: Pick<DatasourceDeps, 'db'>, projectId: string, ref: string) {
  const ds = await getDatasource(deps, projectId, ref);
  const t = ds.lastTest;
  const lastTest = t ? { at: t.at, ok: t.ok, latencyMs: t.latencyMs ?? null, serverVersion: t.serverVersion ?? null, error: t.error } : null;
  if (ds.connectionMode === 'agent' && ds.agentId) {
    const agent = await deps.db.getRepository(AgentEntity).findOneBy({ id: ds.agentId, projectId });
    const pool = agent?.pools.find((p) => p.datasourceId === ds.id) ?? null;
    const status = !agent || agentStatus(agent) === 'offline' || agentStatus(agent) === 'never_connected' ? 'offline' : pool?.lastError ? 'failing' : pool || t?.ok ? 'ok' : t ? 'failing' : 'unknown';
    return {
      status,
      pool: pool ? { size: pool.size, max: pool.max, idle: pool.idle, waiting: pool.waiting } : { size: 0, max: ds.pool.max, idle: 0, waiting: 0 },
      lastTest,
      lastError: pool?.lastError ? { code: 'AGENT_POOL', message: pool.lastError, at: pool.lastErrorAt } : t && !t.ok ? t.error : null,
      reportedAt: pool?.reportedAt ?? null,
      executedBy: 'agent' as const,
    };
  }
  return {
    status: !t ? 'unknown' : t.ok ? 'ok' : 'failing',
    pool: { size: 0, max: ds.pool.max, idle: 0, waiting: 0 },
    lastTest,
    lastError: t && !t.ok ? t.error : null,
    reportedAt: t?.at ?? null,
    executedBy: 'server' as const,
  };
}

/** Discovers the schema and stores it; errors (the outbound guard's included) are the answer. Through an agent: as the test. */
export async function refreshSchema(deps: DatasourceDeps, projectId: string, ref: string, wait = DEFAULT_WAIT_SECONDS): Promise<DiscoveredSchema | { pending: { taskId: string; status: string } }> {
  const ds = await getDatasource(deps, projectId, ref);
  if (ds.connectionMode === 'agent') {
    const task = await askAgent(deps.db, ds, 'schema', {}, wait);
    return isDone(task) ? schemaOutcome(task) : { pending: pending(task) };
  }
  const schema = await withRunner(deps, ds, (r) => r.discoverSchema());
  await deps.db.getRepository(DatasourceEntity).update({ id: ds.id, projectId }, { schema, schemaRefreshedAt: new Date(schema.refreshedAt) });
  return schema;
}

/** The stored schema; `search` keeps the tables whose name contains it (case-insensitive). */
export async function getSchema(deps: Pick<DatasourceDeps, 'db'>, projectId: string, ref: string, search?: string): Promise<DiscoveredSchema> {
  const ds = await getDatasource(deps, projectId, ref);
  if (!ds.schema) throw new AppError('ERR_DS_008');
  if (!search) return ds.schema;
  const needle = search.toLowerCase();
  return { ...ds.schema, tables: ds.schema.tables.filter((t) => t.name.toLowerCase().includes(needle)) };
}

export { CSV_MAX_BYTES };

/**
 * Stores the uploaded CSV file of a csv datasource with `source: upload` (PUT …/file) under
 * `reporting/<projectId>/datasources/<id>/source.csv`, replacing the previous one. The upload
 * middleware counted it while it streamed (past CSV_MAX_BYTES: 413 ERR_REQ_002).
 */
export async function storeCsvFile(deps: Pick<DatasourceDeps, 'db'> & { storage: ArtefactStorage }, projectId: string, ref: string, file: { filepath: string; size: number } | undefined): Promise<DatasourceEntity> {
  const ds = await getDatasource(deps, projectId, ref);
  if (ds.kind !== 'csv') throw invalid([{ path: 'kind', message: `only a csv datasource takes a file (this one is ${ds.kind})` }]);
  if (ds.config.source !== 'upload') throw invalid([{ path: 'config.source', message: "the file of a datasource with source 'url' is read from its url" }]);
  if (!file) throw new AppError('ERR_VALID_001', 'No file uploaded: send it as the multipart field `file`', { field: 'file' });
  if (file.size > CSV_MAX_BYTES) throw new AppError('ERR_REQ_002', undefined, { limit: CSV_MAX_BYTES });
  await deps.storage.put(csvSourceKey(projectId, ds.id), createReadStream(file.filepath), 'text/csv');
  ds.updatedAt = new Date();
  await deps.db.getRepository(DatasourceEntity).update({ id: ds.id, projectId }, { updatedAt: ds.updatedAt });
  return ds;
}
