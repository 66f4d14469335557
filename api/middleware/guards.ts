import type { Context, Next } from 'koa';
import type { DataSource } from 'typeorm';
import { MembershipEntity } from '../../db/identity/membership.entity';
import { ProjectEntity } from '../../db/identity/project.entity';
import { UserEntity } from '../../db/identity/user.entity';
import { AppError } from '../../domain/errors';
import type { ApiKeyPermission, ApiKeyPermissions } from '../../domain/identity/api-keys';
import type { Principal } from '../../domain/identity/principal';
import { roleAtLeast, type Role } from '../../domain/identity/roles';
import { isUuid } from '../../domain/ids';

/**
 * Route guards: the only place access is decided. Every project-scoped route declares what it
 * needs with `requireProject({ role, permission })`; the guard resolves the project the call acts
 * on (`ctx.state.scope`) and checks the caller's role (JWT) or the key's permission (API key).
 */

export interface Scope {
  projectId: string;
  /** The user behind the call (JWT), or undefined for an API key. */
  userId?: string;
  role?: Role;
  apiKeyId?: string;
  /** The OAuth client whose access token made the call (docs/oauth.md); no user, no API key. */
  oauthClientId?: string;
}

function principalOf(ctx: Context): Principal {
  if (ctx.state.authError) throw ctx.state.authError;
  return ctx.state.principal as Principal;
}

/** Codes a guard may refuse a JWT caller's role with; ERR_TEAM_003 names owner-only project operations. */
export type RoleDeniedCode = 'ERR_AUTH_005' | 'ERR_TEAM_003';

function deny(required: string, granted: string, message?: string, code: RoleDeniedCode = 'ERR_AUTH_005'): AppError {
  return new AppError(code, message, { required, granted });
}

/**
 * Loads the signed-in user; refuses API keys and accounts pending deletion. Every JWT call passes
 * here, so this is where an access token ends with its session: the same single query that loads
 * the user checks that the token's refresh-token family still has an unrevoked token (a partial
 * index makes that one index probe). Logout, a password change or reset, enabling 2FA and
 * account deletion revoke families, and the next call with one of their access tokens is 401.
 */
export async function loadUser(db: DataSource, ctx: Context): Promise<UserEntity> {
  const p = principalOf(ctx);
  if (p.kind === 'anonymous') throw new AppError('ERR_AUTH_003');
  if (p.kind !== 'jwt') throw deny('jwt', p.kind, 'This endpoint needs a user session (JWT)');
  const { entities, raw } = await db
    .getRepository(UserEntity)
    .createQueryBuilder('u')
    .addSelect('EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = :sessionId AND r.user_id = u.id AND r.revoked_at IS NULL)', 'session_live')
    .where('u.id = :userId', { userId: p.userId, sessionId: p.sessionId })
    .getRawAndEntities<{ session_live: boolean }>();
  const user = entities[0];
  if (!user) throw new AppError('ERR_AUTH_004');
  // A deletion request ends every session too; its own answer tells the user how to restore.
  if (user.deletionStatus === 'pending') throw new AppError('ERR_USER_004');
  if (user.deletionStatus === 'purging') throw new AppError('ERR_USER_005');
  if (raw[0]?.session_live !== true) throw new AppError('ERR_AUTH_004', 'Session has ended: sign in again');
  ctx.state.user = user;
  return user;
}

export interface ProjectRequirement {
  /** Least role a JWT caller needs; undefined refuses JWT callers. */
  role?: Role;
  /** Flag an API key (or OAuth access token) needs; undefined refuses both. `true` accepts any key of the project. */
  permission?: ApiKeyPermission | true;
  /** Code for a JWT caller below `role`: ERR_AUTH_005 unless said otherwise. */
  deniedCode?: RoleDeniedCode;
  /**
   * With `permission` undefined: the name an API key's refusal reports as `relatedInfo.required`
   * (with the key's flags as `granted`), instead of `{required: "jwt", granted: "apiKey"}`. Template
   * writes say `manage_templates`, the name the spec gives for them; no key can hold it.
   */
  apiKeyRequired?: string;
}

