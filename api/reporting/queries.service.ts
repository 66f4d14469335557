import { checkQueryLimits, defaultQueryLimits, type SystemLimits } from './limits';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { DatasourceEntity } from '../../db/reporting/datasource.entity';
import { findLiveByRef } from '../../db/reporting/find-live';
import { type QueryDefinition, QueryEntity, type QueryLanguage } from '../../db/reporting/query.entity';
import { QueryVersionEntity } from '../../db/reporting/query-version.entity';
import { reportsPinningQuery } from '../../db/reporting/report-pins';
import { insertWithFreshCandidates, isUniqueViolation, violatedIndex, type Queryable } from '../../db/sql';
import { type RestoreResult, versionedResource, type VersionRecord as VersionRecordOf } from '../../db/versioned-resource';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import { compileQuery } from '../../domain/reporting/compile-query';
import { coerceParameters, type ParameterDef } from '../../domain/reporting/parameters';
import type { HttpRequestSpec } from '../../domain/reporting/http-request';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import type { CompiledQuery, DatasourceKind, QueryRunner, ResultColumn } from '../../domain/reporting/query-runner';
import type { SqlDialect } from '../../domain/reporting/sql';
import { randomBase62 } from '../../domain/signing';
import { parseVersionKey } from '../../domain/versions';
import { resourceSlug, suffixedSlug } from '../../domain/templates/template-ids';
import type { RunnerTarget } from '../../adapters/query-runners/runner-target';
import { getDatasource } from './datasources.service';
import { askAgent, DEFAULT_WAIT_SECONDS, isDone, pending, previewOutcome, previewPayload } from './agent-tasks.service';
import { type CreateQueryInput, type ListQueriesQuery, PREVIEW_MAX_ROWS, type PreviewQueryInput, type UpdateQueryInput, type ValidateQueryInput } from './queries.schema';

/**
 * Reporting query objects (docs/reporting.md "Query objects"): a draft checked
 * when saved, published as immutable numbered versions like templates. Every lookup is within the
 * project: another project's query answers ERR_QRY_001 like one that does not exist.
 */

export interface QueryDeps {
  db: DataSource;
  /** The query text is scanned and compiled in the evaluation workers, off the loop that serves HTTP. */
  evaluator: Evaluator;
  /** Opens a direct runner with the process's outbound guard bound in (adapters/query-runners/runner-target.ts). */
  connect: (target: RunnerTarget) => QueryRunner;
  /** REPORTING_QUERY_TIMEOUT_SECONDS and REPORTING_MAX_ROWS: a query's `timeoutSeconds` and `maxRows` stay within them. */
  limits: SystemLimits;
  /** csv: where uploaded files are read from (artefact storage). */
  storage?: ArtefactStorage;
}

export interface Actor {
  projectId: string;
  userId?: string;
}

const SHORT_ID_PREFIX = 'qry_';
/** Path segments the router answers itself: a query with such a slug could never be reached by it. */
const RESERVED_SLUGS = new Set(['validate']);
/** Uncompressed NDJSON a preview may hold in memory. */
const PREVIEW_MAX_BYTES = 5 * 1024 * 1024;

interface Problem {
  path: string;
  code: string;
  message: string;
}

