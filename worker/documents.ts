import type { DocumentActivityDeps } from '../activities/documents';
import { launchBatchWorkflow } from '../api/documents/batches.service';
import { launchJobWorkflow } from '../api/documents/documents.service';
import { sendAccountEmail } from '../api/identity/auth.service';
import { prepareEventDeliveries } from '../db/webhooks/deliveries';
import { workflowIds } from '../domain/temporal-names';
import type { Services } from './services';
import { startProductWorkflow } from './temporal';

/** What the document activities need, from the process's services. */
export function documentActivityDeps(services: Services): DocumentActivityDeps {
  return {
    db: services.db,
    storage: services.storage,
    downloadUrlTtlSeconds: services.config.storage.downloadUrlTtlSeconds,
    prepareDeliveries: (projectId, event) => prepareEventDeliveries(services.db, { projectId, source: 'document', event }),
    restartJob: (job) => launchJobWorkflow(services, job),
    restartBatch: (batch) => launchBatchWorkflow(services, batch),
    restartVerification: (user) => sendAccountEmail(services, user.id, 'verify_email', workflowIds.signupEmail(user.id)),
    restartDeletion: (user) =>
      startProductWorkflow(services.temporal, 'deleteAccountWorkflow', {
        taskQueue: services.taskQueues.main,
        workflowId: workflowIds.accountDeletion(user.id),
        args: [{ userId: user.id, graceSeconds: user.remainingSeconds }],
        kind: 'account-deletion',
        entityId: user.id,
      }),
  };
}
