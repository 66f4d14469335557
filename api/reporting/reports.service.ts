import { findLiveByRef } from '../../db/reporting/find-live';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { QueryEntity } from '../../db/reporting/query.entity';
import { QueryVersionEntity } from '../../db/reporting/query-version.entity';
import { type PinnedDefinition, type ReportDataset, type ReportDefinition, ReportEntity, type ReportOutput, type VersionRef } from '../../db/reporting/report.entity';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { isJobItem, isScheduled } from '../../db/reporting/schedule-targets';
import { TemplateEntity } from '../../db/templates/template.entity';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import { AppError } from '../../domain/errors';
import { checkOutput } from '../../domain/documents/output';
import { isUuid } from '../../domain/ids';
import { checkFilenamePattern, DEFAULT_FILENAME_PATTERN } from '../../domain/reporting/filename-pattern';
import { BUILT_IN_PARAMETERS, checkParameterDefs, coerceParameters, type ParameterDef } from '../../domain/reporting/parameters';
import { randomBase62 } from '../../domain/signing';
import { parseVersionKey } from '../../domain/versions';
import type { TemplateVariable } from '../../domain/templates/template.types';
import { resourceSlug, suffixedSlug } from '../../domain/templates/template-ids';
import { getQuery, type Actor } from './queries.service';
import { insertWithFreshCandidates, isUniqueViolation, violatedIndex, type Queryable } from '../../db/sql';
import { type RestoreResult, versionedResource, type VersionRecord as VersionRecordOf } from '../../db/versioned-resource';
import type { CreateReportInput, DatasetInput, ListReportsQuery, UpdateReportInput } from './reports.schema';

/**
 * Reports (docs/reporting.md "Reports"): a draft checked when saved, published as
 * immutable numbered versions like query objects. A version holds the resolved definition: the
 * template and query versions it pins as numbers. Every lookup is within the project: another
 * project's report answers ERR_RPT_001 like one that does not exist.
 */

export interface ReportDeps {
  db: DataSource;
}

export type { Actor };

const SHORT_ID_PREFIX = 'rpt_';
/** The router answers no static path segment under /reports/: no slug is reserved. */
const RESERVED_SLUGS: ReadonlySet<string> = new Set();
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** A mapping to a report parameter: exactly `{{name}}` (spaces allowed inside the braces). */
const PARAM_REF = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,62})\s*\}\}$/;

export interface Problem {
  path: string;
  message: string;
}