function invalid(errors: Problem[]): AppError {
  return new AppError('ERR_QRY_002', `Query invalid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
}

/**
 * The language each kind runs (docs/reporting.md "Datasource kinds"): SQL kinds `sql`, http_json `http`, csv `table`.
 */
const LANGUAGE_OF_KIND: Record<DatasourceKind, QueryLanguage> = { postgres: 'sql', mysql: 'sql', sqlite: 'sql', http_json: 'http', csv: 'table' };

/** The dialect a query's text is read in: the datasource's kind, when it is a SQL one. */
function dialectOf(ds: DatasourceEntity): SqlDialect | null {
  return ds.kind === 'postgres' || ds.kind === 'mysql' || ds.kind === 'sqlite' ? ds.kind : null;
}

/**
 * Every problem of a draft against its datasource: language, text, parameter definitions. The text
 * is scanned in the evaluation workers (domain/checks.ts `queryProblems`), like template checks.
 */
async function problems(
  deps: Pick<QueryDeps, 'evaluator'>,
  ds: DatasourceEntity,
  language: string,
  text: string,
  parameters: readonly ParameterDef[],
  extra: { request?: HttpRequestSpec | null; transform?: string | null } = {},
): Promise<Problem[]> {
  const fits = LANGUAGE_OF_KIND[ds.kind];
  if (!fits || (language !== 'sql' && language !== 'http' && language !== 'table')) return [{ path: 'language', code: 'UNSUPPORTED_LANGUAGE', message: `language '${language}' is not supported` }];
  if (language !== fits) return [{ path: 'language', code: 'LANGUAGE_MISMATCH', message: `language '${language}' does not fit a ${ds.kind} datasource (it runs '${fits}')` }];
  if (language === 'http') {
    const textProblem = text ? [{ path: 'text', code: 'TEXT_NOT_ALLOWED', message: "an http query has no text: its request is in 'request'" }] : [];
    return [...textProblem, ...(await deps.evaluator.check(ds.projectId, 'httpRequestProblems', extra.request ?? null, extra.transform ?? null, [...parameters]))];
  }
  if (language === 'table') {
    const given = [
      ...(text ? [{ path: 'text', code: 'TEXT_NOT_ALLOWED', message: 'a table query has no text (an optional transform only)' }] : []),
      ...(extra.request ? [{ path: 'request', code: 'NOT_ALLOWED', message: 'a table query has no request' }] : []),
    ];
    return [...given, ...(await deps.evaluator.check(ds.projectId, 'transformProblems', extra.transform ?? null, [...parameters]))];
  }
  if (extra.request || extra.transform) {
    return [{ path: extra.request ? 'request' : 'transform', code: 'NOT_ALLOWED', message: `a sql query has no ${extra.request ? 'request' : 'transform'}` }];
  }
  const dialect = dialectOf(ds);
  if (!dialect) return [{ path: 'language', code: 'LANGUAGE_MISMATCH', message: `language 'sql' does not fit a ${ds.kind} datasource` }];
  return deps.evaluator.check(ds.projectId, 'queryProblems', text, dialect, [...parameters]);
}

/** The datasource a body names (UUID or short id) in the project; unknown: 404 ERR_DS_001 naming the field. */
async function datasourceFor(db: Queryable, projectId: string, ref: string): Promise<DatasourceEntity> {
  try {
    return await getDatasource({ db }, projectId, ref);
  } catch (err) {
    if (err instanceof AppError && err.code === 'ERR_DS_001') throw new AppError('ERR_DS_001', undefined, { field: 'datasourceId', datasourceId: ref });
    throw err;
  }
}

function definitionOf(q: QueryEntity): QueryDefinition {
  return {
    language: q.language,
    text: q.text,
    // Only when set: definitions of SQL queries stay as they were (a publish compares them as JSON).
    ...(q.request ? { request: q.request } : {}),
    ...(q.transform ? { transform: q.transform } : {}),
    parameters: q.parameters,
    expectedColumns: q.expectedColumns,
    maxRows: q.maxRows,
    timeoutSeconds: q.timeoutSeconds,
    onRowLimit: q.onRowLimit,
  };
}

const querySlug = (name: string) => resourceSlug(name, 'query', RESERVED_SLUGS);

function nameTaken(name: string): AppError {
  return new AppError('ERR_QRY_013', `A query named '${name}' exists in this project`, { field: 'name' });
}

/** Saves a new row; a taken slug gets a random suffix (the name stays), a taken name is 409 ERR_QRY_013. */
async function insertQuery(db: DataSource, q: QueryEntity): Promise<void> {
  try {
    await insertWithFreshCandidates(4, { reporting_queries_slug_idx: () => void (q.slug = suffixedSlug(querySlug(q.name))) }, () => db.getRepository(QueryEntity).save(q));
  } catch (err) {
    if (violatedIndex(err) === 'reporting_queries_name_idx') throw nameTaken(q.name);
    throw err;
  }
}

export async function createQuery(deps: Pick<QueryDeps, 'db' | 'evaluator' | 'limits'>, actor: Actor, input: CreateQueryInput): Promise<QueryEntity> {
  checkQueryLimits(input, deps.limits);
  const ds = await datasourceFor(deps.db, actor.projectId, input.datasourceId);
  const text = input.text ?? '';
  const parameters = input.parameters ?? [];
  const errors = await problems(deps, ds, input.language, text, parameters, input);
  if (errors.length > 0) throw invalid(errors);
  const now = new Date();
  const q = Object.assign(new QueryEntity(), {
    id: randomUUID(),
    projectId: actor.projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    slug: querySlug(input.name),
    name: input.name,
    description: input.description || null,
    folderId: input.folderId || null,
    datasourceId: ds.id,
    language: input.language,
    text,
    request: input.request ?? null,
    transform: input.transform ?? null,
    parameters,
    expectedColumns: input.expectedColumns ?? null,
    maxRows: Math.min(input.maxRows ?? ds.defaults?.maxRows ?? defaultQueryLimits(deps.limits).maxRows, deps.limits.maxRows),
    timeoutSeconds: Math.min(input.timeoutSeconds ?? ds.defaults?.timeoutSeconds ?? defaultQueryLimits(deps.limits).timeoutSeconds, deps.limits.queryTimeoutSeconds),
    onRowLimit: input.onRowLimit ?? 'fail',
    isPublished: false,
    latestVersion: 0,
    publishedAt: null,
    createdBy: actor.userId ?? null,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  } satisfies QueryEntity);
  await insertQuery(deps.db, q);
  return q;
}

export async function listQueries(deps: Pick<QueryDeps, 'db'>, projectId: string, query: ListQueriesQuery): Promise<{ queries: QueryEntity[]; total: number }> {
  const qb = deps.db.getRepository(QueryEntity).createQueryBuilder('q').where('q.projectId = :projectId AND q.deletedAt IS NULL', { projectId });
  if (query.search) qb.andWhere(`strpos(lower(q.name), lower(:search)) > 0`, { search: query.search });
  if (query.datasourceId) {
    const ds = await datasourceFor(deps.db, projectId, query.datasourceId);
    qb.andWhere('q.datasourceId = :datasourceId', { datasourceId: ds.id });
  }
  const [queries, total] = await qb
    .orderBy('q.createdAt', 'DESC')
    .addOrderBy('q.id', 'DESC')
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { queries, total };
}

/** A live query of the project by UUID, short id (`qry_…`) or slug. */
async function findQuery(db: Queryable, projectId: string, ref: string, lock = false): Promise<QueryEntity> {
  const found = await findLiveByRef(db, QueryEntity, projectId, ref, SHORT_ID_PREFIX, lock);
  if (!found) throw new AppError('ERR_QRY_001', undefined, { queryId: ref });
  return found;
}

export function getQuery(deps: Pick<QueryDeps, 'db'>, projectId: string, ref: string): Promise<QueryEntity> {
  return findQuery(deps.db, projectId, ref);
}

/**
 * PUT /queries/:id: the draft replaced as a whole by a create body (docs/reporting.md "Query objects"):
 * a field left out takes the value a new query would get (no description, no parameters, the
 * datasource's default limits, …). Name, datasource and draft checks as PATCH.
 */
export async function replaceQuery(deps: Pick<QueryDeps, 'db' | 'evaluator' | 'limits'>, actor: Actor, ref: string, input: CreateQueryInput): Promise<QueryEntity> {
  checkQueryLimits(input, deps.limits);
  const ds = await datasourceFor(deps.db, actor.projectId, input.datasourceId);
  return updateQuery(deps, actor, ref, {
    name: input.name,
    description: input.description ?? null,
    folderId: input.folderId ?? null,
    datasourceId: ds.id,
    language: input.language,
    text: input.text ?? '',
    request: input.request ?? null,
    transform: input.transform ?? null,
    parameters: input.parameters ?? [],
    expectedColumns: input.expectedColumns ?? null,
    maxRows: Math.min(input.maxRows ?? ds.defaults?.maxRows ?? defaultQueryLimits(deps.limits).maxRows, deps.limits.maxRows),
    timeoutSeconds: Math.min(input.timeoutSeconds ?? ds.defaults?.timeoutSeconds ?? defaultQueryLimits(deps.limits).timeoutSeconds, deps.limits.queryTimeoutSeconds),
    onRowLimit: input.onRowLimit ?? 'fail',
  });
}

/** Edits the draft; published versions never change. The whole resulting draft is checked again. */
export async function updateQuery(deps: Pick<QueryDeps, 'db' | 'evaluator' | 'limits'>, actor: Actor, ref: string, patch: UpdateQueryInput): Promise<QueryEntity> {
  checkQueryLimits(patch, deps.limits);
  const q = await findQuery(deps.db, actor.projectId, ref);
  const ds = await datasourceFor(deps.db, actor.projectId, patch.datasourceId ?? q.datasourceId);
  const next = Object.assign(new QueryEntity(), q, {
    name: patch.name ?? q.name,
    description: patch.description !== undefined ? patch.description || null : q.description,
    folderId: patch.folderId !== undefined ? patch.folderId || null : q.folderId,
    datasourceId: ds.id,
    language: patch.language ?? q.language,
    text: patch.text ?? q.text,
    request: patch.request !== undefined ? patch.request : q.request,
    transform: patch.transform !== undefined ? patch.transform : q.transform,
    parameters: patch.parameters ?? q.parameters,
    expectedColumns: patch.expectedColumns !== undefined ? patch.expectedColumns : q.expectedColumns,
    maxRows: patch.maxRows ?? q.maxRows,
    timeoutSeconds: patch.timeoutSeconds ?? q.timeoutSeconds,
    onRowLimit: patch.onRowLimit ?? q.onRowLimit,
    updatedAt: new Date(),
  });
  const errors = await problems(deps, ds, next.language, next.text, next.parameters, next);
  if (errors.length > 0) throw invalid(errors);
  try {
    await deps.db.getRepository(QueryEntity).save(next);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(next.name);
    throw err;
  }
  return next;
}

/**
 * Soft delete: the row and its versions stay for history, name and slug become free. While a
 * published version of a live report pins the query: 409 ERR_QRY_012 (`relatedInfo.reports`).
 */
export async function deleteQuery(deps: Pick<QueryDeps, 'db'>, projectId: string, ref: string): Promise<void> {
  const q = await findQuery(deps.db, projectId, ref);
  const reports = await reportsPinningQuery(deps.db, q.id);
  if (reports > 0) throw new AppError('ERR_QRY_012', `Published versions of ${reports} report(s) use this query; delete those reports first`, { reports });
  await deps.db.getRepository(QueryEntity).update({ id: q.id, projectId }, { deletedAt: new Date() });
}

const versions = versionedResource({
  entity: QueryVersionEntity,
  parentKey: 'queryId',
  parentTable: 'reporting_queries',
  find: findQuery,
  // A draft equal to the newest version (definition as JSON values, and the datasource) has nothing to publish.
  compared: ['definition', 'datasourceId'],
  unchanged: (latestVersion) => new AppError('ERR_QRY_003', `The draft has no changes since version ${latestVersion}`, { latestVersion }),
  /** `:version` is a version number (1, 2, …); anything else, or a number not published, is 404 ERR_QRY_004. */
  versionKey: (param) => parseVersionKey(param),
  versionNotFound: (param) => new AppError('ERR_QRY_004', `Version ${param.slice(0, 50)} not found`, { version: param.slice(0, 50) }),
});

/** The draft's checks, run again on what is published. Through the transaction's connection: the embedded store (PGlite) has one connection only. */
async function assertValid(deps: Pick<QueryDeps, 'evaluator'>, m: Queryable, projectId: string, datasourceId: string, d: QueryDefinition): Promise<void> {
  const ds = await datasourceFor(m, projectId, datasourceId);
  const errors = await problems(deps, ds, d.language, d.text, d.parameters, d);
  if (errors.length > 0) throw invalid(errors);
}

/** Publishes the draft as the next version (the row locked meanwhile); an unchanged draft is 409 ERR_QRY_003. */
export function publishQuery(deps: Pick<QueryDeps, 'db' | 'evaluator'>, actor: Actor, ref: string, releaseNotes?: string | null): Promise<QueryVersionEntity> {
  return versions.publish(deps.db, actor, ref, releaseNotes, {
    snapshot: (_m, q) => ({ definition: definitionOf(q), datasourceId: q.datasourceId }),
    // Saved drafts were valid when saved; checking again keeps a version from outliving a rule fix.
    check: (m, _q, v) => assertValid(deps, m, actor.projectId, v.datasourceId, v.definition),
  });
}

export type VersionRecord = VersionRecordOf<QueryVersionEntity>;

/** Newest first. */
export function listVersions(deps: Pick<QueryDeps, 'db'>, projectId: string, ref: string): Promise<VersionRecord[]> {
  return versions.list(deps.db, projectId, ref);
}

export async function getVersion(deps: Pick<QueryDeps, 'db'>, projectId: string, ref: string, param: string): Promise<VersionRecord> {
  const { parent: _query, ...record } = await versions.get(deps.db, projectId, ref, param);
  return record;
}

/**
 * Restore, as templates: the old version's definition and datasource become the draft and are
 * published at once as the next version. Name, description and folder stay as they are now.
 */
export function restoreVersion(deps: Pick<QueryDeps, 'db' | 'evaluator'>, actor: Actor, ref: string, param: string, releaseNotes?: string | null): Promise<RestoreResult> {
  return versions.restore(deps.db, actor, ref, param, releaseNotes, {
    restore: async (m, q, old) => {
      const d = old.definition;
      await assertValid(deps, m, actor.projectId, old.datasourceId, d);
      await m.getRepository(QueryEntity).update(
        { id: q.id },
        {
          datasourceId: old.datasourceId,
          language: d.language,
          text: d.text,
          request: d.request ?? null,
          transform: d.transform ?? null,
          parameters: d.parameters,
          expectedColumns: d.expectedColumns,
          maxRows: d.maxRows,
          timeoutSeconds: d.timeoutSeconds,
          onRowLimit: d.onRowLimit,
          updatedAt: new Date(),
        } as never,
      );
      return { definition: d, datasourceId: old.datasourceId };
    },
  });
}

export interface ValidationResult {
  valid: boolean;
  errors: Problem[];
  /** What does not stop the query from being saved but is likely a mistake (a parameter no placeholder uses). */
  warnings: Problem[];
  /** The names of the text's (or the request's) `{{ name }}` placeholders, each once, in order. */
  placeholders: string[];
  /**
   * A valid SQL query's statement as a run without given values sends it: the dialect's bind
   * markers (`$1`, `?`), optional clauses without a value dropped, and the values bound (the
   * parameters' defaults). null for other languages, a query with errors, or one that cannot be
   * compiled without values (a required parameter with no default, an empty list).
   */
  compiled: { text: string; values: unknown[] } | null;
}

/**
 * The save-time checks without saving (POST /queries/validate, docs/reporting.md "Query objects"):
 * against a datasource of the project (`datasourceId`) or a datasource kind (`kind`, before one
 * exists). The language defaults to the one the kind runs.
 */
export async function validateQuery(deps: Pick<QueryDeps, 'db' | 'evaluator'>, projectId: string, input: ValidateQueryInput): Promise<ValidationResult> {
  const ds = input.datasourceId ? await datasourceFor(deps.db, projectId, input.datasourceId) : ({ kind: input.kind!, projectId } as DatasourceEntity);
  const language = input.language ?? LANGUAGE_OF_KIND[ds.kind];
  const text = input.text ?? '';
  const parameters = input.parameters ?? [];
  const errors = await problems(deps, ds, language, text, parameters, input);
  const dialect = language === 'sql' ? dialectOf(ds) : null;
  const placeholders = language === 'sql' || language === 'http' ? await deps.evaluator.check(projectId, 'queryPlaceholders', text, dialect, language === 'http' ? (input.request ?? null) : null) : [];
  const warnings: Problem[] = [];
  // A table query's transform reads its values as $$.params: any parameter may be used there.
  if (language !== 'table') {
    parameters.forEach((p, i) => {
      if (typeof p?.name === 'string' && !placeholders.includes(p.name)) {
        warnings.push({ path: `parameters[${i}]`, code: 'UNUSED_PARAMETER', message: `parameter '${p.name}' is used by no {{ placeholder }}` });
      }
    });
  }
  const compiled = errors.length === 0 && dialect ? await compiledWithDefaults(deps, projectId, ds.kind, text, parameters) : null;
  return { valid: errors.length === 0, errors, warnings, placeholders, compiled };
}

/** The statement a run without given values sends (validateQuery's `compiled`), or null when it needs values. */
async function compiledWithDefaults(deps: Pick<QueryDeps, 'evaluator'>, projectId: string, kind: DatasourceKind, text: string, parameters: ParameterDef[]): Promise<ValidationResult['compiled']> {
  try {
    const values = coerceParameters(parameters, {}, { now: new Date(), timezone: 'UTC' });
    const { text: sql, values: bound } = await compileQuery(deps.evaluator, projectId, kind, { language: 'sql', text, parameters }, values);
    return { text: sql, values: bound };
  } catch (err) {
    if (err instanceof AppError) return null;
    throw err;
  }
}

/**
 * Runs a compiled statement from this process for a preview: at most PREVIEW_MAX_ROWS rows (a longer
 * result is cut and says `truncated`) and PREVIEW_MAX_BYTES, within the query's timeout. Runner
 * errors are the answer (ERR_QRY_006..010).
 */
export async function previewRows(
  deps: Pick<QueryDeps, 'connect' | 'db'> & { evaluator?: Evaluator; storage?: ArtefactStorage },
  ds: DatasourceEntity,
  compiled: CompiledQuery,
  limits: { timeoutSeconds: number; maxRows: number },
  wait = DEFAULT_WAIT_SECONDS,
): Promise<{ columns: ResultColumn[]; rows: Array<Record<string, unknown>>; rowCount: number; truncated: boolean; durationMs: number }> {
  if (ds.connectionMode === 'agent') {
    if (!deps.storage) throw new Error('previewRows: an agent preview needs the artefact storage');
    const payload = previewPayload(ds, compiled, { maxRows: Math.min(limits.maxRows, PREVIEW_MAX_ROWS), timeoutSeconds: limits.timeoutSeconds, maxBytes: PREVIEW_MAX_BYTES });
    const task = await askAgent(deps.db, ds, 'preview', payload, wait);
    // Past the wait: 503 ERR_AGENT_012 naming the task (a query preview answers 202 with it instead).
    if (!isDone(task)) throw new AppError('ERR_AGENT_012', 'The agent has not answered yet', pending(task));
    return previewOutcome(deps.storage, task);
  }
  const lines: string[] = [];
  const secrets = Object.fromEntries(Object.entries(ds.secrets).map(([name, s]) => [name, s.value]));
  const runner = deps.connect({ kind: ds.kind, config: ds.config, secrets, evaluator: deps.evaluator, tenant: ds.projectId, storage: deps.storage, datasourceId: ds.id });
  try {
    const summary = await runner.run(
      compiled,
      { timeoutMs: limits.timeoutSeconds * 1000, maxRows: Math.min(limits.maxRows, PREVIEW_MAX_ROWS), maxBytes: PREVIEW_MAX_BYTES, onRowLimit: 'truncate' },
      { write: async (line) => void lines.push(line) },
    );
    return { ...summary, rows: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  } finally {
    await runner.close().catch(() => undefined);
  }
}

/** A published version as the fields a preview reads (definition and datasource as they were published). */
async function publishedDefinition(db: DataSource, projectId: string, ref: string, version: number) {
  const { version: v } = await versions.get(db, projectId, ref, String(version));
  const d = v.definition;
  return { datasourceId: v.datasourceId, language: d.language, text: d.text, request: d.request ?? null, transform: d.transform ?? null, parameters: d.parameters, timeoutSeconds: d.timeoutSeconds, maxRows: d.maxRows };
}

export interface PreviewResult {
  columns: Array<{ name: string; type: string }>;
  rows: Array<Record<string, unknown>>;
  rowCount: number;
  truncated: boolean;
  durationMs: number;
  executedBy: 'server' | 'agent';
}

/**
 * Runs the draft once with the given parameter values and answers the first rows (at most `limit`,
 * ≤ 1000; a longer result is cut and says `truncated`), within the query's timeout and a 5 MB cap.
 * Values are bound, never put into the text. Runner errors are the answer (ERR_QRY_006..010).
 */
export async function previewQuery(deps: QueryDeps, projectId: string, ref: string, input: PreviewQueryInput): Promise<PreviewResult> {
  const draft = await findQuery(deps.db, projectId, ref);
  // A published version (`version: n`) runs its own definition against its own datasource; 404 ERR_QRY_004 when there is none.
  const q = input.version === undefined || input.version === 'draft' ? draft : await publishedDefinition(deps.db, projectId, ref, input.version);
  const ds = await datasourceFor(deps.db, projectId, q.datasourceId);
  const dialect = dialectOf(ds);
  const http = q.language === 'http' && ds.kind === 'http_json' && q.request;
  const table = q.language === 'table' && ds.kind === 'csv';
  if (!http && !table && (q.language !== 'sql' || !dialect)) throw invalid(await problems(deps, ds, q.language, q.text, q.parameters, q));
  const values = coerceParameters(q.parameters, input.parameters ?? {}, { now: new Date(), timezone: 'UTC' });
  const compiled = await compileQuery(deps.evaluator, projectId, ds.kind, q, values);
  const summary = await previewRows(deps, ds, compiled, { timeoutSeconds: q.timeoutSeconds, maxRows: Math.min(input.limit, q.maxRows) }, input.wait);
  return {
    columns: summary.columns.map((c) => ({ name: c.name, type: c.dataType })),
    rows: summary.rows,
    rowCount: summary.rowCount,
    truncated: summary.truncated,
    durationMs: summary.durationMs,
    executedBy: ds.connectionMode === 'agent' ? 'agent' : 'server',
  };
}
