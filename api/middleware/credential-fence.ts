import type { Context, Next } from 'koa';
import type { Principal } from '../../domain/identity/principal';
import type { CredentialCache } from '../identity/credential-cache';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Credentials change through a user's session (API keys, OAuth clients, members, teams and account
 * deletion are managed with a JWT), so after such a call that may have written, this process waits
 * until its credential cache has seen every notification committed so far (CredentialCache.fence):
 * the caller's next request, here or on another replica, finds the old credential gone. Calls made
 * with an API key or a token, the hot path, never wait here.
 */
export function credentialFence(cache: CredentialCache) {
  return async function fenceCredentialChanges(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } finally {
      // A failed fence has emptied the cache, which is as safe: nothing to report to the caller.
      if (!SAFE.has(ctx.method) && (ctx.state.principal as Principal | undefined)?.kind === 'jwt') await cache.fence().catch(() => undefined);
    }
  };
}
