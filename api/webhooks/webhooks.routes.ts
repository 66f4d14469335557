import Router from '@koa/router';
import type { Context } from 'koa';
import { createOutboundGuard } from '../../activities/http/outbound';
import type { WebhookSubscriptionEntity } from '../../db/webhooks/webhook-subscription.entity';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { noContent, ok, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { mount, operationsOf, routeTable } from '../openapi/route';
import * as deliveries from './webhook-deliveries.service';
import * as presenter from './webhooks.presenter';
import * as schema from './webhooks.schema';
import * as subscriptions from './webhooks.service';
import { pageMeta } from '../page-meta';

/**
 * Document webhook subscriptions (contract §4). A JWT caller needs the admin role (owners
 * included); an API key needs `manage_webhooks`. Everything acts on the caller's project.
 * Each route is declared once (api/openapi/route.ts): its operation in the OpenAPI document, its
 * validation and its handler's input type come from the declaration.
 */
const route = routeTable('Webhooks');
const id = { id: 'The subscription id' };
const deliveryId = { deliveryId: 'The delivery id' };
const uuid = { type: 'string', format: 'uuid' };
const retried = {
  type: 'object',
  required: ['success', 'deliveryId', 'message'],
  properties: { success: { type: 'boolean', const: true }, deliveryId: uuid, message: { type: 'string' } },
  additionalProperties: false,
};
const testSent = {
  type: 'object',
  required: ['success', 'deliveryId', 'eventId', 'status'],
  properties: { success: { type: 'boolean', const: true }, deliveryId: uuid, eventId: uuid, status: { type: 'string', enum: ['pending'] } },
  additionalProperties: false,
};

// Static paths before /:id, which would otherwise take "deliveries" for a subscription id.
const routes = {
  getDelivery: route('get', '/api/webhooks/deliveries/:deliveryId', 'Get a delivery', { security: 'project', request: { params: deliveryId }, responses: { 200: ok('The delivery with its attempts', resource('WebhookDelivery')) } }),
  retryDelivery: route('post', '/api/webhooks/deliveries/:deliveryId/retry', 'Deliver again', {
    description: 'A failed delivery only, to the subscription\'s current URL and secret, with a full new retry schedule.',
    security: 'project',
    request: { params: deliveryId },
    responses: { 200: ok('Re-enqueued', retried) },
  }),
  create: route('post', '/api/webhooks', 'Subscribe a URL to events', {
    security: 'project',
    idempotent: true,
    request: { body: schema.createSubscriptionSchema, example: { url: 'https://example.com/hooks/formwork', events: ['document.generated'] } },
    responses: { 201: ok('The subscription, with its signing secret shown once', resource('CreatedWebhookSubscription')) },
  }),
  list: route('get', '/api/webhooks', 'List subscriptions', { security: 'project', request: { query: schema.listSubscriptionsSchema }, responses: { 200: ok('A page of subscriptions', pageOf(resource('WebhookSubscription'))) } }),
  get: route('get', '/api/webhooks/:id', 'Get a subscription', { security: 'project', request: { params: id }, responses: { 200: ok('The subscription', resource('WebhookSubscription')) } }),
  update: route('patch', '/api/webhooks/:id', 'Update a subscription', { security: 'project', request: { params: id, body: schema.updateSubscriptionSchema }, responses: { 200: ok('The subscription', resource('WebhookSubscription')) } }),
  delete: route('delete', '/api/webhooks/:id', 'Delete a subscription', { security: 'project', request: { params: id }, responses: { 204: noContent } }),
  listDeliveries: route('get', '/api/webhooks/:id/deliveries', 'Deliveries of a subscription', {
    security: 'project',
    request: { params: id, query: schema.listDeliveriesSchema },
    responses: { 200: ok('A page of deliveries, newest first', pageOf(resource('WebhookDelivery'))) },
  }),
  sendTest: route('post', '/api/webhooks/:id/test', 'Send a test event', {
    security: 'project',
    request: { params: id },
    responses: { 201: { ...ok('The test delivery, sent in the background', testSent), headers: { Location: 'The delivery\'s URL' } } },
  }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const webhookOperations = operationsOf(routes);

export function webhookRoutes(services: Services): Router {
  const { db, config } = services;
  const router = new Router({ prefix: '/api/webhooks' });
  const manage = requireProject(db, { role: 'admin', permission: 'manage_webhooks' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const subscriptionDeps = { db, guard: createOutboundGuard(config.outbound.allowlist) };
  const deliveryDeps = { db, temporal: services.temporal, taskQueues: services.taskQueues, retryDelaysMs: config.webhooks.retryDelaysMs };

  mount(router, routes.getDelivery, manage, async (ctx) => {
    ctx.body = presenter.presentDelivery(await deliveries.getDocumentDelivery(deliveryDeps, scope(ctx).projectId, ctx.params.deliveryId));
  });

  mount(router, routes.retryDelivery, manage, async (ctx) => {
    const { deliveryId } = await deliveries.retryDelivery(deliveryDeps, { projectId: scope(ctx).projectId, deliveryId: ctx.params.deliveryId });
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
    ctx.body = { data: page.map(presenter.presentDelivery), meta: pageMeta(total, query.page, query.limit) };
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
