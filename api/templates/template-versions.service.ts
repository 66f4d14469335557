import { recordActivity } from '../../db/identity/activity';
import type { TemplateEntity } from '../../db/templates/template.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import { updateTemplateRow } from '../../db/templates/template-rows';
import { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { type RestoreResult, versionedResource, type VersionRecord as VersionRecordOf } from '../../db/versioned-resource';
import { AppError } from '../../domain/errors';
import { parseVersionKey } from '../../domain/versions';
import { type Actor, assertValidDefinition, type TemplateDeps } from './template-store.service';

/**
 * Publishing and versions (spec, "Versioning" §2): each publish and each restore takes the next
 * integer. Versions never change once written; generation renders the newest one. The shared
 * mechanics are db/versioned-resource.ts; what is the templates' own is below.
 */

export type VersionRecord = VersionRecordOf<TemplateVersionEntity>;

const versions = versionedResource({
  entity: TemplateVersionEntity,
  parentKey: 'templateId',
  parentTable: 'templates',
  find: (db, projectId, ref, lock) => findTemplate(db, projectId, ref, { lock }),
  // A draft identical to the newest version (definition and formats, as JSON values) has nothing to publish.
  compared: ['definition', 'outputFormats'],
  unchanged: (latestVersion) => new AppError('ERR_TMPL_020', `The draft has no changes since version ${latestVersion}`, { latestVersion }),
  /** `:versionId` is a version's id (UUID) or its number (1, 2, …); anything else is 400 ERR_TMPL_023. */
  versionKey: (param) => {
    const key = parseVersionKey(param, { ids: true });
    if (key) return key;
    throw new AppError('ERR_TMPL_023', `Invalid version parameter '${param.slice(0, 50)}': give a version id or a version number`, { field: 'versionId' });
  },
  // Another project's version id is unknown here, so ids reveal nothing across projects.
  versionNotFound: (param) => new AppError('ERR_TMPL_013', `Version ${param} not found`, { versionId: param }),
  otherParent: (param, template) => new AppError('ERR_TMPL_014', `Version ${param} belongs to another template`, { versionId: param, templateId: template.id }),
});

/** The version's name and description are the template's as they are at publication. */
const stateOf = (t: TemplateEntity) => ({ name: t.name, description: t.description });

/** Publishes the draft as the next version; an unchanged draft is 409 ERR_TMPL_020. */
export function publishTemplate(deps: TemplateDeps, actor: Actor, ref: string, releaseNotes?: string | null): Promise<TemplateVersionEntity> {
  return versions.publish(deps.db, actor, ref, releaseNotes, {
    snapshot: (_m, t) => ({ ...stateOf(t), definition: t.draft, outputFormats: t.outputFormats }),
    // Saved drafts were valid when saved; checking again keeps a version from outliving a validator fix.
    check: (_m, _t, v) => assertValidDefinition(deps, actor.projectId, v.definition, v.outputFormats),
    after: (m, t, v) =>
      recordActivity(m, {
        projectId: actor.projectId,
        userId: actor.userId ?? null,
        type: 'template_published',
        data: { template: { id: t.id, name: t.name }, version: v.version },
      }),
  });
}

/** Newest first. */
export function listVersions(deps: TemplateDeps, projectId: string, ref: string): Promise<VersionRecord[]> {
  return versions.list(deps.db, projectId, ref);
}

/** One version: unknown is 404 ERR_TMPL_013, a version id of another template of the project 400 ERR_TMPL_014. */
export async function getVersion(deps: TemplateDeps, projectId: string, ref: string, param: string): Promise<{ template: TemplateEntity } & VersionRecord> {
  const { parent, ...record } = await versions.get(deps.db, projectId, ref, param);
  return { template: parent, ...record };
}

/**
 * Restore = the old version's definition (and formats) become the draft and are published at
 * once as the next version (spec: "each restore creates a new version number"), so generation
 * uses it immediately. Name and description stay as they are now.
 */
export function restoreVersion(deps: TemplateDeps, actor: Actor, ref: string, param: string, releaseNotes?: string | null): Promise<RestoreResult> {
  return versions.restore(deps.db, actor, ref, param, releaseNotes, {
    restore: async (m, t, old) => {
      await assertValidDefinition(deps, actor.projectId, old.definition, old.outputFormats);
      await updateTemplateRow(m, t.id, { draft: old.definition, outputFormats: old.outputFormats, updatedAt: new Date() });
      return { ...stateOf(t), definition: old.definition, outputFormats: old.outputFormats };
    },
    after: (m, t, v, old) =>
      recordActivity(m, {
        projectId: actor.projectId,
        userId: actor.userId ?? null,
        type: 'template_published',
        data: { template: { id: t.id, name: t.name }, version: v.version, restoredFrom: old.version },
      }),
  });
}
