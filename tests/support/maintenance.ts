import { randomUUID } from 'node:crypto';
import type { MaintenanceInput, maintenanceWorkflow } from '../../workflows/maintenance/maintenance.workflow';
import { maintenanceInput } from '../../worker/schedules';
import type { TestApp } from './app';

/**
 * Runs the maintenance workflow once on the app's main queue, as its schedule would (worker/schedules.ts),
 * and resolves to its tally. The input comes from the app's configuration, with stranded work after 60 s,
 * unless the test says otherwise.
 */
export function runMaintenance(app: TestApp, input: Partial<MaintenanceInput> = {}) {
  return app.services.temporal.workflow.execute<typeof maintenanceWorkflow>('maintenanceWorkflow', {
    taskQueue: app.services.taskQueues.main,
    workflowId: `maintenance-test-${randomUUID()}`,
    args: [{ ...maintenanceInput(app.services.config), ...input }],
  });
}
