import { randomUUID } from 'node:crypto';
import { recordActivity } from '../../db/identity/activity';
import type { Queryable } from '../../db/sql';
import { TemplateEntity } from '../../db/templates/template.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import { insertVersionRow, updateTemplateRow } from '../../db/templates/template-rows';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { AppError } from '../../domain/errors';
import { isUuid } from '../../domain/templates/template-ids';
import { type Actor, assertValidDefinition, type TemplateDeps } from './template-store.service';

/**
 * Publishing and versions (spec, "Versioning" §2): each publish and each restore takes the next
 * integer. Versions never change once written; generation renders the newest one.
 */

export interface VersionRecord {
  version: TemplateVersionEntity;
  /** The publisher's display name; null once their account is gone. */
  publishedBy: string | null;
}

async function nextVersion(
  m: Queryable,
  actor: Actor,
  template: TemplateEntity,
  fields: Pick<TemplateVersionEntity, 'definition' | 'outputFormats' | 'releaseNotes'>,
): Promise<TemplateVersionEntity> {
  const now = new Date();
  const version = Object.assign(new TemplateVersionEntity(), {
    id: randomUUID(),
    templateId: template.id,
    version: template.latestVersion + 1,
    name: template.name,
    description: template.description,
    publishedAt: now,
    publishedBy: actor.userId ?? null,
    ...fields,
  } satisfies TemplateVersionEntity);
  await insertVersionRow(m, version);
  await updateTemplateRow(m, template.id, { latestVersion: version.version, isPublished: true, publishedAt: now });
  return version;
}

/**
 * Publishes the draft as the next version. The template row is locked, so two publishes at once
 * get consecutive numbers. A draft identical to the newest version (definition and formats,
 * compared as JSON values) has nothing to publish: 409 ERR_TMPL_020.
 */
export async function publishTemplate(deps: TemplateDeps, actor: Actor, ref: string, releaseNotes?: string | null): Promise<TemplateVersionEntity> {
  return deps.db.transaction(async (m) => {
    const template = await findTemplate(m, actor.projectId, ref, { lock: true });
    if (template.latestVersion > 0) {
      const [row]: Array<{ same: boolean }> = await m.query(
        `SELECT (v.definition = t.draft AND v.output_formats = t.output_formats) AS same
           FROM template_versions v JOIN templates t ON t.id = v.template_id
          WHERE v.template_id = $1 AND v.version = $2`,
        [template.id, template.latestVersion],
      );
      if (row?.same) {
        throw new AppError('ERR_TMPL_020', `The draft has no changes since version ${template.latestVersion}`, {
          latestVersion: template.latestVersion,
        });
      }
    }
    // Saved drafts were valid when saved; checking again keeps a version from outliving a validator fix.
    await assertValidDefinition(deps, actor.projectId, template.draft, template.outputFormats);
    const version = await nextVersion(m, actor, template, {
      definition: template.draft,
      outputFormats: template.outputFormats,
      releaseNotes: releaseNotes || null,
    });
    await recordActivity(m, {
      projectId: actor.projectId,
      userId: actor.userId ?? null,
      type: 'template_published',
      data: { template: { id: template.id, name: template.name }, version: version.version },
    });
    return version;
  });
}

const VERSION_SELECT = `
  SELECT v.id, v.template_id AS "templateId", v.version, v.definition, v.name, v.description,
         v.output_formats AS "outputFormats", v.release_notes AS "releaseNotes", v.published_at AS "publishedAt",
         v.published_by AS "publishedById", u.name AS "publishedBy", t.project_id AS "projectId"
    FROM template_versions v
    JOIN templates t ON t.id = v.template_id AND t.deleted_at IS NULL
    LEFT JOIN users u ON u.id = v.published_by`;

interface VersionRow extends Omit<TemplateVersionEntity, 'publishedBy'> {
  publishedById: string | null;
  publishedBy: string | null;
  projectId: string;
}

