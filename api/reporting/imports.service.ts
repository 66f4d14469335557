import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { DataSource } from 'typeorm';
import type { ImportPool } from '../../adapters/evaluation/import-pool';
import { type ImportAction, ImportEntity, type ImportItem, type ImportStatus } from '../../db/reporting/import.entity';
import { QueryEntity } from '../../db/reporting/query.entity';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type { ImportedQuery, ParsedItem } from '../../domain/reporting/imports/model';
import { draftTemplateFor } from '../../domain/reporting/imports/template';
import { randomBase62 } from '../../domain/signing';
import { freeName as freeTemplateName, nameExists as templateNameExists } from '../templates/template-store.service';
import { createTemplate } from '../templates/templates.service';
import { createReport } from './reports.service';
import { getDatasource } from './datasources.service';
import type { SystemLimits } from './limits';
import type { ImportInput, ListImportsQuery } from './imports.schema';
import { type Actor, createQuery, updateQuery, validateQuery } from './queries.service';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Model imports (docs/reporting.md "Imports"): an uploaded Metabase, Redash or
 * JRXML model becomes draft query objects, each made through the query service so every save-time
 * check applies (a query the checks refuse is an item that needs attention, with their message).
 * A dry run answers the same items and creates no query; every import, dry runs too, is recorded.
 */

export interface ImportDeps {
  db: DataSource;
  evaluator: Evaluator;
  limits: SystemLimits;
  /** Where model files are read (worker processes, one per project at a time). */
  importPool: ImportPool;
}

/** The import caps (docs/reporting.md "Limits"). */
export const IMPORT_MAX_BYTES = 10 * 1024 * 1024;
const ZIP_CAPS = { maxEntries: 500, maxBytes: 50 * 1024 * 1024 };
const SHORT_ID_PREFIX = 'rimp_';
/** Renamed copies tried before an item gives up (`name (imported 2)`, …). */
const MAX_RENAMES = 20;

export interface UploadedFile {
  filepath: string;
  size: number;
  originalFilename?: string | null;
}

/** The live query of the project with this name (names are unique case-insensitively). */
function queryNamed(db: DataSource, projectId: string, name: string): Promise<QueryEntity | null> {
  return db.getRepository(QueryEntity).createQueryBuilder('q').where('q.projectId = :projectId AND q.deletedAt IS NULL AND lower(q.name) = lower(:name)', { projectId, name }).getOne();
}

async function freeName(db: DataSource, projectId: string, name: string, taken: Set<string>): Promise<string | null> {
  for (let n = 1; n <= MAX_RENAMES; n += 1) {
    const suffix = n === 1 ? ' (imported)' : ` (imported ${n})`;
    const candidate = name.slice(0, 100 - suffix.length).trimEnd() + suffix;
    if (!taken.has(candidate.toLowerCase()) && !(await queryNamed(db, projectId, candidate))) return candidate;
  }
  return null;
}

const problemMessage = (err: unknown): string => {
  if (!(err instanceof AppError)) throw err;
  const errors = (err.relatedInfo as { errors?: Array<{ path: string; message: string }> } | undefined)?.errors;
  return (errors?.length ? errors.map((e) => `${e.path}: ${e.message}`).join('; ') : err.message).slice(0, 2000);
};

interface Resolved {
  datasourceId: string | null;
  /** Why there is none. */
  missing?: string;
}

/** The datasource an item's queries run on: its source database in `datasourceMap`, else `datasourceId`. */
function datasourceOf(item: ParsedItem, map: Map<string, string>, fallback: string | null): Resolved {
  const mapped = item.datasourceRef !== null ? map.get(item.datasourceRef) : undefined;
  if (mapped) return { datasourceId: mapped };
  if (fallback) return { datasourceId: fallback };
  const named = item.datasourceRef !== null ? ` or a datasourceMap entry for '${item.datasourceRef.slice(0, 100)}'` : '';
  return { datasourceId: null, missing: `no datasource: send datasourceId${named}` };
}

/** Every datasource the request names must be the project's (404 ERR_DS_001 naming the field). */
async function resolveDatasources(deps: ImportDeps, projectId: string, input: ImportInput): Promise<{ fallback: string | null; map: Map<string, string> }> {
  const find = async (ref: string, field: string) => {
    try {
      return (await getDatasource(deps, projectId, ref)).id;
    } catch (err) {
      if (err instanceof AppError && err.code === 'ERR_DS_001') throw new AppError('ERR_DS_001', undefined, { field, datasourceId: ref });
      throw err;
    }
  };
  const fallback = input.datasourceId ? await find(input.datasourceId, 'datasourceId') : null;
  const map = new Map<string, string>();
  for (const [source, ref] of Object.entries(input.datasourceMap)) map.set(source, await find(ref, `datasourceMap.${source}`));
  return { fallback, map };
}

