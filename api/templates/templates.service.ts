import { recordActivity } from '../../db/identity/activity';
import { modifyReturning, violatedIndex, type Queryable } from '../../db/sql';
import { TemplateEntity } from '../../db/templates/template.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import { updateTemplateRow } from '../../db/templates/template-rows';
import { AppError } from '../../domain/errors';
import { SHORT_ID_PREFIX } from '../../domain/templates/template-ids';
import { pickDefinition } from '../../domain/templates/template-definition';
import type { TemplateDefinition } from '../../domain/templates/template.types';
import type { CreateTemplateInput, ListTemplatesQuery, TemplateFieldsInput } from './templates.schema';
import {
  type Actor,
  assertValidDefinition,
  checkOutputFormats,
  freeName,
  insertTemplate,
  type InsertOptions,
  nameExists,
  nameTaken,
  type TemplateDeps,
} from './template-store.service';
import { isUuid } from '../../domain/ids';

/**
 * Templates of a project (spec, "Templates"): create, list, read, edit the draft, delete, copy.
 * Every function acts inside `actor.projectId`; another project's template is ERR_TMPL_001.
 */

export type { Actor, TemplateDeps } from './template-store.service';

export async function createTemplate(deps: TemplateDeps, actor: Actor, input: CreateTemplateInput, inTransaction?: InsertOptions['inTransaction']): Promise<TemplateEntity> {
  const outputFormats = checkOutputFormats(input.outputFormats);
  const draft = pickDefinition(input as TemplateDefinition);
  await assertValidDefinition(deps, actor.projectId, draft, outputFormats);
  return insertTemplate(deps, actor, {
    name: input.name,
    description: input.description || null,
    outputFormats,
    folderId: input.folderId ?? null,
    draft,
  }, { inTransaction });
}

const SORT_COLUMNS: Record<ListTemplatesQuery['sortBy'], string> = {
  name: 'LOWER(t.name)',
  createdAt: 't.createdAt',
  updatedAt: 't.updatedAt',
};

/** `%`, `_` and `\` in a search are literal characters, not patterns. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A list shows summaries: the drafts (the large part of a row) are not read at all. */
const SUMMARY_COLUMNS = [
  'id', 'projectId', 'shortId', 'slug', 'name', 'description', 'outputFormats', 'folderId',
  'isPublished', 'publishedAt', 'latestVersion', 'createdBy', 'createdAt', 'updatedAt',
] as const;

/** Summaries (their `draft` is not loaded), one page of them, and how many match in all. */
export async function listTemplates(deps: TemplateDeps, projectId: string, query: ListTemplatesQuery): Promise<{ templates: TemplateEntity[]; total: number }> {
  const order = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const qb = deps.db
    .getRepository(TemplateEntity)
    .createQueryBuilder('t')
    .select(SUMMARY_COLUMNS.map((c) => `t.${c}`))
    .where('t.projectId = :projectId AND t.deletedAt IS NULL', { projectId });
  if (query.search) qb.andWhere(`t.name ILIKE :search ESCAPE '\\'`, { search: `%${likeEscape(query.search)}%` });
  if (query.folderId !== undefined) qb.andWhere('t.folderId = :folderId', { folderId: query.folderId });
  if (query.isPublished !== undefined) qb.andWhere('t.isPublished = :isPublished', { isPublished: query.isPublished });
  // The id tie-break keeps pages stable when sort values repeat.
  qb.orderBy(SORT_COLUMNS[query.sortBy], order).addOrderBy('t.id', order);
  const [templates, total] = await qb.offset((query.page - 1) * query.limit).limit(query.limit).getManyAndCount();
  return { templates, total };
}

/**
 * The project's folders (docs/templates.md "Folders"): a folder is a label on its templates, so the
 * folders are the labels in use, each with its number of templates, by name. At most 1,000.
 */
export async function templateFolders(deps: TemplateDeps, projectId: string): Promise<Array<{ name: string; templates: number }>> {
  return deps.db.query(
    `SELECT folder_id AS name, count(*)::int AS templates FROM templates
      WHERE project_id = $1 AND deleted_at IS NULL AND folder_id IS NOT NULL
      GROUP BY folder_id ORDER BY folder_id LIMIT 1000`,
    [projectId],
  );
}

export function getTemplate(deps: TemplateDeps, projectId: string, ref: string): Promise<TemplateEntity> {
  return findTemplate(deps.db, projectId, ref);
}

const DEFINITION_FIELDS = ['schema', 'variables', 'constants', 'calculatedVariables'] as const;

/**
 * PUT edits the draft: fields left out keep their value; the merged definition is validated as
 * a whole (a new variable list must still fit the schema's placeholders). Published versions
 * never change. The slug stays as it was, so links built on it survive a rename.
 */
