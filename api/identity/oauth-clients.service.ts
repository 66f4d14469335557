import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { resolvePermissions, type ApiKeyPermissions } from '../../domain/identity/api-keys';
import { looksLikeClientId, newClientId, newClientSecret } from '../../domain/identity/oauth';
import type { ApiKeyCreator } from './api-keys.service';
import type { CreateOAuthClientInput, ListOAuthClientsQuery, UpdateOAuthClientInput } from './oauth-clients.schema';
import { isUuid } from '../../domain/ids';

/**
 * OAuth client management (docs/oauth.md), beside API keys and under the same rules: every
 * function acts inside one project, and a client of another project is answered exactly like one
 * that does not exist (ERR_OAUTH_001). A client is addressed by its row id or its `clientId`.
 */

export interface OAuthClientDeps {
  db: DataSource;
}

export interface OAuthClient {
  id: string;
  projectId: string;
  clientId: string;
  name: string;
  secretPrefix: string;
  permissions: ApiKeyPermissions;
  isActive: boolean;
  createdBy: string;
  secretRotatedAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** The creator conditions of an API key (domain/identity/api-key-state.ts), read live. */
  creatorIsMember: boolean;
  creatorPendingDeletion: boolean;
}

const SELECT = `
  SELECT c.id, c.project_id, c.client_id, c.name, c.secret_prefix, c.permissions, c.is_active, c.created_by,
         c.secret_rotated_at, c.last_used_at, c.created_at, c.updated_at,
         (m.user_id IS NOT NULL) AS creator_is_member, (u.deletion_status IS NOT NULL) AS creator_pending_deletion
    FROM oauth_clients c
    LEFT JOIN memberships m ON m.project_id = c.project_id AND m.user_id = c.created_by
    LEFT JOIN users u ON u.id = c.created_by`;

interface Row {
  id: string;
  project_id: string;
  client_id: string;
  name: string;
  secret_prefix: string;
  permissions: ApiKeyPermissions;
  is_active: boolean;
  created_by: string;
  secret_rotated_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  updated_at: Date;
  creator_is_member: boolean;
  creator_pending_deletion: boolean;
}

function fromRow(r: Row): OAuthClient {
  return {
    id: r.id,
    projectId: r.project_id,
    clientId: r.client_id,
    name: r.name,
    secretPrefix: r.secret_prefix,
    permissions: resolvePermissions(r.permissions),
    isActive: r.is_active,
    createdBy: r.created_by,
    secretRotatedAt: r.secret_rotated_at,
    lastUsedAt: r.last_used_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    creatorIsMember: r.creator_is_member,
    creatorPendingDeletion: r.creator_pending_deletion,
  };
}

/** Like an API key, a client needs a verified e-mail behind it. Only the SHA-256 of the secret is kept. */
export async function createOAuthClient(
  deps: OAuthClientDeps,
  projectId: string,
  creator: ApiKeyCreator,
  input: CreateOAuthClientInput,
): Promise<{ client: OAuthClient; clientSecret: string }> {
  if (!creator.emailVerifiedAt) throw new AppError('ERR_AUTH_006', 'Verify your e-mail address before creating OAuth clients');
  const id = randomUUID();
  const { secret, hash, prefix } = newClientSecret();
  await deps.db.query(
    `INSERT INTO oauth_clients (id, project_id, client_id, name, secret_hash, secret_prefix, permissions, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
    [id, projectId, newClientId(), input.name, hash, prefix, JSON.stringify(resolvePermissions(input.permissions)), creator.id],
  );
  return { client: await getOAuthClient(deps, projectId, id), clientSecret: secret };
}

export async function listOAuthClients(deps: OAuthClientDeps, projectId: string, query: ListOAuthClientsQuery): Promise<{ clients: OAuthClient[]; total: number }> {
  const active = query.isActive === undefined ? '' : ` AND c.is_active = ${query.isActive ? 'true' : 'false'}`;
  const rows: Row[] = await deps.db.query(`${SELECT} WHERE c.project_id = $1${active} ORDER BY c.created_at DESC, c.id DESC OFFSET $2 LIMIT $3`, [
    projectId,
    (query.page - 1) * query.limit,
    query.limit,
  ]);
  const [{ n }] = await deps.db.query(`SELECT count(*)::int AS n FROM oauth_clients c WHERE c.project_id = $1${active}`, [projectId]);
  return { clients: rows.map(fromRow), total: n as number };
}

/** By row id or by `clientId` (`fmoc_…`). */
export async function getOAuthClient(deps: OAuthClientDeps, projectId: string, idOrClientId: string): Promise<OAuthClient> {
  const column = isUuid(idOrClientId) ? 'c.id' : looksLikeClientId(idOrClientId) ? 'c.client_id' : undefined;
  const rows: Row[] = column ? await deps.db.query(`${SELECT} WHERE ${column} = $1 AND c.project_id = $2`, [idOrClientId, projectId]) : [];
  if (!rows[0]) throw new AppError('ERR_OAUTH_001');
  return fromRow(rows[0]);
}

/**
 * PATCH: fields left out keep their value, permission flags merge (as for API keys). Deactivating
 * stops the client's tokens on their next request (the token lookup reads the client's switch);
 * narrowing the flags narrows its live tokens too (a token's flags are its scope AND the client's).
 */
export async function updateOAuthClient(deps: OAuthClientDeps, projectId: string, idOrClientId: string, patch: UpdateOAuthClientInput): Promise<OAuthClient> {
  const client = await getOAuthClient(deps, projectId, idOrClientId);
  if (patch.name === undefined && patch.permissions === undefined && patch.isActive === undefined) return client;
  await deps.db.query(
    `UPDATE oauth_clients SET name = COALESCE($3, name), permissions = permissions || $4::jsonb, is_active = COALESCE($5, is_active), updated_at = now()
      WHERE id = $1 AND project_id = $2`,
    [client.id, projectId, patch.name ?? null, JSON.stringify(patch.permissions ?? {}), patch.isActive ?? null],
  );
  // A deactivated client's tokens are deleted as well: reactivating it must not revive them.
  if (patch.isActive === false) await deps.db.query(`DELETE FROM oauth_tokens WHERE client_id = $1`, [client.id]);
  return getOAuthClient(deps, projectId, client.id);
}

/** Deletes the client; its tokens go with it (ON DELETE CASCADE), so they fail on their next request. */
export async function deleteOAuthClient(deps: OAuthClientDeps, projectId: string, idOrClientId: string): Promise<void> {
  const client = await getOAuthClient(deps, projectId, idOrClientId);
  const rows = await modifyReturning<{ id: string }>(deps.db, `DELETE FROM oauth_clients WHERE id = $1 AND project_id = $2 RETURNING id`, [client.id, projectId]);
  if (rows.length === 0) throw new AppError('ERR_OAUTH_001');
}

/** A new secret (shown once); the old one stops working and every token issued under it is revoked. */
export async function rotateOAuthClientSecret(deps: OAuthClientDeps, projectId: string, idOrClientId: string): Promise<{ client: OAuthClient; clientSecret: string }> {
  const client = await getOAuthClient(deps, projectId, idOrClientId);
  const { secret, hash, prefix } = newClientSecret();
  await deps.db.transaction(async (m) => {
    await m.query(`UPDATE oauth_clients SET secret_hash = $2, secret_prefix = $3, secret_rotated_at = now(), updated_at = now() WHERE id = $1`, [client.id, hash, prefix]);
    await m.query(`DELETE FROM oauth_tokens WHERE client_id = $1`, [client.id]);
  });
  return { client: await getOAuthClient(deps, projectId, client.id), clientSecret: secret };
}
