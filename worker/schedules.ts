import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Services } from './services';

export function maintenanceScheduleId(prefix: string): string {
  return `${prefix}-maintenance`;
}

/**
 * The maintenance schedule (retention of artefacts, restart of stranded work). Created by the
 * worker at start-up; an existing schedule is updated so a changed interval or retention applies.
 */
export async function ensureMaintenanceSchedule(services: Pick<Services, 'temporal' | 'config' | 'taskQueues'>): Promise<void> {
  const { config, temporal, taskQueues } = services;
  const scheduleId = maintenanceScheduleId(config.temporal.taskQueuePrefix);
  const options = {
    spec: { intervals: [{ every: config.documents.maintenanceIntervalSeconds * 1000 }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'documentMaintenanceWorkflow',
      workflowId: `${scheduleId}-run`,
      taskQueue: taskQueues.main,
      args: [{ retentionSeconds: config.documents.retentionSeconds, strandedAfterSeconds: 60, deletionGraceSeconds: config.users.deletionGraceSeconds }],
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

export async function deleteMaintenanceSchedule(client: Client, prefix: string): Promise<void> {
  await client.schedule.getHandle(maintenanceScheduleId(prefix)).delete().catch(() => undefined);
}
