import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { scheduleIds, workflowIds } from '../domain/temporal-names';
import type { Workflows } from '../platform/start-workflow';
import type { Services } from '../platform/services';
import { SA_KIND } from '../workflows/shared/search-attributes';

/** What every maintenance run is given: the retention and grace settings of the configuration. */
export function maintenanceInput(config: Services['config']): Parameters<Workflows['maintenanceWorkflow']>[0] {
  return {
    retentionSeconds: config.documents.retentionSeconds,
    strandedAfterSeconds: 60,
    deletionGraceSeconds: config.users.deletionGraceSeconds,
    reportArtefactRetentionDays: config.reporting.artefactRetentionDays,
    reportRunRetentionDays: config.reporting.runRetentionDays,
    reportAgentQueueTimeoutSeconds: config.reporting.agentQueueTimeoutSeconds,
  };
}

/**
 * The maintenance schedule (retention of artefacts, restart of stranded work). Created by the
 * worker at start-up; an existing schedule is updated so a changed interval or retention applies,
 * and so one created by an older release (which started `documentMaintenanceWorkflow`) starts
 * `maintenanceWorkflow` from then on.
 */
export async function ensureMaintenanceSchedule(services: Pick<Services, 'temporal' | 'config' | 'taskQueues'>): Promise<void> {
  const { config, temporal, taskQueues } = services;
  const prefix = config.temporal.taskQueuePrefix;
  const scheduleId = scheduleIds.maintenance(prefix);
  // Typed like `startWorkflow` (platform/start-workflow.ts): the schedule's arguments are the workflow's input.
  const args: Parameters<Workflows['maintenanceWorkflow']> = [maintenanceInput(config)];
  const options = {
    spec: { intervals: [{ every: config.documents.maintenanceIntervalSeconds * 1000 }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'maintenanceWorkflow' satisfies keyof Workflows,
      workflowId: workflowIds.maintenanceRun(prefix),
      taskQueue: taskQueues.main,
      args,
      // Project-less: operators find its runs with FormworkKind = "maintenance".
      typedSearchAttributes: [{ key: SA_KIND, value: 'maintenance' }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
  };
  try {
    await temporal.schedule.create({ scheduleId, ...options });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await temporal.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, ...options }));
  }
}
