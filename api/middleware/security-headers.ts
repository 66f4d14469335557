import type { Context, Next } from 'koa';

/**
 * Field names whose value is a credential handed to the caller: tokens, API key text, signing
 * secrets, 2FA secrets and backup codes. A response carrying one (at the top of the body or one
 * object down, e.g. `{apiKey: {key}}`) must never be stored by a browser or a shared cache.
 */
const CREDENTIAL_FIELDS = new Set([
  'accessToken',
  'refreshToken',
  'token',
  'plainKey',
  'key',
  'apiKey',
  'secret',
  'clientSecret',
  'signingSecret',
  'backupCodes',
  'otpauthUrl',
  'qrCode',
  'reviewToken',
]);

/** One year, the usual HSTS lifetime (docs/security.md, "Deployment"). */
const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * Security headers on every response (errors included, so it runs outside the error renderer):
 * - `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer`;
 * - `Strict-Transport-Security` in production only (development runs on plain-HTTP localhost);
 * - on JSON answers, `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`, so a
 *   JSON body opened as a page can run nothing;
 * - `Cache-Control: no-store` on every answer that carries a credential (sign-up, login, refresh,
 *   2FA set-up, API-key and webhook creation, ...), found by the body's field names so routes
 *   added later are covered without remembering to.
 * A header a route set itself (an HTML page's own CSP) is left as the route set it.
 */
export function securityHeaders(production: boolean) {
  return async function secure(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } finally {
      const setDefault = (name: string, value: string) => {
        if (!ctx.response.get(name)) ctx.set(name, value);
      };
      setDefault('X-Content-Type-Options', 'nosniff');
      // A page its route made frameable (the embedded designer) carries frame-ancestors instead.
      if (ctx.state.frameable !== true) setDefault('X-Frame-Options', 'DENY');
      setDefault('Referrer-Policy', 'no-referrer');
      if (production) setDefault('Strict-Transport-Security', HSTS);
      if (ctx.response.is('json')) setDefault('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      if (carriesCredential(ctx.body)) {
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Pragma', 'no-cache');
      }
    }
  };
}

function carriesCredential(body: unknown, depth = 0): boolean {
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return false;
  if (Array.isArray(body)) return false;
  for (const [name, value] of Object.entries(body)) {
    if (value == null || value === '') continue;
    if (CREDENTIAL_FIELDS.has(name) && (typeof value === 'string' || Array.isArray(value))) return true;
    if (depth < 1 && typeof value === 'object' && carriesCredential(value, depth + 1)) return true;
  }
  return false;
}
