import type { Context, Next } from 'koa';
import type { DataSource } from 'typeorm';
import { findKeyForCall } from '../../db/identity/api-key-creators';
import { AppError } from '../../domain/errors';
import { apiKeyInactiveReason, INACTIVE_KEY_MESSAGES } from '../../domain/identity/api-key-state';
import { looksLikeApiKey, type ApiKeyPermissions } from '../../domain/identity/api-keys';
import { verifyAccessToken } from '../../domain/identity/jwt';
import type { Principal } from '../../domain/identity/principal';
import { sha256Hex } from '../../domain/signing';
import { looksLikeAgentToken, resolveAgentToken } from '../agents/agent-token';
import { creatorTags, type CredentialCache } from '../identity/credential-cache';
import { resolveOAuthToken } from '../identity/oauth-token';
import { looksLikeOAuthToken } from '../../domain/identity/oauth';

/** A credential kind added by a later domain (e.g. Flow review tokens), tried before JWT. */
export interface CredentialResolver {
  matches(token: string): boolean;
  resolve(token: string): Promise<Principal>;
}

export interface AuthenticateDeps {
  db: DataSource;
  jwtSecret: string;
  resolvers?: CredentialResolver[];
  /** Called for every request made with a valid API key (usage statistics, batched). */
  onApiKeyUse?: (apiKeyId: string) => void;
  /** Working API keys and OAuth tokens, kept for seconds and evicted on change (api/identity/credential-cache.ts). */
  credentials?: CredentialCache;
}

/**
 * Resolves `Authorization: Bearer …` into `ctx.state.principal`. A bad credential does not fail
 * here: it is kept as `ctx.state.authError` and thrown by the route's guard, so public routes and
 * the rate limiter (which must answer every response with its headers) still run.
 */
export function authenticate(deps: AuthenticateDeps) {
  return async function resolvePrincipal(ctx: Context, next: Next): Promise<void> {
    ctx.state.principal = { kind: 'anonymous' } satisfies Principal;
    const header = ctx.get('Authorization');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (header && !match) ctx.state.authError = new AppError('ERR_AUTH_004', 'Authorization header must be "Bearer <credential>"');
    if (match) {
      try {
        ctx.state.principal = await resolve(deps, match[1]);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        ctx.state.authError = err;
      }
    }
    await next();
  };
}

async function resolve(deps: AuthenticateDeps, token: string): Promise<Principal> {
  if (looksLikeApiKey(token)) return resolveApiKey(deps, token);
  if (looksLikeAgentToken(token)) return resolveAgentToken(deps.db, token);
  if (looksLikeOAuthToken(token)) return resolveOAuthToken(deps.db, token, deps.credentials);
  const resolver = deps.resolvers?.find((r) => r.matches(token));
  if (resolver) return resolver.resolve(token);
  const { userId, sessionId } = verifyAccessToken(deps.jwtSecret, token);
  return { kind: 'jwt', userId, sessionId };
}

/**
 * One indexed query, or none while the key is cached: the key by its hash, with whether its creator
 * is still a member of the project and not deleting their account (a key dies with its creator's
 * place in the project). Expiry is judged on every call, cached or not.
 */
async function resolveApiKey(deps: AuthenticateDeps, token: string): Promise<Principal> {
  const hash = sha256Hex(token);
  const load = () => findKeyForCall(deps.db, hash);
  const key = deps.credentials
    ? await deps.credentials.resolve(`key:${hash}`, load, (k) => (k && !apiKeyInactiveReason(k) ? [`key:${k.id}`, ...creatorTags(k.projectId, k.createdBy)] : null))
    : await load();
  if (!key) throw new AppError('ERR_AKEY_002');
  const reason = apiKeyInactiveReason(key);
  if (reason) throw new AppError('ERR_AKEY_003', INACTIVE_KEY_MESSAGES[reason], { reason });
  deps.onApiKeyUse?.(key.id);
  // A copy: the cached row's flags must not be changed by whoever holds the principal.
  return { kind: 'apiKey', apiKeyId: key.id, projectId: key.projectId, permissions: { ...key.permissions } as ApiKeyPermissions };
}
