import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { DocumentActivityDeps, StrandedRecord } from '../activities/documents';
import { prepareEventDeliveries } from '../db/webhooks/deliveries';
import { workflowIds } from '../domain/temporal-names';
import type { Services } from '../platform/services';
import { startAccountEmail, startWebhookDelivery } from '../platform/workflow-starts';

const workflowIdOf: Record<StrandedRecord['kind'], (id: string) => string> = {
  documentJob: workflowIds.documentJob,
  documentMerge: workflowIds.documentJob,
  documentBatch: workflowIds.documentBatch,
  accountDeletion: workflowIds.accountDeletion,
};

/** What the document activities need, from the process's services. */
export function documentActivityDeps(services: Services): DocumentActivityDeps {
  return {
    db: services.db,
    storage: services.storage,
    downloadUrlTtlSeconds: services.config.storage.downloadUrlTtlSeconds,
    prepareDeliveries: (projectId, event) => prepareEventDeliveries(services.db, { projectId, source: 'document', event }),
    // Stranded work starts through the outbox's launchers, the ones the API uses (platform/workflow-outbox.ts).
    sweepOutbox: (olderThanMs) => services.outbox.sweep(olderThanMs),
    startWorkflowOf: (record, options) => services.outbox.startNow(record, options),
    async workflowStateOf(record) {
      try {
        const described = await services.temporal.workflow.getHandle(workflowIdOf[record.kind](record.id)).describe();
        return described.status.name === 'RUNNING' ? 'running' : 'closed';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return 'missing';
        throw err;
      }
    },
    async runningAmong(kind, ids) {
      const byWorkflowId = new Map(ids.map((id) => [workflowIdOf[kind](id), id]));
      // Workflow ids are ours (a prefix and a uuid): nothing in them needs more than quoting.
      const list = [...byWorkflowId.keys()].map((w) => `'${w.replace(/'/g, "''")}'`).join(', ');
      const running = new Set<string>();
      for await (const w of services.temporal.workflow.list({ query: `WorkflowId IN (${list}) AND ExecutionStatus = 'Running'` })) {
        const id = byWorkflowId.get(w.workflowId);
        if (id) running.add(id);
      }
      return running;
    },
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
    restartVerification: (user) => startAccountEmail(services, { userId: user.id, purpose: 'verify_email' }, workflowIds.signupEmail(user.id)),
  };
}
