import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks';
import type { DeliveryTarget } from '../../db/webhooks/deliveries';
import type { DeliveryFinalStatus, WebhookEnvelope } from '../../domain/webhooks/delivery';
import { deliverDocumentEvent, dispatchDeliveries } from '../../workflows/webhooks/dispatch-deliveries';

/**
 * Test-only parents of the delivery workflow, bundled by tests/integration/webhooks/dispatch.test.ts
 * for a worker of its own: they call prepareEventDeliveries and then deliverDocumentEvent or
 * dispatchDeliveries the way the document and Flow workflows do.
 */
export { deliverWebhookWorkflow } from '../../workflows/webhooks/deliver-webhook.workflow';

const { prepareEventDeliveries } = proxyActivities<WebhookActivities>({ startToCloseTimeout: '1 minute' });

export async function documentEventTestWorkflow(input: { projectId: string; event: WebhookEnvelope; retryDelaysMs: number[] }): Promise<string[]> {
  const ids = await prepareEventDeliveries({ projectId: input.projectId, source: 'document', event: input.event });
  await deliverDocumentEvent(ids, input.retryDelaysMs);
  return ids;
}

export async function flowEventTestWorkflow(input: {
  projectId: string;
  runId: string;
  event: WebhookEnvelope;
  body: Record<string, unknown>;
  targets: DeliveryTarget[];
  retryDelaysMs: number[];
}): Promise<{ ids: string[]; statuses: DeliveryFinalStatus[] }> {
  const ids = await prepareEventDeliveries({ projectId: input.projectId, source: 'flow', runId: input.runId, event: input.event, body: input.body, targets: input.targets });
  const statuses = await dispatchDeliveries(ids, input.retryDelaysMs, { wait: true, projectId: input.projectId });
  return { ids, statuses };
}
