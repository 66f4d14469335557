import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import { apiKeyInactiveReason } from '../../domain/identity/api-key-state';
import type { ApiKeyPermissions } from '../../domain/identity/api-keys';
import { looksLikeClientId, newAccessToken, resolveScope, scopeOf } from '../../domain/identity/oauth';
import { sha256Hex } from '../../domain/signing';

/**
 * The client-credentials grant (RFC 6749 §4.4; docs/oauth.md): a client authenticates with its id
 * and secret and receives a short-lived bearer token carrying a subset of its permission flags.
 */

export interface TokenDeps {
  db: DataSource;
  ttlSeconds: number;
  /** Failed client authentications: per client id and address, and per address (429 ERR_OAUTH_008 past either). */
  failures: { perClient: RateLimiterAbstract; perAddress: RateLimiterAbstract };
}

export interface TokenRequest {
  /** The request's parameters, each given once (the route refuses repeats). */
  params: Record<string, string>;
  /** From `Authorization: Basic` (RFC 6749 §2.3.1), when the client used it. */
  basic?: { clientId: string; clientSecret: string };
  /** The client's address key (domain/identity/client-address.ts), for the failure budget. */
  address: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

export async function issueToken(deps: TokenDeps, req: TokenRequest): Promise<TokenResponse> {
  const { params } = req;
  if (!params.grant_type) throw new AppError('ERR_OAUTH_006', 'grant_type is required', { field: 'grant_type' });
  if (params.grant_type !== 'client_credentials') throw new AppError('ERR_OAUTH_004', 'Only grant_type=client_credentials is supported');
  if (req.basic && (params.client_id !== undefined || params.client_secret !== undefined)) {
    // RFC 6749 §2.3: a client MUST NOT use more than one authentication method in a request.
    throw new AppError('ERR_OAUTH_006', 'Authenticate with HTTP Basic or with client_id and client_secret in the body, not both');
  }
  const clientId = req.basic?.clientId ?? params.client_id;
  const secret = req.basic?.clientSecret ?? params.client_secret;
  if (!clientId || !secret) throw new AppError('ERR_OAUTH_002', 'Client authentication is required (HTTP Basic, or client_id and client_secret)');

  const clientKey = `${sha256Hex(clientId).slice(0, 32)}|${req.address}`;
  await refuseWhileLocked(deps.failures.perAddress, req.address);
  await refuseWhileLocked(deps.failures.perClient, clientKey);
  const client = looksLikeClientId(clientId) ? await findClient(deps.db, clientId) : undefined;
  // Hash the presented secret whether or not the client exists, so both take the same time.
  const presented = Buffer.from(sha256Hex(secret), 'hex');
  const stored = Buffer.from(client?.secret_hash ?? sha256Hex('no client'), 'hex');
  if (!client || !timingSafeEqual(presented, stored)) {
    await Promise.all([deps.failures.perAddress.penalty(req.address, 1), deps.failures.perClient.penalty(clientKey, 1)]);
    throw new AppError('ERR_OAUTH_002');
  }
  const reason = apiKeyInactiveReason({ isActive: client.is_active, expiresAt: null, creatorIsMember: client.creator_is_member, creatorPendingDeletion: client.creator_pending_deletion });
  if (reason) throw new AppError('ERR_OAUTH_003', reason === 'revoked' ? undefined : 'OAuth client is inactive: the member who created it is no longer in the project', { reason });

  const scope = resolveScope(params.scope, client.permissions);
  if (!scope.ok) throw new AppError('ERR_OAUTH_005', `Scope entries not granted to this client: ${scope.invalid.join(' ')}`, { invalid: scope.invalid });

  const { token, hash } = newAccessToken();
  await deps.db.transaction(async (m) => {
    await m.query(`DELETE FROM oauth_tokens WHERE client_id = $1 AND expires_at < now()`, [client.id]);
    await m.query(`INSERT INTO oauth_tokens (id, client_id, token_hash, permissions, expires_at) VALUES ($1, $2, $3, $4::jsonb, now() + make_interval(secs => $5))`, [
      randomUUID(),
      client.id,
      hash,
      JSON.stringify(scope.permissions),
      deps.ttlSeconds,
    ]);
    await m.query(`UPDATE oauth_clients SET last_used_at = now() WHERE id = $1`, [client.id]);
  });
  return { access_token: token, token_type: 'Bearer', expires_in: deps.ttlSeconds, scope: scopeOf(scope.permissions) };
}

async function refuseWhileLocked(limiter: RateLimiterAbstract, key: string): Promise<void> {
  const seen = await limiter.get(key);
  if (seen && seen.consumedPoints >= limiter.points) {
    const retryAfter = Math.max(1, Math.ceil(seen.msBeforeNext / 1000));
    throw new AppError('ERR_OAUTH_008', undefined, { retryAfter });
  }
}

interface ClientRow {
  id: string;
  secret_hash: string;
  permissions: ApiKeyPermissions;
  is_active: boolean;
  creator_is_member: boolean;
  creator_pending_deletion: boolean;
}

async function findClient(db: DataSource, clientId: string): Promise<ClientRow | undefined> {
  const rows: ClientRow[] = await db.query(
    `SELECT c.id, c.secret_hash, c.permissions, c.is_active,
            (m.user_id IS NOT NULL) AS creator_is_member, (u.deletion_status IS NOT NULL) AS creator_pending_deletion
       FROM oauth_clients c
       JOIN projects p ON p.id = c.project_id AND p.deleted_at IS NULL
       LEFT JOIN memberships m ON m.project_id = c.project_id AND m.user_id = c.created_by
       LEFT JOIN users u ON u.id = c.created_by
      WHERE c.client_id = $1`,
    [clientId],
  );
  return rows[0];
}
