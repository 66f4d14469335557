import { noContent, ok, operationTable, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import * as schema from './webhooks.schema';

/** OpenAPI operations of webhook subscriptions and deliveries (api/webhooks/webhooks.routes.ts); keys need `manage_webhooks`. */
const id = { id: 'The subscription id' };
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

export const webhookOperations = operationTable('Webhooks', (op) => [
  op('get', '/api/webhooks/deliveries/:deliveryId', 'Get a delivery', { security: 'project', request: { params: { deliveryId: 'The delivery id' } }, responses: { 200: ok('The delivery with its attempts', resource('WebhookDelivery')) } }),
  op('post', '/api/webhooks/deliveries/:deliveryId/retry', 'Deliver again', {
    description: 'A failed delivery only, to the subscription\'s current URL and secret, with a full new retry schedule.',
    security: 'project',
    request: { params: { deliveryId: 'The delivery id' } },
    responses: { 200: ok('Re-enqueued', retried) },
  }),
  op('post', '/api/webhooks', 'Subscribe a URL to events', {
    security: 'project',
    idempotent: true,
    request: { body: schema.createSubscriptionSchema, example: { url: 'https://example.com/hooks/formwork', events: ['document.generated'] } },
    responses: { 201: ok('The subscription, with its signing secret shown once', resource('CreatedWebhookSubscription')) },
  }),
  op('get', '/api/webhooks', 'List subscriptions', { security: 'project', request: { query: schema.listSubscriptionsSchema }, responses: { 200: ok('A page of subscriptions', pageOf(resource('WebhookSubscription'))) } }),
  op('get', '/api/webhooks/:id', 'Get a subscription', { security: 'project', request: { params: id }, responses: { 200: ok('The subscription', resource('WebhookSubscription')) } }),
  op('patch', '/api/webhooks/:id', 'Update a subscription', { security: 'project', request: { params: id, body: schema.updateSubscriptionSchema }, responses: { 200: ok('The subscription', resource('WebhookSubscription')) } }),
  op('delete', '/api/webhooks/:id', 'Delete a subscription', { security: 'project', request: { params: id }, responses: { 204: noContent } }),
  op('get', '/api/webhooks/:id/deliveries', 'Deliveries of a subscription', { security: 'project', request: { params: id, query: schema.listDeliveriesSchema }, responses: { 200: ok('A page of deliveries, newest first', pageOf(resource('WebhookDelivery'))) } }),
  op('post', '/api/webhooks/:id/test', 'Send a test event', {
    security: 'project',
    request: { params: id },
    responses: { 201: { ...ok('The test delivery, sent in the background', testSent), headers: { Location: 'The delivery\'s URL' } } },
  }),
]);
