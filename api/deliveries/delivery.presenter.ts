import type { ReportDeliveryEntity } from '../../db/reporting/delivery.entity';
import type { WebhookDeliveryEntity } from '../../db/webhooks/webhook-delivery.entity';

/**
 * The delivery records of the three APIs (document webhooks, Flow deliveries, report deliveries):
 * what it is sent to, then what every record shows alike, its status, attempts and times.
 */

const iso = (d: Date | null) => d?.toISOString() ?? null;

const progress = (d: WebhookDeliveryEntity | ReportDeliveryEntity) => ({ status: d.status, attempts: d.attempts, nextAttemptAt: iso(d.nextAttemptAt) });

/**
 * Contract §5 delivery record `{id, runId, url, status, attempts, nextAttemptAt}`, plus what a
 * document subscriber needs to match it to an event. Flow presents it through this too.
 */
export function presentWebhookDelivery(d: WebhookDeliveryEntity) {
  return {
    id: d.id,
    ...(d.source === 'flow' ? { runId: d.runId } : { subscriptionId: d.subscriptionId }),
    url: d.url,
    eventId: d.eventId,
    eventType: d.eventType,
    ...progress(d),
    payload: d.payload,
    createdAt: d.createdAt.toISOString(),
    completedAt: iso(d.completedAt),
  };
}

/** A report delivery (docs/reporting.md "Deliveries"): a masked target only. */
export function presentReportDelivery(d: ReportDeliveryEntity) {
  return {
    id: d.id,
    shortId: d.shortId,
    runId: d.runId,
    jobRunId: d.jobRunId,
    channelId: d.channelId,
    kind: d.kind,
    target: d.target,
    ...progress(d),
    remoteRef: d.remoteRef,
    note: d.note,
    createdAt: d.createdAt.toISOString(),
    completedAt: iso(d.completedAt),
  };
}