function invalid(errors: Problem[]): AppError {
  return new AppError('ERR_RPT_005', `Report invalid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
}

const reportSlug = (name: string) => resourceSlug(name, 'report', RESERVED_SLUGS);

function nameTaken(name: string): AppError {
  return new AppError('ERR_RPT_006', `A report named '${name}' exists in this project`, { field: 'name' });
}

const quote = (s: string) => `'${s.slice(0, 100)}'`;

// ---------------------------------------------------------------------------------------------
// Draft checks: what a definition must be on its own (save and publish)
// ---------------------------------------------------------------------------------------------

/** Problems of a definition without looking at its template and queries. */
function draftProblems(d: ReportDefinition): Problem[] {
  const problems: Problem[] = checkParameterDefs(d.parameters).map(({ path, message }) => ({ path, message }));
  const reportParams = new Set(d.parameters.map((p) => p.name));
  const names = new Set<string>();
  d.datasets.forEach((ds, i) => {
    const at = `datasets[${i}]`;
    if (!IDENTIFIER.test(ds.name)) problems.push({ path: `${at}.name`, message: 'A dataset name is an identifier (letters, digits, _; not starting with a digit)' });
    else if (names.has(ds.name)) problems.push({ path: `${at}.name`, message: `Dataset ${quote(ds.name)} is defined twice` });
    names.add(ds.name);
    if (ds.bindTo !== undefined && !IDENTIFIER.test(ds.bindTo)) problems.push({ path: `${at}.bindTo`, message: 'bindTo names a template variable (an identifier)' });
    for (const [param, value] of Object.entries(ds.parameters)) {
      const p = `${at}.parameters.${param.slice(0, 100)}`;
      if (!IDENTIFIER.test(param)) {
        problems.push({ path: p, message: 'A query parameter name is an identifier' });
        continue;
      }
      if (typeof value !== 'string' || !value.includes('{{')) continue;
      const m = PARAM_REF.exec(value);
      if (!m) problems.push({ path: p, message: 'A mapping is exactly "{{reportParameter}}" or a literal value' });
      else if (!reportParams.has(m[1]) && !BUILT_IN_PARAMETERS.includes(m[1])) problems.push({ path: p, message: `{{${m[1]}}} names no parameter of the report` });
    }
  });
  const formats = new Set<string>();
  d.outputs.forEach((o, i) => {
    const at = `outputs[${i}]`;
    if (formats.has(o.format)) problems.push({ path: `${at}.format`, message: `Format ${o.format} is listed twice` });
    formats.add(o.format);
    if (o.datasets && o.format !== 'csv') problems.push({ path: `${at}.datasets`, message: 'Only csv outputs name datasets' });
    o.datasets?.forEach((n, j) => {
      if (!names.has(n)) problems.push({ path: `${at}.datasets[${j}]`, message: `No dataset named ${quote(n)}` });
    });
    if (o.format !== 'csv' && !d.templateId) problems.push({ path: 'templateId', message: `A ${o.format} output needs a template` });
  });
  problems.push(...checkFilenamePattern(d.filenamePattern, [...reportParams]));
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Resolving a body's references (save)
// ---------------------------------------------------------------------------------------------

/** The template a body names (UUID, shortId or slug) as its UUID; unknown: a problem. */
async function templateIdFor(db: Queryable, projectId: string, ref: string, problems: Problem[]): Promise<string | null> {
  try {
    return (await findTemplate(db, projectId, ref)).id;
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'ERR_TMPL_001')) throw err;
    problems.push({ path: 'templateId', message: `No template ${quote(ref)} in this project` });
    return null;
  }
}

async function datasetsFor(db: DataSource, projectId: string, inputs: DatasetInput[], problems: Problem[]): Promise<ReportDataset[]> {
  const out: ReportDataset[] = [];
  for (const [i, input] of inputs.entries()) {
    let queryId = input.queryId;
    try {
      queryId = (await getQuery({ db }, projectId, input.queryId)).id;
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'ERR_QRY_001')) throw err;
      problems.push({ path: `datasets[${i}].queryId`, message: `No query object ${quote(input.queryId)} in this project` });
    }
    out.push({
      name: input.name,
      queryId,
      queryVersion: input.queryVersion,
      parameters: input.parameters,
      shape: input.shape,
      ...(input.bindTo ? { bindTo: input.bindTo } : {}),
    });
  }
  return out;
}

/**
 * A report's `output` options (a pdf output's), against the same rules as a generation's
 * (checkOutput): 400 ERR_VALID_001 naming `outputs.<i>.output.<field>` when the report is saved.
 * A definition does not keep encryption passwords (encrypt per generation instead).
 */
function checkReportOutputs(outputs: ReportOutput[]): void {
  outputs.forEach((o, i) => {
    if (!o.output) return;
    // Named as Joi names the same fields (`outputs.0.output.pdfa`), so one field has one name whichever check refuses it.
    const at = `outputs.${i}`;
    if (o.format !== 'pdf') throw new AppError('ERR_VALID_001', `${at}.output applies to pdf outputs only`, { field: `${at}.output` });
    if (o.output.encryption) throw new AppError('ERR_VALID_001', 'A report does not keep encryption passwords: output.encryption is not accepted', { field: `${at}.output.encryption` });
    try {
      checkOutput('pdf', o.output);
    } catch (err) {
      if (err instanceof AppError && typeof err.relatedInfo?.field === 'string') throw new AppError(err.code, err.message, { ...err.relatedInfo, field: `${at}.${err.relatedInfo.field}` });
      throw err;
    }
  });
}

const defaultOutputs = (templateId: string | null): ReportOutput[] => [{ format: templateId ? 'pdf' : 'csv' }];

/** The draft a create or update body gives (on top of `base` for an update), checked; problems: 400 ERR_RPT_005. */
async function draftFrom(db: DataSource, projectId: string, input: UpdateReportInput, base: ReportDefinition | null): Promise<ReportDefinition> {
  const problems: Problem[] = [];
  let templateId = base?.templateId ?? null;
  if (input.templateId !== undefined) templateId = input.templateId ? await templateIdFor(db, projectId, input.templateId, problems) : null;
  const datasets = input.datasets ? await datasetsFor(db, projectId, input.datasets, problems) : (base?.datasets ?? []);
  const draft: ReportDefinition = {
    templateId,
    templateVersion: templateId ? (input.templateVersion ?? base?.templateVersion ?? 'latest') : null,
    datasets,
    parameters: input.parameters ?? base?.parameters ?? [],
    outputs: input.outputs ?? base?.outputs ?? defaultOutputs(templateId),
    filenamePattern: input.filenamePattern !== undefined ? input.filenamePattern || DEFAULT_FILENAME_PATTERN : (base?.filenamePattern ?? DEFAULT_FILENAME_PATTERN),
    skipIfEmpty: input.skipIfEmpty ?? base?.skipIfEmpty ?? false,
    useCredit: input.useCredit ?? base?.useCredit ?? false,
  };
  if (input.outputs) checkReportOutputs(draft.outputs);
  // An unknown template is one problem, not also "a pdf output needs a template".
  const unknownTemplate = problems.some((p) => p.path === 'templateId');
  problems.push(...draftProblems(draft).filter((p) => !(unknownTemplate && p.path === 'templateId')));
  if (problems.length > 0) throw invalid(problems);
  return draft;
}

// ---------------------------------------------------------------------------------------------
// Publish checks: the definition against its template and queries
// ---------------------------------------------------------------------------------------------

/** A version reference against the newest published one: its number, or why it cannot be used. */
function resolveVersion(ref: VersionRef | null, latest: number): number | string {
  if (latest < 1) return 'is not published';
  if (ref === null || ref === 'latest') return latest;
  return ref <= latest ? ref : `has no version ${ref} (latest is ${latest})`;
}

function variableFits(v: TemplateVariable | undefined, shape: ReportDataset['shape']): string | null {
  if (!v) return 'names no variable of the template';
  if (shape === 'rows' && v.type !== 'array') return `names a ${v.type} variable; shape rows needs an array variable`;
  if (shape === 'first_row' && v.type !== 'object') return `names a ${v.type} variable; shape first_row needs an object variable`;
  if (shape === 'value' && (v.type === 'array' || v.type === 'object')) return `names an ${v.type} variable; shape value needs a single-value variable`;
  return null;
}

/** A literal's problem against the query parameter it fills, if any. */
function literalProblem(def: ParameterDef, value: unknown): string | null {
  try {
    coerceParameters([def], { [def.name]: value }, { now: new Date(), timezone: 'UTC' });
    return null;
  } catch (err) {
    if (err instanceof AppError) return err.message;
    throw err;
  }
}

/**
 * Every problem of a definition at once, the draft's own and its dependencies': the template
 * exists, is published, has the version and renders the requested formats; every query is a live
 * published query of the project with the version; its parameters are mapped (required ones, no
 * unknown ones, literals of the right type); `bindTo` names a template variable of the shape's type.
 * Answers the definition with every version as a number.
 */
export async function pin(m: Queryable, projectId: string, d: ReportDefinition): Promise<PinnedDefinition> {
  const problems = draftProblems(d);
  let templateVersion: number | null = null;
  let variables: TemplateVariable[] | null = null;
  if (d.templateId) {
    const t = await m.getRepository(TemplateEntity).findOneBy({ id: d.templateId, projectId });
    if (!t || t.deletedAt) problems.push({ path: 'templateId', message: 'The template no longer exists' });
    else {
      const v = resolveVersion(d.templateVersion, t.latestVersion);
      if (typeof v === 'string') problems.push({ path: d.templateVersion === 'latest' || t.latestVersion < 1 ? 'templateId' : 'templateVersion', message: `Template ${quote(t.name)} ${v}` });
      else {
        const row = await m.getRepository(TemplateVersionEntity).findOneBy({ templateId: t.id, version: v });
        if (!row) problems.push({ path: 'templateVersion', message: `Template ${quote(t.name)} has no version ${v}` });
        else {
          templateVersion = v;
          variables = row.definition.variables ?? [];
          d.outputs.forEach((o, i) => {
            if (o.format !== 'csv' && !row.outputFormats.includes(o.format)) {
              problems.push({ path: `outputs[${i}].format`, message: `Template ${quote(t.name)} version ${v} does not render ${o.format} (it renders ${row.outputFormats.join(', ')})` });
            }
          });
        }
      }
    }
  }
  const datasets: PinnedDefinition['datasets'] = [];
  for (const [i, ds] of d.datasets.entries()) {
    const at = `datasets[${i}]`;
    let queryVersion = 0;
    const q = isUuid(ds.queryId) ? await m.getRepository(QueryEntity).findOneBy({ id: ds.queryId, projectId }) : null;
    if (!q || q.deletedAt) problems.push({ path: `${at}.queryId`, message: 'The query object no longer exists' });
    else {
      const v = resolveVersion(ds.queryVersion, q.latestVersion);
      if (typeof v === 'string') problems.push({ path: ds.queryVersion === 'latest' || q.latestVersion < 1 ? `${at}.queryId` : `${at}.queryVersion`, message: `Query ${quote(q.name)} ${v}` });
      else {
        const row = await m.getRepository(QueryVersionEntity).findOneBy({ queryId: q.id, version: v });
        if (!row) problems.push({ path: `${at}.queryVersion`, message: `Query ${quote(q.name)} has no version ${v}` });
        else {
          queryVersion = v;
          const defs = row.definition.parameters;
          for (const [param, value] of Object.entries(ds.parameters)) {
            const def = defs.find((p) => p.name === param);
            if (!def) problems.push({ path: `${at}.parameters.${param.slice(0, 100)}`, message: `Query ${quote(q.name)} version ${v} has no parameter ${quote(param)}` });
            else if (!(typeof value === 'string' && PARAM_REF.test(value))) {
              const why = literalProblem(def, value);
              if (why) problems.push({ path: `${at}.parameters.${param}`, message: why });
            }
          }
          for (const def of defs) {
            const mapped = ds.parameters[def.name];
            if (def.required && (def.default === undefined || def.default === null) && (mapped === undefined || mapped === null)) {
              problems.push({ path: `${at}.parameters.${def.name}`, message: `Required parameter ${quote(def.name)} of query ${quote(q.name)} is not mapped to a value or a report parameter` });
            }
          }
        }
      }
    }
    if (variables) {
      const why = variableFits(
        variables.find((v) => v.name === (ds.bindTo ?? ds.name)),
        ds.shape,
      );
      if (why) problems.push({ path: `${at}.bindTo`, message: `${quote(ds.bindTo ?? ds.name)} ${why}` });
    }
    datasets.push({ ...ds, queryVersion });
  }
  if (problems.length > 0) throw invalid(problems);
  return { ...d, templateVersion, datasets };
}

// ---------------------------------------------------------------------------------------------
// CRUD
// ---------------------------------------------------------------------------------------------

/** Saves a new row; a taken slug gets a random suffix (the name stays), a taken name is 409 ERR_RPT_006. */
async function insertReport(db: DataSource, r: ReportEntity): Promise<void> {
  try {
    await insertWithFreshCandidates(4, { reporting_reports_slug_idx: () => void (r.slug = suffixedSlug(reportSlug(r.name))) }, () => db.getRepository(ReportEntity).save(r));
  } catch (err) {
    if (violatedIndex(err) === 'reporting_reports_name_idx') throw nameTaken(r.name);
    throw err;
  }
}

export async function createReport(deps: ReportDeps, actor: Actor, input: CreateReportInput): Promise<ReportEntity> {
  const draft = await draftFrom(deps.db, actor.projectId, input, null);
  const now = new Date();
  const r = Object.assign(new ReportEntity(), {
    id: randomUUID(),
    projectId: actor.projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    slug: reportSlug(input.name),
    name: input.name,
    description: input.description || null,
    folderId: input.folderId || null,
    draft,
    isPublished: false,
    latestVersion: 0,
    publishedAt: null,
    createdBy: actor.userId ?? null,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  } satisfies ReportEntity);
  await insertReport(deps.db, r);
  return r;
}

const SORT_COLUMNS = { name: 'lower(r.name)', createdAt: 'r.createdAt', updatedAt: 'r.updatedAt' } as const;

export async function listReports(deps: ReportDeps, projectId: string, query: ListReportsQuery): Promise<{ reports: ReportEntity[]; total: number }> {
  const qb = deps.db.getRepository(ReportEntity).createQueryBuilder('r').where('r.projectId = :projectId AND r.deletedAt IS NULL', { projectId });
  if (query.search) qb.andWhere(`strpos(lower(r.name), lower(:search)) > 0`, { search: query.search });
  if (query.folderId) qb.andWhere('r.folderId = :folderId', { folderId: query.folderId });
  if (query.isPublished !== undefined) qb.andWhere('r.isPublished = :isPublished', { isPublished: query.isPublished });
  const order = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
  if (query.sortBy === 'name') qb.addSelect('lower(r.name)', 'sort_name').orderBy('sort_name', order);
  else qb.orderBy(SORT_COLUMNS[query.sortBy], order);
  const [reports, total] = await qb
    .addOrderBy('r.id', order)
    .offset((query.page - 1) * query.limit)
    .limit(query.limit)
    .getManyAndCount();
  return { reports, total };
}

/** A live report of the project by UUID, short id (`rpt_…`) or slug. */
async function findReport(db: Queryable, projectId: string, ref: string, lock = false): Promise<ReportEntity> {
  const found = await findLiveByRef(db, ReportEntity, projectId, ref, SHORT_ID_PREFIX, lock);
  if (!found) throw new AppError('ERR_RPT_001', undefined, { reportId: ref.slice(0, 200) });
  return found;
}

export function getReport(deps: ReportDeps, projectId: string, ref: string): Promise<ReportEntity> {
  return findReport(deps.db, projectId, ref);
}

/** Edits the draft (PUT/PATCH: the fields given); published versions never change. The whole draft is checked again. */
export async function updateReport(deps: ReportDeps, actor: Actor, ref: string, patch: UpdateReportInput): Promise<ReportEntity> {
  const r = await findReport(deps.db, actor.projectId, ref);
  const draft = await draftFrom(deps.db, actor.projectId, patch, r.draft);
  const next = Object.assign(new ReportEntity(), r, {
    name: patch.name ?? r.name,
    description: patch.description !== undefined ? patch.description || null : r.description,
    folderId: patch.folderId !== undefined ? patch.folderId || null : r.folderId,
    draft,
    updatedAt: new Date(),
  });
  try {
    await deps.db.getRepository(ReportEntity).save(next);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(next.name);
    throw err;
  }
  return next;
}

/** Soft delete: the row and its versions stay for history; name and slug become free. */
export async function deleteReport(deps: ReportDeps, projectId: string, ref: string): Promise<void> {
  const r = await findReport(deps.db, projectId, ref);
  if (await isScheduled(deps.db, 'report', r.id)) throw new AppError('ERR_RPT_013', undefined, { reportId: r.id, usedBy: 'schedules' });
  if (await isJobItem(deps.db, projectId, r.id)) throw new AppError('ERR_RPT_013', undefined, { reportId: r.id, usedBy: 'jobs' });
  await deps.db.getRepository(ReportEntity).update({ id: r.id, projectId }, { deletedAt: new Date() });
}

// ---------------------------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------------------------

const versions = versionedResource({
  entity: ReportVersionEntity,
  parentKey: 'reportId',
  parentTable: 'reporting_reports',
  find: findReport,
  // A resolved definition equal to the newest version's has nothing to publish.
  compared: ['definition'],
  unchanged: (latestVersion) => new AppError('ERR_RPT_004', `The draft has no changes since version ${latestVersion}`, { latestVersion }),
  /** `:version` is a version number (1, 2, …); anything else, or a number not published, is 404 ERR_RPT_002. */
  versionKey: (param) => parseVersionKey(param),
  versionNotFound: (param) => new AppError('ERR_RPT_002', `Version ${param.slice(0, 50)} not found`, { version: param.slice(0, 50) }),
});

/** A version keeps the report's name and description as they are at publication. */
const stateOf = (r: ReportEntity) => ({ name: r.name, description: r.description });

/**
 * Publishes the draft as the next version, `latest` resolved to the newest published template and
 * query versions (the row locked meanwhile). Every problem is one 400 ERR_RPT_005, checked before
 * the comparison since the resolved definition is what is compared: equal to the newest is 409 ERR_RPT_004.
 */
export function publishReport(deps: ReportDeps, actor: Actor, ref: string, releaseNotes?: string | null): Promise<ReportVersionEntity> {
  return versions.publish(deps.db, actor, ref, releaseNotes, {
    snapshot: async (m, r) => ({ ...stateOf(r), definition: await pin(m, actor.projectId, r.draft), draft: r.draft }),
  });
}

export type VersionRecord = VersionRecordOf<ReportVersionEntity>;

/** Newest first. */
export function listVersions(deps: ReportDeps, projectId: string, ref: string): Promise<VersionRecord[]> {
  return versions.list(deps.db, projectId, ref);
}

export async function getVersion(deps: ReportDeps, projectId: string, ref: string, param: string): Promise<VersionRecord> {
  const { parent: _report, ...record } = await versions.get(deps.db, projectId, ref, param);
  return record;
}

/**
 * Restore, as query objects: the old version's draft (as written, `latest` kept) becomes the draft,
 * and the old version's pinned definition is published at once as the next version, after the
 * publish checks (its template and queries must still be live). Name, description and folder stay.
 */
export function restoreVersion(deps: ReportDeps, actor: Actor, ref: string, param: string, releaseNotes?: string | null): Promise<RestoreResult> {
  return versions.restore(deps.db, actor, ref, param, releaseNotes, {
    restore: async (m, r, old) => {
      const definition = await pin(m, actor.projectId, old.definition);
      await m.getRepository(ReportEntity).update({ id: r.id }, { draft: old.draft, updatedAt: new Date() } as never);
      return { ...stateOf(r), definition, draft: old.draft };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Outdated dependencies
// ---------------------------------------------------------------------------------------------

export interface OutdatedDependency {
  type: 'template' | 'query';
  id: string;
  name: string;
  /** The dataset pinning the query (query dependencies). */
  dataset?: string;
  pinnedVersion: number;
  latestVersion: number;
}

/**
 * Per report id: the template and query versions its newest published version pins that have newer
 * published versions since (read on every answer; a deleted dependency is not listed).
 */
export async function outdatedDependencies(db: Queryable, reports: ReportEntity[]): Promise<Map<string, OutdatedDependency[]>> {
  const out = new Map<string, OutdatedDependency[]>(reports.map((r) => [r.id, []]));
  const published = reports.filter((r) => r.latestVersion > 0);
  if (published.length === 0) return out;
  const versions: Array<{ reportId: string; definition: PinnedDefinition }> = await db.query(
    `SELECT v.report_id AS "reportId", v.definition FROM reporting_report_versions v
       JOIN reporting_reports r ON r.id = v.report_id AND r.latest_version = v.version
      WHERE v.report_id = ANY($1::uuid[])`,
    [published.map((r) => r.id)],
  );
  const templateIds = [...new Set(versions.flatMap((v) => (v.definition.templateId ? [v.definition.templateId] : [])))];
  const queryIds = [...new Set(versions.flatMap((v) => v.definition.datasets.map((d) => d.queryId)).filter(isUuid))];
  const latest = async (table: string, ids: string[]) =>
    new Map(
      (ids.length === 0 ? [] : ((await db.query(`SELECT id, name, latest_version AS "latestVersion" FROM ${table} WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL`, [ids])) as Array<{ id: string; name: string; latestVersion: number }>)).map(
        (row) => [row.id, row],
      ),
    );
  const [templates, queries] = await Promise.all([latest('templates', templateIds), latest('reporting_queries', queryIds)]);
  for (const { reportId, definition: d } of versions) {
    const list = out.get(reportId) ?? [];
    const t = d.templateId ? templates.get(d.templateId) : undefined;
    if (t && d.templateVersion !== null && t.latestVersion > d.templateVersion) {
      list.push({ type: 'template', id: t.id, name: t.name, pinnedVersion: d.templateVersion, latestVersion: t.latestVersion });
    }
    for (const ds of d.datasets) {
      const q = queries.get(ds.queryId);
      if (q && q.latestVersion > ds.queryVersion) list.push({ type: 'query', id: q.id, name: q.name, dataset: ds.name, pinnedVersion: ds.queryVersion, latestVersion: q.latestVersion });
    }
    out.set(reportId, list);
  }
  return out;
}
