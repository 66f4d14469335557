import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import { requireProject, type ProjectRequirement, type Scope } from '../middleware/guards';
import type { Actor } from './template-store.service';
import { ATTACHMENT_PREFIX } from './templates.endpoints';

/**
 * Who may do what with templates (spec: "JWT; API key is accepted for read operations";
 * contract §2: viewer reads, member creates and uses templates). Reads, renders and checks
 * (GET endpoints, export, preview, validate-*) take a viewer or an API key with `read_templates`;
 * anything that changes a stored template takes a member and refuses API keys: 403 ERR_AUTH_005
 * with `relatedInfo.required: "manage_templates"` (the permission name the spec's errors carry; no
 * API key flag grants it, so only a member's JWT writes templates) and the key's flags as `granted`.
 */
export const TEMPLATE_ACCESS = {
  read: { role: 'viewer', permission: 'read_templates' },
  write: { role: 'member', apiKeyRequired: 'manage_templates' },
} as const satisfies Record<string, ProjectRequirement>;

/**
 * The guards of TEMPLATE_ACCESS; the MCP tools (api/mcp/) check the same rules. `designerRead` and
 * `designerWrite` are the same guards that also take an embed token (docs/embedding.md) for the
 * template in the path, on the designer's own calls: reads for any token, writes for an `edit` one.
 */
export function templateGuards(db: DataSource) {
  const read = requireProject(db, TEMPLATE_ACCESS.read);
  const write = requireProject(db, TEMPLATE_ACCESS.write);
  return { read, write, designerRead: orEmbedToken(read, 'view'), designerWrite: orEmbedToken(write, 'edit') };
}

/**
 * Lets an embed token through `guard`'s route when it names this template (the path's `:id`; the
 * catalogue of component types names none) and its mode allows the call. The scope is the token's
 * project; the actor the person who minted it (none when a key did). Every other route refuses the
 * token before it gets here (api/templates/embed-fence.ts), and requireProject refuses it anyway.
 */
function orEmbedToken(guard: Middleware, need: 'view' | 'edit'): Middleware {
  return async function embedGuard(ctx: Context, next: Next): Promise<void> {
    const p = ctx.state.principal as Principal | undefined;
    if (ctx.state.authError || p?.kind !== 'embed') return guard(ctx, next);
    const id = (ctx as Context & { params?: Record<string, string> }).params?.id;
    if (id !== undefined && id !== p.templateId) throw new AppError('ERR_EMBED_002', undefined, { templateId: id });
    if (need === 'edit' && p.mode !== 'edit') throw new AppError('ERR_EMBED_003', undefined, { required: 'edit', granted: p.mode });
    ctx.state.scope = { projectId: p.projectId, userId: p.userId } satisfies Scope;
    await next();
  };
}

export function actorOf(scope: Scope): Actor {
  return { projectId: scope.projectId, userId: scope.userId };
}

/**
 * A router for one template prefix. Under `/api/templates/attachment/*` a template that is not
 * found answers the spec's 404 ERR_TMPL_003 ("attachment template not found") instead of
 * ERR_TMPL_001, with the same `relatedInfo`; everything else is the same as on `/api/templates`.
 */
export function templateRouter(prefix: string): Router {
  const router = new Router({ prefix });
  if (prefix === ATTACHMENT_PREFIX) router.use(attachmentNotFound);
  return router;
}

async function attachmentNotFound(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    if (err instanceof AppError && err.code === 'ERR_TMPL_001') throw new AppError('ERR_TMPL_003', undefined, err.relatedInfo);
    throw err;
  }
}
