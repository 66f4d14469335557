import type { ApiKeyEntity } from '../../db/identity/api-key.entity';
import type { ApiKeyStats } from './api-keys.service';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The spec's API key object. `keyPrefix` is the only key text ever shown after creation. */
export function presentApiKey(key: ApiKeyEntity) {
  return {
    id: key.id,
    teamId: key.projectId,
    name: key.name,
    keyType: key.keyType,
    keyPrefix: key.keyPrefix,
    permissions: key.permissions,
    isActive: key.isActive,
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    createdAt: key.createdAt.toISOString(),
    updatedAt: key.updatedAt.toISOString(),
  };
}

/** The create response: the key object plus the full key, which is never retrievable again. */
export function presentCreatedApiKey(key: ApiKeyEntity, plainKey: string) {
  return { ...presentApiKey(key), plainKey };
}

/** The revoke response of the spec: `id`, `name`, `isActive`, `updatedAt`. */
export function presentRevokedApiKey(key: ApiKeyEntity) {
  return { id: key.id, name: key.name, isActive: key.isActive, updatedAt: key.updatedAt.toISOString() };
}

/** The spec's usage statistics object. */
export function presentApiKeyStats(stats: ApiKeyStats) {
  return {
    totalRequests: stats.totalRequests,
    requestsToday: stats.requestsToday,
    documentsGenerated: stats.documentsGenerated,
    lastUsedAt: iso(stats.lastUsedAt),
  };
}
