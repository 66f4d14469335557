import { noContent, ok, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { operationsOf, routeTable } from '../openapi/route';
import * as schema from './webhooks.schema';

/**
 * The webhooks routes' declarations (docs/architecture.md "One declaration per route"): each is the
 * route's OpenAPI operation, its body and query schemas, and so its handler's input type;
 * webhooks.routes.ts mounts them with their handlers. Apart from the handlers, so that the OpenAPI
 * document is built without loading the services (and the unit tests reach no database code).
 * Keys need `manage_webhooks`.
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
export const webhookEndpoints = {
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
export const webhookOperations = operationsOf(webhookEndpoints);