async function importItem(deps: ImportDeps, actor: Actor, input: ImportInput, item: ParsedItem, ds: Resolved, taken: Set<string>): Promise<ImportItem> {
  const out: ImportItem = { source: item.source, action: item.outcome === 'unsupported' ? 'unsupported' : 'needs_attention', warnings: [...item.warnings] };
  if (item.suggestedSchedule) out.suggestedSchedule = item.suggestedSchedule;
  if (item.outcome !== 'ok' || !item.query) return out;
  if (!ds.datasourceId) {
    out.warnings.push({ code: 'NO_DATASOURCE', message: ds.missing ?? 'no datasource', path: '$' });
    return out;
  }
  const q: ImportedQuery = item.query;
  const attention = (message: string) => {
    out.action = 'needs_attention';
    out.warnings.push({ code: 'QUERY_REFUSED', message, path: '$' });
    return out;
  };
  const fields = { datasourceId: ds.datasourceId, language: 'sql' as const, text: q.text, parameters: q.parameters, expectedColumns: q.expectedColumns, description: q.description };
  // The same name twice in one file counts as a duplicate too.
  const existing = taken.has(q.name.toLowerCase()) ? null : await queryNamed(deps.db, actor.projectId, q.name);
  let name = q.name;
  if (existing || taken.has(q.name.toLowerCase())) {
    if (input.duplicateHandling === 'skip') {
      out.action = 'skipped';
      if (existing) out.queryId = existing.id;
      out.warnings.push({ code: 'DUPLICATE', message: `a query named '${q.name}' exists: skipped`, path: '$' });
      return out;
    }
    if (input.duplicateHandling === 'overwrite' && existing) {
      if (input.dryRun) {
        const check = await validateQuery(deps, actor.projectId, fields);
        if (!check.valid) return attention(check.errors.map((e) => `${e.path}: ${e.message}`).join('; ').slice(0, 2000));
      } else {
        try {
          await updateQuery(deps, actor, existing.id, fields);
        } catch (err) {
          return attention(problemMessage(err));
        }
      }
      taken.add(q.name.toLowerCase());
      return { ...out, action: 'overwritten', queryId: existing.id };
    }
    const renamed = await freeName(deps.db, actor.projectId, q.name, taken);
    if (!renamed) return attention(`a query named '${q.name}' exists and no free name was found`);
    out.warnings.push({ code: 'RENAMED', message: `a query named '${q.name}' exists: imported as '${renamed}'`, path: '$' });
    name = renamed;
  }
  taken.add(name.toLowerCase());
  if (input.dryRun) {
    const check = await validateQuery(deps, actor.projectId, fields);
    if (!check.valid) return attention(check.errors.map((e) => `${e.path}: ${e.message}`).join('; ').slice(0, 2000));
    return { ...out, action: 'created' };
  }
  try {
    const created = await createQuery(deps, actor, { ...fields, name });
    return { ...out, action: 'created', queryId: created.id };
  } catch (err) {
    return attention(problemMessage(err));
  }
}

/**
 * A JRXML item's draft template (a heading and a table of the fields) and a draft report binding the
 * imported query to it (dataset `rows`, the query's parameters as the report's, a PDF output). Both are
 * drafts: the report publishes once its query and template are published (publish checks them). A
 * template or report the checks refuse leaves the query as it is, with a warning.
 */
