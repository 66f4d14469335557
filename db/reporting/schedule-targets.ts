import type { Queryable } from '../sql';

/**
 * Whether a live (not deleted) schedule, active or paused, targets the report or job: their DELETE
 * answers 409 (ERR_RPT_013 for reports) while one does, so no schedule fires at a deleted target.
 */
export async function isScheduled(db: Queryable, targetType: 'report' | 'job', targetId: string): Promise<boolean> {
  const [row] = await db.query(`SELECT 1 FROM reporting_schedules WHERE target_type = $1 AND target_id = $2 AND deleted_at IS NULL LIMIT 1`, [targetType, targetId]);
  return Boolean(row);
}
