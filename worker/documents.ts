import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { DocumentActivityDeps } from '../activities/documents';
import { prepareEventDeliveries } from '../db/webhooks/deliveries';
import { workflowIds } from '../domain/temporal-names';
import type { Services } from '../platform/services';
import { startWebhookDelivery } from '../platform/workflow-starts';
import { strandedWorkPort } from './maintenance';

/** What the document activities need, from the process's services. */
export function documentActivityDeps(services: Services): DocumentActivityDeps {
  return {
    db: services.db,
    storage: services.storage,
    downloadUrlTtlSeconds: services.config.storage.downloadUrlTtlSeconds,
    prepareDeliveries: (projectId, event) => prepareEventDeliveries(services.db, { projectId, source: 'document', event }),
    ...strandedWorkPort(services),
    async startDeliveries(projectId, deliveryIds) {
      for (const deliveryId of deliveryIds) {
        const input = { deliveryId, retryDelaysMs: services.config.webhooks.retryDelaysMs };
        try {
          await startWebhookDelivery(services, { projectId, workflowId: workflowIds.webhookDelivery(deliveryId), input, once: true });
        } catch (err) {
          // A retried sweep re-prepares the same deliveries (event ids are derived): started once is enough.
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
      }
    },
  };
}