function toRecord(row: VersionRow): VersionRecord {
  const { publishedById, publishedBy, projectId: _projectId, ...rest } = row;
  return { version: Object.assign(new TemplateVersionEntity(), { ...rest, publishedBy: publishedById }), publishedBy };
}

/** Newest first. */
export async function listVersions(deps: TemplateDeps, projectId: string, ref: string): Promise<VersionRecord[]> {
  const template = await findTemplate(deps.db, projectId, ref);
  const rows: VersionRow[] = await deps.db.query(`${VERSION_SELECT} WHERE v.template_id = $1 ORDER BY v.version DESC`, [template.id]);
  return rows.map(toRecord);
}

/** `:versionId` is a version's id (UUID) or its number (1, 2, …); anything else is 400 ERR_TMPL_023. */
function parseVersionParam(param: string): { id: string } | { number: number } {
  if (isUuid(param)) return { id: param.toLowerCase() };
  if (/^[1-9][0-9]{0,8}$/.test(param)) return { number: Number(param) };
  throw new AppError('ERR_TMPL_023', `Invalid version parameter '${param.slice(0, 50)}': give a version id or a version number`, {
    field: 'versionId',
  });
}

/**
 * One version of the template. Unknown is 404 ERR_TMPL_013; a version id of another template of
 * the same project is 400 ERR_TMPL_014. Another project's version id is unknown here, so ids
 * reveal nothing across projects.
 */
async function findVersion(m: Queryable, template: TemplateEntity, param: string): Promise<VersionRecord> {
  const which = parseVersionParam(param);
  const rows: VersionRow[] =
    'number' in which
      ? await m.query(`${VERSION_SELECT} WHERE v.template_id = $1 AND v.version = $2`, [template.id, which.number])
      : await m.query(`${VERSION_SELECT} WHERE v.id = $1`, [which.id]);
  const row = rows[0];
  if (!row || row.projectId !== template.projectId) throw new AppError('ERR_TMPL_013', `Version ${param} not found`, { versionId: param });
  if (row.templateId !== template.id) {
    throw new AppError('ERR_TMPL_014', `Version ${param} belongs to another template`, { versionId: param, templateId: template.id });
  }
  return toRecord(row);
}

export async function getVersion(deps: TemplateDeps, projectId: string, ref: string, param: string): Promise<{ template: TemplateEntity } & VersionRecord> {
  parseVersionParam(param);
  const template = await findTemplate(deps.db, projectId, ref);
  return { template, ...(await findVersion(deps.db, template, param)) };
}

export interface RestoreResult {
  newVersion: number;
  restoredVersion: number;
}

/**
 * Restore = the old version's definition (and formats) become the draft and are published at
 * once as the next version (spec: "each restore creates a new version number"), so generation
 * uses it immediately. Name and description stay as they are now.
 */
export async function restoreVersion(
  deps: TemplateDeps,
  actor: Actor,
  ref: string,
  param: string,
  releaseNotes?: string | null,
): Promise<RestoreResult> {
  parseVersionParam(param);
  return deps.db.transaction(async (m) => {
    const template = await findTemplate(m, actor.projectId, ref, { lock: true });
    const { version: old } = await findVersion(m, template, param);
    await assertValidDefinition(deps, actor.projectId, old.definition, old.outputFormats);
    await updateTemplateRow(m, template.id, { draft: old.definition, outputFormats: old.outputFormats, updatedAt: new Date() });
    const version = await nextVersion(m, actor, template, {
      definition: old.definition,
      outputFormats: old.outputFormats,
      releaseNotes: releaseNotes || `Restored from version ${old.version}`,
    });
    await recordActivity(m, {
      projectId: actor.projectId,
      userId: actor.userId ?? null,
      type: 'template_published',
      data: { template: { id: template.id, name: template.name }, version: version.version, restoredFrom: old.version },
    });
    return { newVersion: version.version, restoredVersion: old.version };
  });
}
