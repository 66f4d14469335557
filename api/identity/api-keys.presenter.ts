import type { CreatorState } from '../../db/identity/api-key-creators';
import type { ApiKeyEntity } from '../../db/identity/api-key.entity';
import { apiKeyInactiveReason } from '../../domain/identity/api-key-state';
import type { ApiKeyStats } from './api-keys.service';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The spec's API key object. `keyPrefix` is the only key text ever shown after creation.
 * `isActive` is the key's own switch (revoke / PATCH); `inactiveReason` says why the key does not
 * work right now (null when it does), including the creator conditions `isActive` cannot show.
 */
export function presentApiKey(key: ApiKeyEntity, creator: CreatorState) {
  return {
    id: key.id,
    teamId: key.projectId,
    name: key.name,
    keyType: key.keyType,
    keyPrefix: key.keyPrefix,
    permissions: key.permissions,
    isActive: key.isActive,
    inactiveReason: apiKeyInactiveReason({ isActive: key.isActive, expiresAt: key.expiresAt, ...creator }),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    createdAt: key.createdAt.toISOString(),
    updatedAt: key.updatedAt.toISOString(),
  };
}

/** The create response: the key object plus the full key, which is never retrievable again. */
export function presentCreatedApiKey(key: ApiKeyEntity, plainKey: string) {
  // The creator is the caller, a member of the project with a live account.
  return { ...presentApiKey(key, { creatorIsMember: true, creatorPendingDeletion: false }), plainKey };
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