async function addDraftTemplate(deps: ImportDeps, actor: Actor, input: ImportInput, q: ImportedQuery, out: ImportItem): Promise<void> {
  const layout = 'the band layout is not converted; publish the query and the template, then the report';
  if (input.dryRun) {
    out.warnings.push({ code: 'LAYOUT_NOT_CONVERTED', message: `a draft template (heading and a table of the fields) and a draft report would be made; ${layout}`, path: '$' });
    return;
  }
  let name = q.name;
  try {
    name = (await templateNameExists(deps.db, actor.projectId, q.name)) ? await freeTemplateName(deps.db, actor.projectId, q.name, 'imported') : q.name;
    const template = await createTemplate(deps, actor, { name, description: q.description, outputFormats: ['pdf', 'excel'], ...draftTemplateFor(q.name, q.expectedColumns ?? []) });
    out.templateId = template.id;
    out.warnings.push({ code: 'LAYOUT_NOT_CONVERTED', message: `a draft template '${name}' has a heading and a table of the fields (variable 'rows'); ${layout}`, path: '$' });
  } catch (err) {
    out.warnings.push({ code: 'TEMPLATE_NOT_CREATED', message: `no draft template: ${problemMessage(err)}; ${layout}`, path: '$' });
    return;
  }
  try {
    const report = await createReport(deps, actor, {
      name,
      description: q.description,
      templateId: out.templateId,
      templateVersion: 'latest',
      datasets: [{ name: 'rows', queryId: out.queryId as string, queryVersion: 'latest', parameters: Object.fromEntries(q.parameters.map((p) => [p.name, `{{${p.name}}}`])), shape: 'rows', bindTo: 'rows' }],
      parameters: q.parameters,
      outputs: [{ format: 'pdf' }],
    });
    out.reportId = report.id;
  } catch (err) {
    out.warnings.push({ code: 'REPORT_NOT_CREATED', message: `no draft report: ${problemMessage(err)}`, path: '$' });
  }
}

/**
 * `failed` only when the file gave nothing to act on (no item, or every item `unsupported`); an item
 * that needs attention (a `$P!{}` splice, a query the checks refuse) is the import's answer, with the
 * items made beside it: `completed_with_warnings` (docs/reporting.md "Imports").
 */
function statusOf(items: ImportItem[]): ImportStatus {
  const done: ImportAction[] = ['created', 'overwritten', 'skipped'];
  if (!items.some((i) => done.includes(i.action) || i.action === 'needs_attention')) return 'failed';
  return items.every((i) => done.includes(i.action) && i.warnings.length === 0) ? 'completed' : 'completed_with_warnings';
}

export async function runImport(deps: ImportDeps, actor: Actor, file: UploadedFile | undefined, input: ImportInput): Promise<ImportEntity> {
  if (!file || !file.filepath) throw new AppError('ERR_IMP_001', 'No file uploaded: send the model as the multipart field `file`', { field: 'file' });
  if (file.size > IMPORT_MAX_BYTES) throw new AppError('ERR_IMP_004', undefined, { maxBytes: IMPORT_MAX_BYTES });
  const { fallback, map } = await resolveDatasources(deps, actor.projectId, input);
  if ((await stat(file.filepath)).size > IMPORT_MAX_BYTES) throw new AppError('ERR_IMP_004', undefined, { maxBytes: IMPORT_MAX_BYTES });
  // Read, unzipped and parsed in a worker process of its own, never on this one (adapters/evaluation/import-pool.ts).
  const parsed = await deps.importPool.parse(actor.projectId, file.filepath, ZIP_CAPS, input.format);
  const taken = new Set<string>();
  const items: ImportItem[] = [];
  // One after the other: later items see the names earlier ones took.
  for (const item of parsed.items) {
    const done = await importItem(deps, actor, input, item, datasourceOf(item, map, fallback), taken);
    if (item.source.type === 'jrxml' && item.query && done.action === 'created') await addDraftTemplate(deps, actor, input, item.query, done);
    items.push(done);
  }
  const record = Object.assign(new ImportEntity(), {
    id: randomUUID(),
    projectId: actor.projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    format: parsed.format,
    filename: (file.originalFilename || 'upload').slice(0, 255),
    status: statusOf(items),
    dryRun: input.dryRun,
    items,
    createdBy: actor.userId ?? null,
    createdAt: new Date(),
  } satisfies ImportEntity);
  await deps.db.getRepository(ImportEntity).save(record);
  return record;
}

export async function listImports(deps: Pick<ImportDeps, 'db'>, projectId: string, query: ListImportsQuery): Promise<{ imports: ImportEntity[]; total: number }> {
  const [imports, total] = await deps.db
    .getRepository(ImportEntity)
    .createQueryBuilder('i')
    .where('i.projectId = :projectId', { projectId })
    .orderBy('i.createdAt', 'DESC')
    .addOrderBy('i.id', 'DESC')
    .skip((query.page - 1) * query.limit)
    .take(query.limit)
    .getManyAndCount();
  return { imports, total };
}

/** By UUID or `rimp_` short id; another project's import answers 404 ERR_IMP_005 like a missing one. */
export async function getImport(deps: Pick<ImportDeps, 'db'>, projectId: string, ref: string): Promise<ImportEntity> {
  const found = await findByIdOrShortId(deps.db, ImportEntity, projectId, ref, SHORT_ID_PREFIX, 40);
  if (!found) throw new AppError('ERR_IMP_005');
  return found;
}
