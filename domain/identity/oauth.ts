import { API_KEY_PERMISSIONS, type ApiKeyPermission, type ApiKeyPermissions } from './api-keys';
import { randomBase62, sha256Hex } from '../signing';

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4; docs/oauth.md). A client is a credential of its
 * project with the same permission flags as an API key. Its id (`fmoc_…`) is public, its secret
 * (`fmocs_…`, shown once) and its access tokens (`fmo_…`) are random 43-character base62 strings
 * (about 256 bits), so, as for API keys, only their SHA-256 is stored: a slow hash protects guessable
 * passwords, not random secrets, and the lookup stays one index probe.
 */
const CLIENT_ID_PREFIX = 'fmoc_';
const CLIENT_SECRET_PREFIX = 'fmocs_';
const ACCESS_TOKEN_PREFIX = 'fmo_';

/** The client's public identifier. */
export function newClientId(): string {
  return CLIENT_ID_PREFIX + randomBase62(24);
}

/** A new secret with what is stored of it: its SHA-256 and the prefix shown in lists (`fmocs_abcdef...`). */
export function newClientSecret(): { secret: string; hash: string; prefix: string } {
  const secret = CLIENT_SECRET_PREFIX + randomBase62(43);
  return { secret, hash: sha256Hex(secret), prefix: `${secret.slice(0, 12)}...` };
}

export function newAccessToken(): { token: string; hash: string } {
  const token = ACCESS_TOKEN_PREFIX + randomBase62(43);
  return { token, hash: sha256Hex(token) };
}

/** `fmo_…` (an `fmoc_` client id or `fmocs_` secret presented as a bearer token is not one). */
export function looksLikeOAuthToken(token: string): boolean {
  return token.startsWith(ACCESS_TOKEN_PREFIX);
}

export function looksLikeClientId(value: string): boolean {
  return value.startsWith(CLIENT_ID_PREFIX) && value.length <= 64;
}

/** The flags that are on, in catalogue order: the `scope` a token reports. */
export function scopeOf(perms: Partial<ApiKeyPermissions>): string {
  return API_KEY_PERMISSIONS.filter((p) => perms[p] === true).join(' ');
}

/** Flags on in both (a token's scope, narrowed by the client's flags as they are now). */
export function intersectPermissions(a: Partial<ApiKeyPermissions>, b: Partial<ApiKeyPermissions>): ApiKeyPermissions {
  return Object.fromEntries(API_KEY_PERMISSIONS.map((p) => [p, a[p] === true && b[p] === true])) as ApiKeyPermissions;
}

export type ScopeResult = { ok: true; permissions: ApiKeyPermissions } | { ok: false; invalid: string[] };

/**
 * RFC 6749 §3.3: `scope` is a space-delimited list; here each entry is a permission flag name. Omitted
 * (or empty): every flag the client holds. A name that is not a flag, or a flag the client does not
 * hold, fails the whole request (`invalid_scope`), so a client never gets less than it asked for
 * without being told.
 */
export function resolveScope(requested: string | undefined, granted: Partial<ApiKeyPermissions>): ScopeResult {
  const names = (requested ?? '').split(' ').filter(Boolean);
  if (names.length === 0) return { ok: true, permissions: intersectPermissions(granted, granted) };
  const invalid = names.filter((n) => !(API_KEY_PERMISSIONS as readonly string[]).includes(n) || granted[n as ApiKeyPermission] !== true);
  if (invalid.length > 0) return { ok: false, invalid: [...new Set(invalid)] };
  const asked = Object.fromEntries(names.map((n) => [n, true])) as Partial<ApiKeyPermissions>;
  return { ok: true, permissions: intersectPermissions(asked, granted) };
}
