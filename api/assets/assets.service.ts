import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { DataSource, EntityManager } from 'typeorm';
import { modifyReturning } from '../../db/sql';
import { TemplateAssetEntity } from '../../db/templates/asset.entity';
import { AppError } from '../../domain/errors';
import type { Evaluator } from '../../domain/evaluation';
import type { CheckedAsset } from '../../domain/templates/asset-content';
import type { ListAssetsQuery, UploadAssetInput } from './assets.schema';
import { isUuid } from '../../domain/ids';

/**
 * Assets: the images and fonts a project's templates use (docs/templates.md "Assets and fonts").
 * An upload is judged by its own bytes in the evaluation workers (asset-content.ts: the format, the
 * size of a picture, an SVG cleaned, a font read), never on the loop that serves HTTP; what is
 * stored is what the check answered. A project holds a bounded number and total size of them.
 */

export interface AssetDeps {
  db: DataSource;
  evaluator: Evaluator;
  limits: { projectMaxBytes: number; projectMaxCount: number };
}

export interface Actor {
  projectId: string;
  userId?: string | null;
}

export interface UploadedFile {
  filepath: string;
  size: number;
  originalFilename?: string | null;
}

/** The file name without directories or control characters, for a default display name. */
function displayName(file: UploadedFile, checked: CheckedAsset): string {
  const base = (file.originalFilename ?? '').split(/[\\/]/).pop()?.replace(/[\u0000-\u001f\u007f]/g, '').trim() ?? '';
  return (base || `${checked.kind}.${checked.extension}`).slice(0, 200);
}

/** Inserts an asset within the project's quota: the project row is locked so two uploads cannot both take the last room. */
export async function insertAsset(manager: EntityManager, limits: AssetDeps['limits'], actor: Actor, checked: CheckedAsset, name: string): Promise<TemplateAssetEntity> {
  await manager.query(`SELECT 1 FROM projects WHERE id = $1 FOR UPDATE`, [actor.projectId]);
  const [usage] = await manager.query(`SELECT count(*)::int AS count, coalesce(sum(size_bytes), 0)::bigint AS bytes FROM template_assets WHERE project_id = $1`, [actor.projectId]);
  const bytes = Buffer.from(checked.bytes);
  if (usage.count + 1 > limits.projectMaxCount) {
    throw new AppError('ERR_ASSET_004', `The project holds ${usage.count} assets, the most it may`, { limit: limits.projectMaxCount, count: usage.count });
  }
  if (Number(usage.bytes) + bytes.length > limits.projectMaxBytes) {
    throw new AppError('ERR_ASSET_004', `The project's assets would exceed ${limits.projectMaxBytes} bytes`, { limit: limits.projectMaxBytes, used: Number(usage.bytes), size: bytes.length });
  }
  const asset = manager.create(TemplateAssetEntity, {
    id: randomUUID(),
    projectId: actor.projectId,
    kind: checked.kind,
    name,
    mediaType: checked.mediaType,
    sizeBytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    width: checked.width ?? null,
    height: checked.height ?? null,
    fontFamily: checked.fontFamily ?? null,
    fontWeight: checked.fontWeight ?? null,
    fontStyle: checked.fontStyle ?? null,
    content: bytes,
    createdBy: actor.userId ?? null,
    createdAt: new Date(),
  });
  await manager.insert(TemplateAssetEntity, asset);
  return asset;
}

export async function uploadAsset(deps: AssetDeps, actor: Actor, file: UploadedFile | undefined, input: UploadAssetInput): Promise<TemplateAssetEntity> {
  if (!file) throw new AppError('ERR_ASSET_005', 'Send the image or font as the multipart part `file`', { field: 'file' });
  const checked = await deps.evaluator.check(actor.projectId, 'assetContent', new Uint8Array(await readFile(file.filepath)));
  return deps.db.transaction((manager) => insertAsset(manager, deps.limits, actor, checked, input.name ?? displayName(file, checked)));
}

export async function listAssets(deps: AssetDeps, projectId: string, query: ListAssetsQuery): Promise<{ assets: TemplateAssetEntity[]; total: number }> {
  const [assets, total] = await deps.db.getRepository(TemplateAssetEntity).findAndCount({
    where: { projectId, ...(query.kind ? { kind: query.kind } : {}) },
    order: { createdAt: 'DESC', id: 'ASC' },
    skip: (query.page - 1) * query.limit,
    take: query.limit,
  });
  return { assets, total };
}

function notFound(id: string): AppError {
  return new AppError('ERR_ASSET_001', undefined, { assetId: id });
}

export async function getAsset(deps: Pick<AssetDeps, 'db'>, projectId: string, id: string, withContent = false): Promise<TemplateAssetEntity> {
  if (!isUuid(id)) throw notFound(id);
  const query = deps.db.getRepository(TemplateAssetEntity).createQueryBuilder('a').where('a.id = :id AND a.projectId = :projectId', { id, projectId });
  if (withContent) query.addSelect('a.content');
  const asset = await query.getOne();
  if (!asset) throw notFound(id);
  return asset;
}

/**
 * Deletes an asset. Templates that name it keep their reference: an image then shows its alt text,
 * text in its font falls back to the built-in fonts (docs/templates.md "Assets and fonts").
 */
export async function deleteAsset(deps: Pick<AssetDeps, 'db'>, projectId: string, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(id);
  const deleted = await modifyReturning<{ id: string }>(deps.db, `DELETE FROM template_assets WHERE id = $1 AND project_id = $2 RETURNING id`, [id, projectId]);
  if (deleted.length === 0) throw notFound(id);
}
