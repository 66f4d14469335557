import { randomUUID } from 'node:crypto';
import type { MaintenanceInput, maintenanceWorkflow } from '../../workflows/maintenance/maintenance.workflow';
import type { TestApp } from './app';

/**
 * Runs the maintenance workflow once on the app's main queue, as its schedule would (worker/schedules.ts),
 * and resolves to its tally. The input comes from the app's configuration, with stranded work after 60 s,
 * unless the test says otherwise.
 */
export function runMaintenance(app: TestApp, input: Partial<MaintenanceInput> = {}) {
  const { config } = app.services;
  return app.services.temporal.workflow.execute<typeof maintenanceWorkflow>('maintenanceWorkflow', {
    taskQueue: app.services.taskQueues.main,
    workflowId: `maintenance-test-${randomUUID()}`,
    args: [
      {
        retentionSeconds: config.documents.retentionSeconds,
        strandedAfterSeconds: 60,
        deletionGraceSeconds: config.users.deletionGraceSeconds,
        reportArtefactRetentionDays: config.reporting.artefactRetentionDays,
        reportRunRetentionDays: config.reporting.runRetentionDays,
        reportAgentQueueTimeoutSeconds: config.reporting.agentQueueTimeoutSeconds,
        ...input,
      },
    ],
  });
}
