import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { RefreshTokenEntity } from '../../db/identity/refresh-token.entity';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { signAccessToken } from '../../domain/identity/jwt';
import { randomToken, sha256Hex } from '../../domain/signing';

export interface TokenDeps {
  db: DataSource;
  secret: string;
  jwtTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/** Issues an access token and a refresh token (a new family unless one is given). */
export async function issueTokens(deps: TokenDeps, userId: string, familyId: string = randomUUID(), manager?: EntityManager): Promise<TokenPair> {
  const refreshToken = `fmr_${randomToken(32)}`;
  const now = new Date();
  await (manager ?? deps.db.manager).getRepository(RefreshTokenEntity).insert({
    id: randomUUID(),
    userId,
    familyId,
    tokenHash: sha256Hex(refreshToken),
    expiresAt: new Date(now.getTime() + deps.refreshTokenTtlSeconds * 1000),
    revokedAt: null,
    createdAt: now,
  });
  return { accessToken: signAccessToken(deps.secret, userId, deps.jwtTtlSeconds), refreshToken, expiresIn: deps.jwtTtlSeconds };
}

/**
 * Rotation: the presented token is revoked and a new one of the same family issued. Presenting a
 * token that was already rotated means it leaked: the whole family is revoked. The conditional
 * UPDATE makes two concurrent refreshes with one token yield one winner.
 */
export async function rotateRefreshToken(deps: TokenDeps, refreshToken: string): Promise<{ userId: string; tokens: TokenPair }> {
  const hash = sha256Hex(refreshToken);
  const rows = await modifyReturning<{ user_id: string; family_id: string }>(
    deps.db,
    `UPDATE refresh_tokens SET revoked_at = now()
      WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
      RETURNING user_id, family_id`,
    [hash],
  );
  if (rows.length === 0) {
    // Not in a transaction on purpose: the family revocation must stand although the call fails.
    await deps.db.query(
      `UPDATE refresh_tokens SET revoked_at = now()
        WHERE revoked_at IS NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND revoked_at IS NOT NULL)`,
      [hash],
    );
    throw new AppError('ERR_AUTH_004', 'Refresh token is invalid, expired or already used');
  }
  const { user_id: userId, family_id: familyId } = rows[0];
  return { userId, tokens: await issueTokens(deps, userId, familyId) };
}

/** Logout: the token's whole family stops working. Unknown tokens are accepted silently. */
export async function revokeRefreshFamily(db: DataSource, refreshToken: string): Promise<void> {
  await db.query(
    `UPDATE refresh_tokens SET revoked_at = now()
      WHERE revoked_at IS NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)`,
    [sha256Hex(refreshToken)],
  );
}

export async function revokeAllRefreshTokens(db: DataSource | EntityManager, userId: string): Promise<void> {
  await db.query(`UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [userId]);
}
