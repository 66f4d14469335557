import type { Queryable } from '../sql';

/** What still names a channel: live report jobs and (with schedules) schedules. */
export interface ChannelUsage {
  jobs: number;
  schedules: number;
}

/**
 * Who uses channel `channelId` of `projectId` (DELETE /api/reporting/channels/:id answers 409
 * ERR_CHAN_004 while anything does). Jobs: live (`deleted_at IS NULL`) rows whose `channel_ids`
 * names it. Runs already under way keep their own copy of the ids and are not counted.
 */
export async function channelUsage(db: Queryable, projectId: string, channelId: string): Promise<ChannelUsage> {
  const [{ n: jobs }] = await db.query(
    `SELECT count(*)::int AS n FROM reporting_jobs WHERE project_id = $1 AND deleted_at IS NULL AND channel_ids @> $2::jsonb`,
    [projectId, JSON.stringify([channelId])],
  );
  // Schedules (reporting_schedules, its own migration) are counted here once that table exists.
  const schedules = 0;
  return { jobs, schedules };
}
