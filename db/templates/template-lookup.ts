import { AppError } from '../../domain/errors';
import type { TemplateDefinition, TemplateType } from '../../domain/templates/template.types';
import { SHORT_ID_PREFIX } from '../../domain/templates/template-ids';
import type { Queryable } from '../sql';
import { TemplateEntity } from './template.entity';
import { TemplateVersionEntity } from './template-version.entity';
import { isUuid } from '../../domain/ids';

/**
 * Finding templates the way every caller needs to (spec: "addressed by id, shortId or slug"),
 * shared by the template API and the document generation activities. TypeORM only: no Koa, so
 * activities import it directly.
 */

export interface FindTemplateOptions {
  /** Lock the row (`FOR UPDATE`) inside the caller's transaction, to serialise publishes. */
  lock?: boolean;
}

/**
 * A live template of the project, addressed by id (UUID), shortId (`etpl_…`) or slug. Deleted
 * templates and other projects' templates are answered alike, 404 ERR_TMPL_001, so ids cannot
 * be probed across projects.
 */
export async function findTemplate(db: Queryable, projectId: string, ref: string, options: FindTemplateOptions = {}): Promise<TemplateEntity> {
  const template = await queryTemplate(db, projectId, ref, options);
  if (!template) throw new AppError('ERR_TMPL_001', undefined, { templateId: ref });
  return template;
}

async function queryTemplate(db: Queryable, projectId: string, ref: string, options: FindTemplateOptions): Promise<TemplateEntity | null> {
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 200) return null;
  const qb = db
    .getRepository(TemplateEntity)
    .createQueryBuilder('t')
    .where('t.projectId = :projectId AND t.deletedAt IS NULL', { projectId });
  // Generated slugs never look like a UUID or start with `etpl_` (template-ids.ts), so the form
  // of the reference says which column to read.
  if (isUuid(ref)) qb.andWhere('t.id = :ref', { ref });
  else if (ref.startsWith(SHORT_ID_PREFIX)) qb.andWhere('t.shortId = :ref', { ref });
  else qb.andWhere('t.slug = :ref', { ref: ref.toLowerCase() });
  if (options.lock) qb.setLock('pessimistic_write');
  return qb.getOne();
}

export interface PublishedTemplate {
  template: TemplateEntity;
  /** The version number a document job records as `templateVersion`. */
  version: number;
  versionId: string;
  definition: TemplateDefinition;
  /** Formats the version may be rendered to; a request for another is ERR_TMPL_009. */
  outputFormats: TemplateType[];
}

/**
 * What generation renders: the latest published version, never the draft (contract §3).
 * A template never published is 422 ERR_TMPL_021.
 */
export async function loadPublishedVersion(db: Queryable, projectId: string, ref: string): Promise<PublishedTemplate> {
  const template = await findTemplate(db, projectId, ref);
  if (template.latestVersion < 1) throw new AppError('ERR_TMPL_021', undefined, { templateId: template.id });
  const row = await db.getRepository(TemplateVersionEntity).findOneBy({ templateId: template.id, version: template.latestVersion });
  if (!row) throw new AppError('ERR_TMPL_021', undefined, { templateId: template.id });
  return { template, version: row.version, versionId: row.id, definition: row.definition, outputFormats: row.outputFormats };
}
