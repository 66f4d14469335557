import Router from '@koa/router';
import type { Context } from 'koa';
import { createOutboundGuard } from '../../adapters/http/outbound';
import type { WebhookSubscriptionEntity } from '../../db/webhooks/webhook-subscription.entity';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { presentWebhookDelivery } from '../deliveries/delivery.presenter';
import { mount } from '../openapi/route';
import * as deliveries from './webhook-deliveries.service';
import * as presenter from './webhooks.presenter';
import { webhookEndpoints as routes } from './webhooks.endpoints';
import * as subscriptions from './webhooks.service';
import { pageMeta } from '../page-meta';

/**
 * Document webhook subscriptions (contract §4). A JWT caller needs the admin role (owners
 * included); an API key needs `manage_webhooks`. Everything acts on the caller's project.
 * Each route is declared once, in webhooks.endpoints.ts (api/openapi/route.ts): its operation in the
 * OpenAPI document, its validation and its handler's input type come from that declaration.
 */
export function webhookRoutes(services: Services): Router {
  const { db, config } = services;
  const router = new Router({ prefix: '/api/webhooks' });
  const manage = requireProject(db, { role: 'admin', permission: 'manage_webhooks' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const subscriptionDeps = { db, guard: createOutboundGuard(config.outbound.allowlist) };
  const deliveryDeps = { db, temporal: services.temporal, taskQueues: services.taskQueues, retryDelaysMs: config.webhooks.retryDelaysMs };

  mount(router, routes.getDelivery, manage, async (ctx) => {
    ctx.body = presentWebhookDelivery(await deliveries.getDocumentDelivery(deliveryDeps, scope(ctx).projectId, ctx.params.deliveryId));
  });

  mount(router, routes.retryDelivery, manage, async (ctx) => {
    const { deliveryId } = await deliveries.retryWebhookDelivery(deliveryDeps, { projectId: scope(ctx).projectId, deliveryId: ctx.params.deliveryId });
    ctx.body = { success: true, deliveryId, message: 'Delivery re-enqueued' };
  });

  // Idempotency-Key: the answer (with the signing secret) is stored sealed, in the transaction that inserts the subscription (docs/idempotency.md).
  mount(router, routes.create, manage, idempotent(services), async (ctx, { body }) => {
    const { projectId, userId, apiKeyId } = scope(ctx);
    const created = (subscription: WebhookSubscriptionEntity) => ({ status: 201, headers: {}, body: presenter.presentCreatedSubscription(subscription) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, created(await subscriptions.createSubscription(subscriptionDeps, projectId, { userId, apiKeyId }, body, store && ((m, s) => store(m, created(s))))));
  });

  mount(router, routes.list, manage, async (ctx, { query }) => {
    const { subscriptions: page, total } = await subscriptions.listSubscriptions(subscriptionDeps, scope(ctx).projectId, query);
    ctx.body = { data: page.map(presenter.presentSubscription), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, manage, async (ctx) => {
    ctx.body = presenter.presentSubscription(await subscriptions.getSubscription(subscriptionDeps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, manage, async (ctx, { body }) => {
    ctx.body = presenter.presentSubscription(await subscriptions.updateSubscription(subscriptionDeps, scope(ctx).projectId, ctx.params.id, body));
  });

  mount(router, routes.delete, manage, async (ctx) => {
    await subscriptions.deleteSubscription(subscriptionDeps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.listDeliveries, manage, async (ctx, { query }) => {
    const { deliveries: page, total } = await deliveries.listDeliveries(deliveryDeps, scope(ctx).projectId, ctx.params.id, query);
    ctx.body = { data: page.map(presentWebhookDelivery), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.sendTest, manage, async (ctx) => {
    const { deliveryId, eventId } = await deliveries.sendTestEvent(deliveryDeps, scope(ctx).projectId, ctx.params.id);
    // A delivery record is created (the spec lists no 202): 201 with `Location` at its GET URL;
    // the delivery itself runs in its workflow and that URL follows it.
    ctx.status = 201;
    ctx.set('Location', `${config.publicUrl}/api/webhooks/deliveries/${deliveryId}`);
    ctx.body = { success: true, deliveryId, eventId, status: 'pending' };
  });

  return router;
}