export function requireProject(db: DataSource, need: ProjectRequirement) {
  return async function projectGuard(ctx: Context, next: Next): Promise<void> {
    const p = principalOf(ctx);
    if (p.kind === 'anonymous') throw new AppError('ERR_AUTH_003');
    if (p.kind === 'apiKey' || p.kind === 'oauth') {
      // An OAuth access token (docs/oauth.md) is held to exactly the rules of an API key with its flags.
      if (need.permission === undefined) {
        if (need.apiKeyRequired) {
          throw deny(need.apiKeyRequired, grantedPermissions(p.permissions), `API keys cannot perform this action: it needs ${need.apiKeyRequired}, which no API key holds (use a user session)`);
        }
        throw deny('jwt', p.kind, p.kind === 'oauth' ? 'OAuth access tokens cannot perform this action' : 'API keys cannot perform this action');
      }
      if (!keyPermits(p.permissions, need)) throw deny(String(need.permission), grantedPermissions(p.permissions));
      ctx.state.scope = (p.kind === 'apiKey' ? { projectId: p.projectId, apiKeyId: p.apiKeyId } : { projectId: p.projectId, oauthClientId: p.clientId }) satisfies Scope;
    } else if (p.kind === 'jwt') {
      if (need.role === undefined) throw deny('apiKey', 'jwt', 'This endpoint needs an API key');
      const user = await loadUser(db, ctx);
      const { projectId, role } = await activeMembership(db, user, ctx.get('X-Team-Id'));
      if (!roleAtLeast(role, need.role)) throw deny(need.role, role, undefined, need.deniedCode);
      ctx.state.scope = { projectId, userId: user.id, role } satisfies Scope;
    } else {
      throw deny(need.permission === undefined ? 'jwt' : 'apiKey', p.kind);
    }
    await next();
  };
}

export interface MembershipRequirement {
  /** Least role the caller needs in the project named by the path. */
  role: Role;
  /** Route parameter holding the project id (`id` for /api/teams/:id). */
  param: string;
  deniedCode?: RoleDeniedCode;
}

/**
 * For routes that name the project in the path (/api/teams/:id) instead of X-Team-Id. JWT only.
 * An unknown, deleted or foreign project is 404 ERR_TEAM_001 alike, so ids cannot be probed.
 */
export function requireMembership(db: DataSource, need: MembershipRequirement) {
  return async function membershipGuard(ctx: Context, next: Next): Promise<void> {
    const user = await loadUser(db, ctx);
    const projectId = (ctx as Context & { params?: Record<string, string> }).params?.[need.param] ?? '';
    const m = isUuid(projectId)
      ? await db
          .getRepository(MembershipEntity)
          .createQueryBuilder('m')
          .innerJoin(ProjectEntity, 'p', 'p.id = m.project_id AND p.deleted_at IS NULL')
          .where('m.user_id = :userId AND m.project_id = :projectId', { userId: user.id, projectId })
          .getOne()
      : null;
    if (!m) throw new AppError('ERR_TEAM_001');
    if (!roleAtLeast(m.role, need.role)) throw deny(need.role, m.role, undefined, need.deniedCode);
    ctx.state.scope = { projectId, userId: user.id, role: m.role } satisfies Scope;
    await next();
  };
}

/**
 * The API-key rule of requireProject: whether a key's flags meet a route's requirement. The MCP
 * tools (api/mcp/) decide with it too, so a tool and its REST route admit the same keys.
 */
export function keyPermits(permissions: ApiKeyPermissions, need: ProjectRequirement): boolean {
  if (need.permission === undefined) return false;
  return need.permission === true || permissions[need.permission] === true;
}

/** The refusal of a key keyPermits turned down: 403 ERR_AUTH_005 naming the flag needed and the key's flags. */
export function keyDenied(permissions: ApiKeyPermissions, need: ProjectRequirement): AppError {
  const required = need.permission === undefined ? (need.apiKeyRequired ?? 'jwt') : String(need.permission);
  return deny(required, grantedPermissions(permissions), need.permission === undefined ? 'API keys cannot perform this action' : undefined);
}

function grantedPermissions(perms: Record<string, boolean>): string {
  return Object.keys(perms).filter((k) => perms[k]).join(',') || 'none';
}

/** Contract §2: X-Team-Id picks the project (the caller must be a member); default personal. */
async function activeMembership(db: DataSource, user: UserEntity, teamId: string): Promise<{ projectId: string; role: Role }> {
  const qb = db
    .getRepository(MembershipEntity)
    .createQueryBuilder('m')
    .innerJoin(ProjectEntity, 'p', 'p.id = m.project_id AND p.deleted_at IS NULL')
    .where('m.user_id = :userId', { userId: user.id });
  if (teamId) {
    if (!isUuid(teamId)) throw deny('member of X-Team-Id', 'none', 'X-Team-Id is not a project you belong to');
    qb.andWhere('m.project_id = :teamId', { teamId });
  } else {
    qb.andWhere('p.is_personal = true');
  }
  const m = await qb.getOne();
  if (!m) throw deny('member of X-Team-Id', 'none', 'X-Team-Id is not a project you belong to');
  return { projectId: m.projectId, role: m.role };
}
