import type { Queryable } from '../sql';

/**
 * Whether a live (not deleted) schedule, active or paused, targets the report or job: their DELETE
 * answers 409 (ERR_RPT_013 for reports) while one does, so no schedule fires at a deleted target.
 */
export async function isScheduled(db: Queryable, targetType: 'report' | 'job', targetId: string): Promise<boolean> {
  const [row] = await db.query(`SELECT 1 FROM reporting_schedules WHERE target_type = $1 AND target_id = $2 AND deleted_at IS NULL LIMIT 1`, [targetType, targetId]);
  return Boolean(row);
}

/** Whether a live job runs the report (one of its items names it): the report's DELETE answers 409 ERR_RPT_013 while one does. */
export async function isJobItem(db: Queryable, projectId: string, reportId: string): Promise<boolean> {
  const [row] = await db.query(`SELECT 1 FROM reporting_jobs WHERE project_id = $1 AND deleted_at IS NULL AND items @> $2::jsonb LIMIT 1`, [projectId, JSON.stringify([{ reportId }])]);
  return Boolean(row);
}
