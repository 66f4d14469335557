import jwt from 'jsonwebtoken';
import { AppError } from '../errors';

const ISSUER = 'formwork';

/** Short-lived access token (HS256). Refresh tokens are opaque and stored hashed instead. */
export function signAccessToken(secret: string, userId: string, ttlSeconds: number): string {
  return jwt.sign({ typ: 'access' }, secret, { algorithm: 'HS256', subject: userId, expiresIn: ttlSeconds, issuer: ISSUER });
}

export function verifyAccessToken(secret: string, token: string): { userId: string } {
  try {
    const claims = jwt.verify(token, secret, { algorithms: ['HS256'], issuer: ISSUER }) as jwt.JwtPayload;
    if (claims.typ !== 'access' || typeof claims.sub !== 'string') throw new Error('not an access token');
    return { userId: claims.sub };
  } catch {
    throw new AppError('ERR_AUTH_004');
  }
}
