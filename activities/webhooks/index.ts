import type { DataSource } from 'typeorm';
import { prepareEventDeliveries, type PrepareDeliveriesInput } from '../../db/webhooks/deliveries';
import { DELIVERY_TIMEOUT_MS } from '../../domain/webhooks/delivery';
import { createOutboundGuard } from '../../adapters/http/outbound';
import { createAbandonDeliveryActivity, createAttemptDeliveryActivity } from './attempt-delivery.activity';
import { createAttemptEventDeliveriesActivity, type StartDeliveryRetry } from './attempt-event-deliveries.activity';

export interface WebhookActivityDeps {
  db: DataSource;
  /** OUTBOUND_ALLOWLIST: private or loopback hosts webhook targets may still reach. */
  outboundAllowlist: string[];
  /** Starts a delivery's workflow for its retries (platform/workflow-starts.ts startWebhookDelivery). */
  startDeliveryRetry: StartDeliveryRetry;
}

/**
 * Webhook delivery activities, shared by document events and Flow runs. Redirects are not
 * followed: a 3xx would turn the POST into a GET and could report a body as delivered that never was.
 */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  const webhookGuard = createOutboundGuard(deps.outboundAllowlist, { maxRedirects: 0, timeoutMs: DELIVERY_TIMEOUT_MS });
  const attemptDelivery = createAttemptDeliveryActivity({ db: deps.db, webhookGuard });
  return {
    attemptDelivery,
    attemptEventDeliveries: createAttemptEventDeliveriesActivity({ attemptDelivery, startDeliveryRetry: deps.startDeliveryRetry }),
    abandonWebhookDelivery: createAbandonDeliveryActivity(deps),
    /** Creates (idempotently) the deliveries of one event; returns their ids for deliverDocumentEvent or dispatchDeliveries. */
    async prepareEventDeliveries(input: PrepareDeliveriesInput): Promise<string[]> {
      return prepareEventDeliveries(deps.db, input);
    },
  };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
