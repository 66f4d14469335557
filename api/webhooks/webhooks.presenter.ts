import type { WebhookDeliveryEntity } from '../../db/webhooks/webhook-delivery.entity';
import type { WebhookSubscriptionEntity } from '../../db/webhooks/webhook-subscription.entity';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

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

/**
 * Contract §5 delivery record `{id, runId, url, status, attempts, nextAttemptAt}`, plus what a
 * document subscriber needs to match it to an event. Flow presents it through this too.
 */
export function presentDelivery(d: WebhookDeliveryEntity) {
  return {
    id: d.id,
    ...(d.source === 'flow' ? { runId: d.runId } : { subscriptionId: d.subscriptionId }),
    url: d.url,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: iso(d.nextAttemptAt),
    payload: d.payload,
    createdAt: d.createdAt.toISOString(),
    completedAt: iso(d.completedAt),
  };
}
