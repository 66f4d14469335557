import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import { apiKeyInactiveReason } from '../../domain/identity/api-key-state';
import type { ApiKeyPermissions } from '../../domain/identity/api-keys';
import { intersectPermissions } from '../../domain/identity/oauth';
import type { Principal } from '../../domain/identity/principal';
import { sha256Hex } from '../../domain/signing';
import { creatorTags, type CredentialCache } from './credential-cache';

interface TokenRow {
  client_id: string;
  project_id: string;
  created_by: string;
  scope: ApiKeyPermissions;
  client_permissions: ApiKeyPermissions;
  expires_at: Date;
  is_active: boolean;
  creator_is_member: boolean;
  creator_pending_deletion: boolean;
}

async function findToken(db: DataSource, hash: string): Promise<TokenRow | undefined> {
  const [row]: TokenRow[] = await db.query(
    `SELECT c.id AS client_id, c.project_id, c.created_by, t.permissions AS scope, c.permissions AS client_permissions, t.expires_at, c.is_active,
            (m.user_id IS NOT NULL) AS creator_is_member, (u.deletion_status IS NOT NULL) AS creator_pending_deletion
       FROM oauth_tokens t
       JOIN oauth_clients c ON c.id = t.client_id
       JOIN projects p ON p.id = c.project_id AND p.deleted_at IS NULL
       LEFT JOIN memberships m ON m.project_id = c.project_id AND m.user_id = c.created_by
       LEFT JOIN users u ON u.id = c.created_by
      WHERE t.token_hash = $1`,
    [hash],
  );
  return row;
}

const inactiveReason = (row: TokenRow) =>
  apiKeyInactiveReason({ isActive: row.is_active, expiresAt: null, creatorIsMember: row.creator_is_member, creatorPendingDeletion: row.creator_pending_deletion });

/**
 * Resolves `Authorization: Bearer fmo_…` (docs/oauth.md) in one indexed query: the token by its
 * SHA-256 with its client, the client's project and its creator's state. A token past its expiry,
 * of a deleted, deactivated or rotated client (their tokens are deleted), of a deleted project, or of
 * a client whose creator left the project or is deleting their account is 401 ERR_OAUTH_007. The
 * flags it carries are its scope narrowed by the client's flags as they are now.
 *
 * With `cache`, a working token is kept for seconds and evicted when its client, its client's
 * creator or project changes (api/identity/credential-cache.ts); expiry is judged on every call.
 */
export async function resolveOAuthToken(db: DataSource, token: string, cache?: CredentialCache): Promise<Principal & { kind: 'oauth' }> {
  if (token.length > 100) throw new AppError('ERR_OAUTH_007');
  const hash = sha256Hex(token);
  const row = cache
    ? await cache.resolve(`oauth:${hash}`, () => findToken(db, hash), (r) => (r && !inactiveReason(r) ? [`oauth-client:${r.client_id}`, ...creatorTags(r.project_id, r.created_by)] : null))
    : await findToken(db, hash);
  if (!row) throw new AppError('ERR_OAUTH_007');
  if (row.expires_at.getTime() <= Date.now()) throw new AppError('ERR_OAUTH_007', 'OAuth access token has expired: request a new one');
  const reason = inactiveReason(row);
  if (reason) throw new AppError('ERR_OAUTH_007', 'The OAuth client of this token is inactive', { reason });
  return { kind: 'oauth', clientId: row.client_id, projectId: row.project_id, permissions: intersectPermissions(row.scope, row.client_permissions) };
}
