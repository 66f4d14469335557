import type { Context } from 'koa';
import { AppError } from '../../domain/errors';

/**
 * Browser sessions (docs/web.md, "Sessions"): the dashboard keeps its access token in memory and its
 * refresh token in an HttpOnly cookie the page's script never reads. A call to sign-up, login,
 * refresh or logout asks for this with `X-Formwork-Session: cookie`; without the header the routes
 * answer as the contract says, tokens in the body, for every other client.
 *
 * CSRF: the cookie is SameSite=Strict and scoped to /api/auth, so no other site's page sends it; a
 * cross-origin page cannot add the header either (that needs a CORS preflight this API never
 * grants); and an Origin the browser sends must be this service's own.
 */
const SESSION_HEADER = 'X-Formwork-Session';
export const REFRESH_COOKIE = 'formwork_refresh';
const COOKIE_PATH = '/api/auth';

/** Whether the caller asked for a cookie session; refuses a browser request from another origin. */
export function cookieSession(ctx: Context, publicUrl: string): boolean {
  const mode = ctx.get(SESSION_HEADER);
  if (!mode) return false;
  if (mode !== 'cookie') throw new AppError('ERR_VALID_001', `${SESSION_HEADER} may only be "cookie"`, { field: SESSION_HEADER });
  const origin = ctx.get('Origin');
  if (origin && origin !== `${ctx.protocol}://${ctx.host}` && origin !== new URL(publicUrl).origin) {
    throw new AppError('ERR_AUTH_005', 'A browser session may only be started by a page of this service', { field: 'Origin' });
  }
  return true;
}

/** Sets the refresh cookie (Secure in production) and returns the body's tokens without the refresh token. */
export function keepRefreshInCookie<T extends { refreshToken: string }>(ctx: Context, tokens: T, options: { maxAgeSeconds: number; secure: boolean }): Omit<T, 'refreshToken'> {
  const { refreshToken, ...rest } = tokens;
  ctx.cookies.set(REFRESH_COOKIE, refreshToken, {
    httpOnly: true,
    sameSite: 'strict',
    path: COOKIE_PATH,
    secure: options.secure,
    maxAge: options.maxAgeSeconds * 1000,
    overwrite: true,
  });
  return rest;
}

/**
 * The tokens as the caller asked for them (sign-up, login, enabling 2FA, a password change): all in
 * the body, or, for a browser session, the refresh token in the cookie and the rest in the body.
 */
export function handOutTokens<T extends { refreshToken: string }>(
  ctx: Context,
  tokens: T,
  config: { publicUrl: string; production: boolean; auth: { refreshTokenTtlSeconds: number } },
): T | Omit<T, 'refreshToken'> {
  return cookieSession(ctx, config.publicUrl) ? keepRefreshInCookie(ctx, tokens, { maxAgeSeconds: config.auth.refreshTokenTtlSeconds, secure: config.production }) : tokens;
}

/** The refresh token from the cookie; ERR_AUTH_004 when there is none. */
export function refreshFromCookie(ctx: Context): string {
  const token = ctx.cookies.get(REFRESH_COOKIE);
  if (!token || token.length > 200) throw new AppError('ERR_AUTH_004');
  return token;
}

/** Removes the refresh cookie (sign-out). */
export function clearRefreshCookie(ctx: Context, secure: boolean): void {
  ctx.cookies.set(REFRESH_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: COOKIE_PATH, secure, maxAge: 0, overwrite: true });
}
