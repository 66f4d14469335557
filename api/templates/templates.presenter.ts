import type { TemplateEntity } from '../../db/templates/template.entity';
import type { TemplateVersionEntity } from '../../db/templates/template-version.entity';
import { pickDefinition } from '../../domain/templates/template-definition';
import type { TemplateAnalytics } from './template-analytics.service';
import type { VersionRecord } from './template-versions.service';
import { pageMeta } from '../page-meta';

/** Records → the spec's field names (spec, Resources: Template, Template version). */

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Create response: `id`, `shortId`, `slug`, `name`, `outputFormats`, `createdAt`. */
export function presentCreatedTemplate(t: TemplateEntity) {
  return { id: t.id, shortId: t.shortId, slug: t.slug, name: t.name, outputFormats: t.outputFormats, createdAt: t.createdAt.toISOString() };
}

/** A list entry: everything but the definition, which can be large. */
function presentTemplateSummary(t: TemplateEntity) {
  return {
    id: t.id,
    shortId: t.shortId,
    slug: t.slug,
    name: t.name,
    description: t.description,
    outputFormats: t.outputFormats,
    folderId: t.folderId,
    isPublished: t.isPublished,
    /** Newest version number; null until the first publish. */
    latestVersion: t.latestVersion > 0 ? t.latestVersion : null,
    publishedAt: iso(t.publishedAt),
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

/** The full template object: the summary plus the draft's definition. */
export function presentTemplate(t: TemplateEntity) {
  return { ...presentTemplateSummary(t), ...pickDefinition(t.draft) };
}

export function presentTemplateList(templates: TemplateEntity[], total: number, page: number, limit: number) {
  return { data: templates.map(presentTemplateSummary), meta: pageMeta(total, page, limit) };
}

/** Publish response: the new version's `id`, its number and `publishedAt`. */
export function presentPublished(v: TemplateVersionEntity) {
  return { id: v.id, templateId: v.templateId, version: v.version, publishedAt: v.publishedAt.toISOString() };
}

export function presentVersion({ version: v, publishedBy }: VersionRecord) {
  return { id: v.id, version: v.version, releaseNotes: v.releaseNotes, publishedAt: v.publishedAt.toISOString(), publishedBy };
}

/** "Template state at that version": the version's fields plus the template as it was then. */
export function presentVersionState(template: TemplateEntity, record: VersionRecord) {
  const v = record.version;
  return {
    ...presentVersion(record),
    templateId: template.id,
    shortId: template.shortId,
    slug: template.slug,
    name: v.name,
    description: v.description,
    outputFormats: v.outputFormats,
    ...pickDefinition(v.definition),
  };
}

export function presentAnalytics(a: TemplateAnalytics) {
  return { templateId: a.template.id, templateName: a.template.name, usage: a.usage, performance: a.performance, trend: a.trend };
}
