import type { Context, Next } from 'koa';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';

/**
 * The fence around embed tokens (docs/embedding.md): a request made with one reaches only the calls
 * the embedded designer makes, for the token's own template; everything else is 403 ERR_EMBED_002
 * before any route runs. The routes it lets through check the token again (template-guards.ts
 * `designerRead`/`designerWrite`: the template and the mode); every other guard refuses it too.
 */
const DESIGNER_CALLS: ReadonlyArray<readonly [string, RegExp]> = [
  ['GET', /^\/api\/embed\/session$/],
  ['GET', /^\/api\/templates\/component-types$/],
  ['GET', /^\/api\/templates\/(?<id>[^/]+)$/],
  ['PUT', /^\/api\/templates\/(?<id>[^/]+)$/],
  ['GET', /^\/api\/templates\/(?<id>[^/]+)\/sample-data$/],
  ['PUT', /^\/api\/templates\/(?<id>[^/]+)\/sample-data$/],
  ['POST', /^\/api\/templates\/(?<id>[^/]+)\/preview$/],
  ['POST', /^\/api\/templates\/(?<id>[^/]+)\/preview\/grid$/],
  ['POST', /^\/api\/templates\/(?<id>[^/]+)\/calculate$/],
  ['POST', /^\/api\/templates\/(?<id>[^/]+)\/publish$/],
];

export function designerCallAllowed(method: string, path: string, templateId: string): boolean {
  return DESIGNER_CALLS.some(([m, pattern]) => {
    if (m !== method) return false;
    const match = pattern.exec(path);
    return match !== null && (match.groups?.id === undefined || match.groups.id === templateId);
  });
}

export async function embedFence(ctx: Context, next: Next): Promise<void> {
  const p = ctx.state.principal as Principal | undefined;
  if (p?.kind === 'embed' && !ctx.state.authError && !designerCallAllowed(ctx.method, ctx.path, p.templateId)) {
    throw new AppError('ERR_EMBED_002', undefined, { templateId: p.templateId });
  }
  await next();
}
