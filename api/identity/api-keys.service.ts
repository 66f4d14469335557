import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ApiKeyEntity } from '../../db/identity/api-key.entity';
import { utcDay } from '../../db/identity/api-key-usage';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { generateApiKey, resolvePermissions } from '../../domain/identity/api-keys';
import { sha256Hex } from '../../domain/signing';
import type { CreateApiKeyInput, ListApiKeysQuery, UpdateApiKeyInput } from './api-keys.schema';
import { isUuid } from '../../domain/ids';

/**
 * API key management for the dashboard (spec, "API keys (JWT only)"). Every function acts inside
 * one project: a key of another project is answered exactly like a key that does not exist, so
 * ids reveal nothing across projects.
 */

export interface ApiKeyDeps {
  db: DataSource;
}

export interface ApiKeyCreator {
  id: string;
  emailVerifiedAt: Date | null;
}

/** Contract §2: a verified e-mail is needed to mint a credential. Only the SHA-256 of the key is kept. */
export async function createApiKey(
  deps: ApiKeyDeps,
  projectId: string,
  creator: ApiKeyCreator,
  input: CreateApiKeyInput,
  /** Runs in the transaction that inserts the key (the Idempotency-Key's answer, docs/idempotency.md). */
  inTransaction?: (m: EntityManager, created: { key: ApiKeyEntity; plainKey: string }) => Promise<void>,
): Promise<{ key: ApiKeyEntity; plainKey: string }> {
  if (!creator.emailVerifiedAt) throw new AppError('ERR_AUTH_006', 'Verify your e-mail address before creating API keys');
  const { plainKey, keyPrefix } = generateApiKey();
  const now = new Date();
  const key: ApiKeyEntity = Object.assign(new ApiKeyEntity(), {
    id: randomUUID(),
    projectId,
    createdBy: creator.id,
    name: input.name,
    keyType: 'live',
    keyPrefix,
    keyHash: sha256Hex(plainKey),
    permissions: resolvePermissions(input.permissions),
    isActive: true,
    expiresAt: input.expiresAt ?? null,
    lastUsedAt: null,
    totalRequests: 0,
    requestsToday: 0,
    requestsDay: null,
    documentsGenerated: 0,
    createdAt: now,
    updatedAt: now,
  });
  await deps.db.transaction(async (m) => {
    await m.getRepository(ApiKeyEntity).insert(key);
    await inTransaction?.(m, { key, plainKey });
  });
  return { key, plainKey };
}

/** Entity properties behind the spec's `sortBy` values. */
const SORT_COLUMNS: Record<ListApiKeysQuery['sortBy'], string> = {
  createdAt: 'k.createdAt',
  name: 'LOWER(k.name)',
  lastUsedAt: 'k.lastUsedAt',
  updatedAt: 'k.updatedAt',
};

export async function listApiKeys(deps: ApiKeyDeps, projectId: string, query: ListApiKeysQuery): Promise<{ keys: ApiKeyEntity[]; total: number }> {
  const order = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const qb = deps.db.getRepository(ApiKeyEntity).createQueryBuilder('k').where('k.projectId = :projectId', { projectId });
  if (query.isActive !== undefined) qb.andWhere('k.isActive = :isActive', { isActive: query.isActive });
  // Never-used keys go last either way; the id tie-break keeps pages stable when values repeat.
  qb.orderBy(SORT_COLUMNS[query.sortBy], order, 'NULLS LAST').addOrderBy('k.id', order);
  const [keys, total] = await qb.offset((query.page - 1) * query.limit).limit(query.limit).getManyAndCount();
  return { keys, total };
}

export async function getApiKey(deps: ApiKeyDeps, projectId: string, id: string): Promise<ApiKeyEntity> {
  const key = isUuid(id) ? await deps.db.getRepository(ApiKeyEntity).findOneBy({ id, projectId }) : null;
  if (!key) throw new AppError('ERR_AKEY_001');
  return key;
}

/**
 * PATCH semantics: fields left out keep their value, and so do permission flags left out of
 * `permissions` (merged, unlike create where omitted flags are false: here the caller is editing
 * a key they can see). `isActive: true` reactivates a revoked key (spec, States).
 */
export async function updateApiKey(deps: ApiKeyDeps, projectId: string, id: string, patch: UpdateApiKeyInput): Promise<ApiKeyEntity> {
  const key = await getApiKey(deps, projectId, id);
  if (patch.name === undefined && patch.permissions === undefined && patch.isActive === undefined) return key;
  const rows = await modifyReturning<{ id: string }>(
    deps.db,
    `UPDATE api_keys SET
        name = COALESCE($3, name),
        permissions = permissions || $4::jsonb,
        is_active = COALESCE($5, is_active),
        updated_at = now()
      WHERE id = $1 AND project_id = $2
      RETURNING id`,
    [key.id, projectId, patch.name ?? null, JSON.stringify(patch.permissions ?? {}), patch.isActive ?? null],
  );
  if (rows.length === 0) throw new AppError('ERR_AKEY_001');
  return getApiKey(deps, projectId, id);
}

/** Deactivates the key at once (the next request with it is refused). Revoking twice changes nothing. */
export async function revokeApiKey(deps: ApiKeyDeps, projectId: string, id: string): Promise<ApiKeyEntity> {
  const key = await getApiKey(deps, projectId, id);
  await deps.db.query(
    `UPDATE api_keys SET is_active = false, updated_at = now() WHERE id = $1 AND project_id = $2 AND is_active`,
    [key.id, projectId],
  );
  return getApiKey(deps, projectId, id);
}

export async function deleteApiKey(deps: ApiKeyDeps, projectId: string, id: string): Promise<void> {
  const rows = isUuid(id)
    ? await modifyReturning<{ id: string }>(deps.db, `DELETE FROM api_keys WHERE id = $1 AND project_id = $2 RETURNING id`, [id, projectId])
    : [];
  if (rows.length === 0) throw new AppError('ERR_AKEY_001');
}

export interface ApiKeyStats {
  totalRequests: number;
  requestsToday: number;
  documentsGenerated: number;
  lastUsedAt: Date | null;
}

/**
 * The counters as last flushed (they trail live traffic by at most API_KEY_USAGE_FLUSH_MS).
 * `requests_today` belongs to the day in `requests_day`; a key unused since then made none today.
 */
export async function getApiKeyStats(deps: ApiKeyDeps, projectId: string, id: string, now = new Date()): Promise<ApiKeyStats> {
  const key = await getApiKey(deps, projectId, id);
  return {
    totalRequests: key.totalRequests,
    // TypeORM hands a `date` column back as `YYYY-MM-DD` text, the form utcDay produces.
    requestsToday: key.requestsDay === utcDay(now) ? key.requestsToday : 0,
    documentsGenerated: key.documentsGenerated,
    lastUsedAt: key.lastUsedAt,
  };
}
