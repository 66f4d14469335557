import type { Queryable } from '../sql';
import type { TemplateEntity } from './template.entity';

/**
 * Writes of template rows in plain SQL. TypeORM's insert/update types cannot take a jsonb column
 * holding open records (component props), and the statements are short enough to read here.
 */

const TEMPLATE_COLUMNS = {
  name: 'name',
  description: 'description',
  outputFormats: 'output_formats',
  folderId: 'folder_id',
  draft: 'draft',
  isPublished: 'is_published',
  publishedAt: 'published_at',
  latestVersion: 'latest_version',
  updatedAt: 'updated_at',
} as const;

export type TemplateChanges = Partial<Pick<TemplateEntity, keyof typeof TEMPLATE_COLUMNS>>;

export async function insertTemplateRow(db: Queryable, t: TemplateEntity): Promise<void> {
  await db.query(
    `INSERT INTO templates (id, project_id, short_id, slug, name, description, output_formats, folder_id, draft,
                            is_published, published_at, latest_version, created_by, deleted_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14, $15, $16)`,
    [
      t.id, t.projectId, t.shortId, t.slug, t.name, t.description, t.outputFormats, t.folderId, JSON.stringify(t.draft),
      t.isPublished, t.publishedAt, t.latestVersion, t.createdBy, t.deletedAt, t.createdAt, t.updatedAt,
    ],
  );
}

/** Sets the given fields of one template; fields left out are untouched. */
export async function updateTemplateRow(db: Queryable, id: string, changes: TemplateChanges): Promise<void> {
  const keys = (Object.keys(changes) as Array<keyof TemplateChanges>).filter((k) => changes[k] !== undefined);
  if (keys.length === 0) return;
  const sets = keys.map((k, i) => `${TEMPLATE_COLUMNS[k]} = $${i + 2}${k === 'draft' ? '::jsonb' : ''}`);
  const values = keys.map((k) => (k === 'draft' ? JSON.stringify(changes.draft) : changes[k]));
  await db.query(`UPDATE templates SET ${sets.join(', ')} WHERE id = $1`, [id, ...values]);
}
