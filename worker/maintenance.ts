import { WorkflowNotFoundError } from '@temporalio/client';
import type { StrandedRecord, StrandedWorkPort } from '../activities/maintenance/stranded-records';
import { createAccountMaintenanceActivities } from '../activities/identity/account-maintenance.activity';
import { createIdempotencyActivities } from '../activities/idempotency';
import { createMaintenanceActivities, type MaintenanceActivityDeps } from '../activities/maintenance';
import { workflowIds } from '../domain/temporal-names';
import type { Services } from '../platform/services';
import { startAccountEmail } from '../platform/workflow-starts';

const workflowIdOf: Record<StrandedRecord['kind'], (id: string) => string> = {
  documentJob: workflowIds.documentJob,
  documentMerge: workflowIds.documentJob,
  documentBatch: workflowIds.documentBatch,
  accountDeletion: workflowIds.accountDeletion,
};

/** Temporal as the domains' sweeps of stranded work ask it (activities/maintenance/stranded-records.ts). */
export function strandedWorkPort(services: Pick<Services, 'temporal' | 'outbox'>): StrandedWorkPort {
  return {
    // Stranded work starts through the outbox's launchers, the ones the API uses (platform/workflow-outbox.ts).
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
  };
}

/**
 * The maintenance sweeps not registered with their domain's bundle (identity's, idempotency's, the
 * outbox backstop), and the retired workflow's `restartStrandedWork`, built on `documents`' own sweep.
 */
export function maintenanceActivities(services: Services, documents: Pick<MaintenanceActivityDeps, 'restartStrandedDocuments'>) {
  const accounts = createAccountMaintenanceActivities({
    db: services.db,
    ...strandedWorkPort(services),
    restartVerification: (user) => startAccountEmail(services, { userId: user.id, purpose: 'verify_email' }, workflowIds.signupEmail(user.id)),
  });
  return {
    ...accounts,
    ...createIdempotencyActivities({ db: services.db }),
    ...createMaintenanceActivities({ sweepOutbox: (olderThanMs) => services.outbox.sweep(olderThanMs), ...documents, ...accounts }),
  };
}