export async function updateTemplate(deps: TemplateDeps, actor: Actor, ref: string, patch: TemplateFieldsInput): Promise<TemplateEntity> {
  const changed = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
  if (changed.length === 0) return findTemplate(deps.db, actor.projectId, ref);
  try {
    return await deps.db.transaction(async (m) => {
      const current = await findTemplate(m, actor.projectId, ref, { lock: true });
      const outputFormats = patch.outputFormats ? checkOutputFormats(patch.outputFormats) : current.outputFormats;
      const given = Object.fromEntries(DEFINITION_FIELDS.filter((f) => patch[f] !== undefined).map((f) => [f, patch[f]]));
      const draft = pickDefinition({ ...current.draft, ...given } as TemplateDefinition);
      if (Object.keys(given).length > 0 || patch.outputFormats) await assertValidDefinition(deps, actor.projectId, draft, outputFormats);
      if (patch.name !== undefined && (await nameExists(m, actor.projectId, patch.name, current.id))) throw nameTaken(patch.name);
      await updateTemplateRow(m, current.id, {
        name: patch.name ?? current.name,
        description: patch.description === undefined ? current.description : patch.description || null,
        folderId: patch.folderId === undefined ? current.folderId : patch.folderId,
        outputFormats,
        draft,
        updatedAt: new Date(),
      });
      await recordActivity(m, {
        projectId: actor.projectId,
        userId: actor.userId ?? null,
        type: 'template_updated',
        data: { template: { id: current.id, name: patch.name ?? current.name }, changes: changed },
      });
      return findTemplate(m, actor.projectId, current.id);
    });
  } catch (err) {
    // Two renames to the same name at once: the index refuses the second.
    if (violatedIndex(err) === 'templates_project_name_key') throw nameTaken(patch.name ?? '');
    throw err;
  }
}

/**
 * Soft delete: the template stops resolving at once (reads, generation), while its versions stay
 * for the documents already generated from them. Its name and slug become free again.
 */
export async function deleteTemplate(deps: TemplateDeps, actor: Actor, ref: string): Promise<void> {
  await deps.db.transaction(async (m) => {
    const template = await findTemplate(m, actor.projectId, ref, { lock: true });
    await softDelete(m, actor, template);
  });
}

async function softDelete(m: Queryable, actor: Actor, template: TemplateEntity): Promise<boolean> {
  const rows = await modifyReturning<{ id: string }>(
    m,
    `UPDATE templates SET deleted_at = now() WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL RETURNING id`,
    [template.id, actor.projectId],
  );
  if (rows.length === 0) return false;
  await recordActivity(m, {
    projectId: actor.projectId,
    userId: actor.userId ?? null,
    type: 'template_deleted',
    data: { template: { id: template.id, name: template.name } },
  });
  return true;
}

export interface BulkDeleteResult {
  deleted: number;
  /** Ids with nothing left to do: repeated in the request, or naming a template already deleted. */
  skipped: number;
  /** Ids naming no template of the project. */
  errors: Array<{ id: string; reason: string }>;
}

/** Each id (id, shortId or slug) on its own: one unknown id does not stop the others. */
export async function bulkDeleteTemplates(deps: TemplateDeps, actor: Actor, ids: string[]): Promise<BulkDeleteResult> {
  const result: BulkDeleteResult = { deleted: 0, skipped: 0, errors: [] };
  // Every reference to a template this request already handled (its id, shortId and slug), so a
  // second mention of it, in whatever form, is a skip and not a "not found".
  const handled = new Set<string>();
  for (const id of ids) {
    const outcome = handled.has(id) || handled.has(id.toLowerCase())
      ? 'skipped'
      : await deps.db.transaction(async (m) => {
          const template = await findTemplate(m, actor.projectId, id, { lock: true }).catch((err: unknown) => {
            if (err instanceof AppError && err.code === 'ERR_TMPL_001') return null;
            throw err;
          });
          if (!template) return (await wasDeleted(m, actor.projectId, id)) ? 'skipped' : 'missing';
          [template.id, template.shortId, template.slug].forEach((ref) => handled.add(ref));
          return (await softDelete(m, actor, template)) ? 'deleted' : 'skipped';
        });
    if (outcome === 'deleted') result.deleted += 1;
    else if (outcome === 'skipped') result.skipped += 1;
    else result.errors.push({ id, reason: 'Template not found' });
  }
  return result;
}

/** A deleted template is found by id or shortId only: deleted templates may share a slug. */
async function wasDeleted(m: Queryable, projectId: string, ref: string): Promise<boolean> {
  const column = isUuid(ref) ? 'id' : ref.startsWith(SHORT_ID_PREFIX) ? 'short_id' : undefined;
  if (!column) return false;
  const rows: unknown[] = await m.query(`SELECT 1 FROM templates WHERE project_id = $1 AND ${column}::text = $2 AND deleted_at IS NOT NULL`, [projectId, ref]);
  return rows.length > 0;
}

/** A new, unpublished template from the source's draft, named `<name> (copy)` (then `(copy 2)`, …). */
export async function duplicateTemplate(deps: TemplateDeps, actor: Actor, ref: string, inTransaction?: InsertOptions['inTransaction']): Promise<TemplateEntity> {
  const source = await findTemplate(deps.db, actor.projectId, ref);
  const rename = () => freeName(deps.db, actor.projectId, source.name, 'copy');
  return insertTemplate(
    deps,
    actor,
    {
      name: await rename(),
      description: source.description,
      outputFormats: source.outputFormats,
      folderId: source.folderId,
      draft: source.draft,
    },
    { rename, activity: { duplicatedFrom: { id: source.id, name: source.name } }, inTransaction },
  );
}
