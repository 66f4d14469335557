import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { validate } from '../validation';
import * as presenter from './oauth-clients.presenter';
import * as schema from './oauth-clients.schema';
import * as clients from './oauth-clients.service';
import { pageMeta } from '../page-meta';

/**
 * OAuth client management (docs/oauth.md): like API keys, a credential of the project chosen by
 * X-Team-Id, managed by its admins (owners included) with a user session; API keys and OAuth
 * tokens are refused by the guard (403 ERR_AUTH_005), so no credential can mint or widen another.
 */
export function oauthClientRoutes(services: Services): Router {
  const deps = { db: services.db };
  const router = new Router({ prefix: '/api/oauth/clients' });
  const admin = requireProject(services.db, { role: 'admin' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  router.post('/', admin, async (ctx) => {
    const input = validate(schema.createOAuthClientSchema, ctx.request.body);
    const { client, clientSecret } = await clients.createOAuthClient(deps, projectId(ctx), ctx.state.user, input);
    ctx.status = 201;
    ctx.body = presenter.presentClientWithSecret(client, clientSecret);
  });

  router.get('/', admin, async (ctx) => {
    const query = validate(schema.listOAuthClientsSchema, ctx.query);
    const { clients: page, total } = await clients.listOAuthClients(deps, projectId(ctx), query);
    ctx.body = { data: page.map(presenter.presentOAuthClient), meta: pageMeta(total, query.page, query.limit) };
  });

  router.get('/:id', admin, async (ctx) => {
    ctx.body = presenter.presentOAuthClient(await clients.getOAuthClient(deps, projectId(ctx), ctx.params.id));
  });

  router.patch('/:id', admin, async (ctx) => {
    const patch = validate(schema.updateOAuthClientSchema, ctx.request.body);
    ctx.body = presenter.presentOAuthClient(await clients.updateOAuthClient(deps, projectId(ctx), ctx.params.id, patch));
  });

  router.post('/:id/rotate-secret', admin, async (ctx) => {
    const { client, clientSecret } = await clients.rotateOAuthClientSecret(deps, projectId(ctx), ctx.params.id);
    ctx.body = presenter.presentClientWithSecret(client, clientSecret);
  });

  router.delete('/:id', admin, async (ctx) => {
    await clients.deleteOAuthClient(deps, projectId(ctx), ctx.params.id);
    ctx.status = 204;
  });

  return router;
}
