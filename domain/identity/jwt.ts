import jwt from 'jsonwebtoken';
import { AppError } from '../errors';
import { isUuid } from '../ids';

const ISSUER = 'formwork';

/**
 * Short-lived access token (HS256). Refresh tokens are opaque and stored hashed instead.
 * `sid` names the session: the refresh-token family the token was issued with. The token is
 * only honoured while that session lives (api/middleware/guards.ts `loadUser`), so logout, a
 * password change and the like end it at once instead of at its expiry.
 */
export function signAccessToken(secret: string, userId: string, sessionId: string, ttlSeconds: number): string {
  return jwt.sign({ typ: 'access', sid: sessionId }, secret, { algorithm: 'HS256', subject: userId, expiresIn: ttlSeconds, issuer: ISSUER });
}

/** A token without a session id (issued before sessions existed) is refused: the client refreshes. */
export function verifyAccessToken(secret: string, token: string): { userId: string; sessionId: string } {
  try {
    const claims = jwt.verify(token, secret, { algorithms: ['HS256'], issuer: ISSUER }) as jwt.JwtPayload;
    if (claims.typ !== 'access' || typeof claims.sub !== 'string') throw new Error('not an access token');
    if (typeof claims.sid !== 'string' || !isUuid(claims.sid)) throw new Error('no session');
    return { userId: claims.sub, sessionId: claims.sid };
  } catch {
    throw new AppError('ERR_AUTH_004');
  }
}
