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

/** The token settings of the running service. */
export function sessionTokenDeps(s: { db: DataSource; secret: string; config: { auth: { jwtTtlSeconds: number; refreshTokenTtlSeconds: number } } }): TokenDeps {
  return { db: s.db, secret: s.secret, jwtTtlSeconds: s.config.auth.jwtTtlSeconds, refreshTokenTtlSeconds: s.config.auth.refreshTokenTtlSeconds };
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/**
 * Issues an access token and a refresh token (a new family unless one is given). The family is
 * the session: its access tokens carry its id and work only while it has an unrevoked token.
 */
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
  return { accessToken: signAccessToken(deps.secret, userId, familyId, deps.jwtTtlSeconds), refreshToken, expiresIn: deps.jwtTtlSeconds };
}

/**
 * Rotation: the presented token is revoked and a new one of the same family issued. Presenting a
 * token that was already rotated means it leaked: the whole family is revoked. The conditional
 * UPDATE makes two concurrent refreshes with one token yield one winner. Revoking the old token
 * and storing its successor commit together, so the session never looks ended in between (the
 * access tokens of the family are checked against exactly that).
 */
export async function rotateRefreshToken(deps: TokenDeps, refreshToken: string): Promise<{ userId: string; tokens: TokenPair }> {
  const hash = sha256Hex(refreshToken);
  const rotated = await deps.db.transaction(async (m) => {
    const rows = await modifyReturning<{ user_id: string; family_id: string }>(
      m,
      `UPDATE refresh_tokens SET revoked_at = now()
        WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
        RETURNING user_id, family_id`,
      [hash],
    );
    if (rows.length === 0) return undefined;
    const { user_id: userId, family_id: familyId } = rows[0];
    return { userId, tokens: await issueTokens(deps, userId, familyId, m) };
  });
  if (!rotated) {
    // Not in a transaction on purpose: the family revocation must stand although the call fails.
    await deps.db.query(
      `UPDATE refresh_tokens SET revoked_at = now()
        WHERE revoked_at IS NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND revoked_at IS NOT NULL)`,
      [hash],
    );
    throw new AppError('ERR_AUTH_004', 'Refresh token is invalid, expired or already used');
  }
  return rotated;
}

/** Logout: the token's whole family (the session, its access tokens too) stops working. Unknown tokens are accepted silently. */
export async function revokeRefreshFamily(db: DataSource, refreshToken: string): Promise<void> {
  await db.query(
    `UPDATE refresh_tokens SET revoked_at = now()
      WHERE revoked_at IS NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)`,
    [sha256Hex(refreshToken)],
  );
}

/** Ends every session of the user: refresh tokens and, with them, the access tokens issued alongside. */
export async function revokeAllRefreshTokens(db: DataSource | EntityManager, userId: string): Promise<void> {
  await db.query(`UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [userId]);
}
