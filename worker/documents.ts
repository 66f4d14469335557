import type { DocumentActivityDeps } from '../activities/documents';
import { launchBatchWorkflow } from '../api/documents/batches.service';
import { launchJobWorkflow } from '../api/documents/documents.service';
import { prepareEventDeliveries } from '../db/webhooks/deliveries';
import type { Services } from './services';

/** What the document activities need, from the process's services. */
export function documentActivityDeps(services: Services): DocumentActivityDeps {
  return {
    db: services.db,
    storage: services.storage,
    downloadUrlTtlSeconds: services.config.storage.downloadUrlTtlSeconds,
    prepareDeliveries: (projectId, event) => prepareEventDeliveries(services.db, { projectId, source: 'document', event }),
    restartJob: (job) => launchJobWorkflow(services, job),
    restartBatch: (batch) => launchBatchWorkflow(services, batch),
  };
}
