import type { WebhookSubscriptionEntity } from '../../db/webhooks/webhook-subscription.entity';

/** A subscription as listed and read: never its secret. */
export function presentSubscription(s: WebhookSubscriptionEntity) {
  return {
    id: s.id,
    teamId: s.projectId,
    url: s.url,
    events: s.events,
    description: s.description,
    isActive: s.isActive,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** The create response: the only time the signing secret is shown. */
export function presentCreatedSubscription(s: WebhookSubscriptionEntity) {
  return { ...presentSubscription(s), secret: s.secret };
}

/** A delivery record, as every delivery API presents it (api/deliveries/delivery.presenter.ts). */
export { presentWebhookDelivery as presentDelivery } from '../deliveries/delivery.presenter';
