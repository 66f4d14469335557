import type { Queryable } from '../sql';

/** What still names a channel: live report jobs and schedules. */
export interface ChannelUsage {
  jobs: number;
  schedules: number;
}

/**
 * Who uses channel `channelId` of `projectId` (DELETE /api/reporting/channels/:id answers 409
 * ERR_CHAN_004 while anything does). Jobs and schedules: live (`deleted_at IS NULL`) rows whose
 * `channel_ids` names it. Runs already under way keep their own copy of the ids and are not counted.
 */
export async function channelUsage(db: Queryable, projectId: string, channelId: string): Promise<ChannelUsage> {
  const [{ n: jobs }] = await db.query(
    `SELECT count(*)::int AS n FROM reporting_jobs WHERE project_id = $1 AND deleted_at IS NULL AND channel_ids @> $2::jsonb`,
    [projectId, JSON.stringify([channelId])],
  );
  // Paused schedules count too: resuming one would deliver to the channel again.
  const [{ n: schedules }] = await db.query(
    `SELECT count(*)::int AS n FROM reporting_schedules WHERE project_id = $1 AND deleted_at IS NULL AND channel_ids @> $2::jsonb`,
    [projectId, JSON.stringify([channelId])],
  );
  return { jobs, schedules };
}
