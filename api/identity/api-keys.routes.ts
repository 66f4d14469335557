import Router from '@koa/router';
import type { Context } from 'koa';
import { creatorStates, type CreatorState } from '../../db/identity/api-key-creators';
import type { ApiKeyEntity } from '../../db/identity/api-key.entity';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { mount } from '../openapi/route';
import * as presenter from './api-keys.presenter';
import * as keys from './api-keys.service';
import { apiKeyEndpoints as routes } from './identity.endpoints';
import { pageMeta } from '../page-meta';

/**
 * Spec, "API keys (JWT only)". Keys are credentials of a project, so managing them takes the
 * `admin` role there (owners included; docs/identity.md); API keys themselves are refused with
 * ERR_AUTH_005 by the guard, which leaves no way for a key to mint or widen another key.
 * Each route is declared once, in identity.endpoints.ts (api/openapi/route.ts).
 */
/** A key deleted between the page query and the state query: shown as not working. */
const GONE_CREATOR: CreatorState = { creatorIsMember: false, creatorPendingDeletion: false };

export function apiKeyRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/api-keys' });
  const admin = requireProject(db, { role: 'admin' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  /** The key object with `inactiveReason`, which needs its creator's state. */
  const present = async (key: ApiKeyEntity) => presenter.presentApiKey(key, (await creatorStates(db, [key.id])).get(key.id) ?? GONE_CREATOR);

  // Idempotency-Key: the answer (with the key shown once) is stored sealed, in the transaction that inserts the key (docs/idempotency.md).
  mount(router, routes.create, admin, idempotent(services), async (ctx, { body }) => {
    const created = ({ key, plainKey }: { key: ApiKeyEntity; plainKey: string }) => ({ status: 201, headers: {}, body: presenter.presentCreatedApiKey(key, plainKey) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, created(await keys.createApiKey({ db }, scope(ctx).projectId, ctx.state.user, body, store && ((m, c) => store(m, created(c))))));
  });

  mount(router, routes.list, admin, async (ctx, { query }) => {
    const { keys: page, total } = await keys.listApiKeys({ db }, scope(ctx).projectId, query);
    const states = await creatorStates(db, page.map((key) => key.id));
    ctx.body = { data: page.map((key) => presenter.presentApiKey(key, states.get(key.id) ?? GONE_CREATOR)), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, admin, async (ctx) => {
    ctx.body = await present(await keys.getApiKey({ db }, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, admin, async (ctx, { body }) => {
    ctx.body = await present(await keys.updateApiKey({ db }, scope(ctx).projectId, ctx.params.id, body));
  });

  mount(router, routes.revoke, admin, async (ctx) => {
    ctx.body = presenter.presentRevokedApiKey(await keys.revokeApiKey({ db }, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.stats, admin, async (ctx) => {
    ctx.body = presenter.presentApiKeyStats(await keys.getApiKeyStats({ db }, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.delete, admin, async (ctx) => {
    await keys.deleteApiKey({ db }, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  return router;
}
