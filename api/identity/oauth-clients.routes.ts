import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import * as presenter from './oauth-clients.presenter';
import { oauthEndpoints as routes } from './oauth.endpoints';
import * as clients from './oauth-clients.service';
import { pageMeta } from '../page-meta';

/**
 * OAuth client management (docs/oauth.md): like API keys, a credential of the project chosen by
 * X-Team-Id, managed by its admins (owners included) with a user session; API keys and OAuth
 * tokens are refused by the guard (403 ERR_AUTH_005), so no credential can mint or widen another.
 * Each route is declared once, in oauth.endpoints.ts (api/openapi/route.ts).
 */
export function oauthClientRoutes(services: Services): Router {
  const deps = { db: services.db };
  const router = new Router({ prefix: '/api/oauth/clients' });
  const admin = requireProject(services.db, { role: 'admin' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  mount(router, routes.create, admin, async (ctx, { body }) => {
    const { client, clientSecret } = await clients.createOAuthClient(deps, projectId(ctx), ctx.state.user, body);
    ctx.status = 201;
    ctx.body = presenter.presentClientWithSecret(client, clientSecret);
  });

  mount(router, routes.list, admin, async (ctx, { query }) => {
    const { clients: page, total } = await clients.listOAuthClients(deps, projectId(ctx), query);
    ctx.body = { data: page.map(presenter.presentOAuthClient), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, admin, async (ctx) => {
    ctx.body = presenter.presentOAuthClient(await clients.getOAuthClient(deps, projectId(ctx), ctx.params.id));
  });

  mount(router, routes.update, admin, async (ctx, { body }) => {
    ctx.body = presenter.presentOAuthClient(await clients.updateOAuthClient(deps, projectId(ctx), ctx.params.id, body));
  });

  mount(router, routes.rotateSecret, admin, async (ctx) => {
    const { client, clientSecret } = await clients.rotateOAuthClientSecret(deps, projectId(ctx), ctx.params.id);
    ctx.body = presenter.presentClientWithSecret(client, clientSecret);
  });

  mount(router, routes.delete, admin, async (ctx) => {
    await clients.deleteOAuthClient(deps, projectId(ctx), ctx.params.id);
    ctx.status = 204;
  });

  return router;
}
