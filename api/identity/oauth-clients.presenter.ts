import { apiKeyInactiveReason } from '../../domain/identity/api-key-state';
import type { OAuthClient } from './oauth-clients.service';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The OAuth client object (docs/oauth.md). `secretPrefix` is the only secret text shown after
 * creation or rotation; `inactiveReason` says why the client cannot get or use tokens now (the
 * API key reasons: `revoked` when switched off, or its creator's place in the project).
 */
export function presentOAuthClient(c: OAuthClient) {
  return {
    id: c.id,
    teamId: c.projectId,
    clientId: c.clientId,
    name: c.name,
    secretPrefix: c.secretPrefix,
    permissions: c.permissions,
    isActive: c.isActive,
    inactiveReason: apiKeyInactiveReason({ isActive: c.isActive, expiresAt: null, creatorIsMember: c.creatorIsMember, creatorPendingDeletion: c.creatorPendingDeletion }),
    secretRotatedAt: iso(c.secretRotatedAt),
    lastUsedAt: iso(c.lastUsedAt),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** Create and rotate answers: the client plus its secret, which is never retrievable again. */
export function presentClientWithSecret(c: OAuthClient, clientSecret: string) {
  return { ...presentOAuthClient(c), clientSecret };
}
