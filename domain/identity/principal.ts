import type { ApiKeyPermissions } from './api-keys';

/** Who is calling, as resolved from `Authorization: Bearer …`. */
export type Principal =
  | { kind: 'anonymous' }
  /** `sessionId`: the refresh-token family the access token belongs to (domain/identity/jwt.ts). */
  | { kind: 'jwt'; userId: string; sessionId: string }
  | { kind: 'apiKey'; apiKeyId: string; projectId: string; permissions: ApiKeyPermissions }
  | { kind: 'review'; reviewerId: string; approvalIds: string[]; email: string; projectId: string }
  /**
   * An embed token (`fmed_…`, docs/embedding.md): one template's designer in another site's page.
   * Only the designer's own routes take it (api/templates/embed-fence.ts); `userId` is whoever minted it (none for a key).
   */
  | { kind: 'embed'; tokenId: string; projectId: string; templateId: string; mode: 'edit' | 'view'; origin: string; userId?: string }
  /** A reporting agent's token (`fmag_…`): opens only /api/agents/me/* (api/agents/agent-protocol.routes.ts). */
  | { kind: 'agent'; agentId: string; projectId: string }
  /**
   * An OAuth client-credentials access token (`fmo_…`, docs/oauth.md): accepted wherever an API key
   * is, with the same permission checks. `permissions`: the token's scope narrowed by the client's flags now.
   */
  | { kind: 'oauth'; clientId: string; projectId: string; permissions: ApiKeyPermissions };

/** Rate-limit bucket of a principal (spec Limits §1: API key, OAuth, JWT, unauthenticated). */
export function rateLimitIdentity(p: Principal, ip: string): { kind: 'apiKey' | 'oauth' | 'jwt' | 'anonymous' | 'agent'; key: string } {
  switch (p.kind) {
    case 'apiKey':
      return { kind: 'apiKey', key: p.apiKeyId };
    case 'oauth':
      return { kind: 'oauth', key: p.clientId };
    case 'jwt':
      return { kind: 'jwt', key: p.userId };
    case 'review':
      return { kind: 'anonymous', key: `review:${p.reviewerId}` };
    case 'agent':
      return { kind: 'agent', key: p.agentId };
    case 'embed':
      return { kind: 'jwt', key: `embed:${p.tokenId}` };
    default:
      return { kind: 'anonymous', key: ip };
  }
}
