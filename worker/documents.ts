import type { DocumentActivityDeps } from '../activities/documents';
import { prepareEventDeliveries } from '../db/webhooks/deliveries';
import { workflowIds } from '../domain/temporal-names';
import type { Services } from '../platform/services';
import { startAccountDeletion, startAccountEmail, startDocumentBatch, startDocumentJob } from '../platform/workflow-starts';

/** What the document activities need, from the process's services. */
export function documentActivityDeps(services: Services): DocumentActivityDeps {
  return {
    db: services.db,
    storage: services.storage,
    downloadUrlTtlSeconds: services.config.storage.downloadUrlTtlSeconds,
    prepareDeliveries: (projectId, event) => prepareEventDeliveries(services.db, { projectId, source: 'document', event }),
    // Stranded work restarts through the same launchers the API uses (platform/workflow-starts.ts).
    restartJob: (job) => startDocumentJob(services, job),
    restartBatch: (batch) => startDocumentBatch(services, batch),
    restartVerification: (user) => startAccountEmail(services, { userId: user.id, purpose: 'verify_email' }, workflowIds.signupEmail(user.id)),
    restartDeletion: (user) => startAccountDeletion(services, { userId: user.id, graceSeconds: user.remainingSeconds }),
  };
}
