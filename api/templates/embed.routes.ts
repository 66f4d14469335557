import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import { requireMembership, requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import type { WebApp } from '../web/web-app';
import { embedEndpoints as routes } from './embed.endpoints';
import * as embed from './embed.service';

/**
 * The designer in another site's page (docs/embedding.md):
 * - `GET|PUT /api/teams/:id/embed-origins`: the origins allowed to frame it (members read, admins set);
 * - `POST /api/templates/:id/embed-tokens`: a project admin, or an API key with `embed_designer`,
 *   mints a short-lived token for one template, a mode and one of those origins;
 * - `GET /api/embed/session`: what the token opens (the embedded page asks this first);
 * - `GET /embed/designer/:templateId?token=…`: the app's page, framable by the token's origin only.
 * Each route is declared once, in embed.endpoints.ts (api/openapi/route.ts).
 */
export function embedRoutes(services: Services, page: WebApp['page']): Router {
  const { db } = services;
  const router = new Router();
  const scope = (ctx: Context) => ctx.state.scope as Scope;

  mount(router, routes.origins, requireMembership(db, { role: 'viewer', param: 'id' }), async (ctx) => {
    ctx.body = { origins: await embed.embedOrigins(db, scope(ctx).projectId) };
  });

  mount(router, routes.setOrigins, requireMembership(db, { role: 'admin', param: 'id' }), async (ctx, { body: input }) => {
    ctx.body = { origins: await embed.setEmbedOrigins(db, scope(ctx).projectId, input.origins) };
  });

  mount(router, routes.mintToken, requireProject(db, { role: 'admin', permission: 'embed_designer' }), async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = await embed.mintEmbedToken(db, services.config.publicUrl, scope(ctx), ctx.params.id, input);
  });

  mount(router, routes.session, async (ctx) => {
    if (ctx.state.authError) throw ctx.state.authError;
    const p = ctx.state.principal as Principal;
    if (p.kind === 'anonymous') throw new AppError('ERR_AUTH_003');
    if (p.kind !== 'embed') throw new AppError('ERR_AUTH_005', 'This endpoint needs an embed token', { required: 'embed', granted: p.kind });
    ctx.body = await embed.embedSession(db, p);
  });

  if (page) {
    mount(router, routes.designerPage, async (ctx, { query }) => {
      page(ctx, undefined, { frameAncestor: await embed.frameAncestorOf(db, query.token, ctx.params.templateId) });
    });
  }
  return router;
}
