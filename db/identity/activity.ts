import { randomUUID } from 'node:crypto';
import type { Queryable } from '../sql';

/**
 * The project activity feed. Every domain records its own events here (templates record
 * `template_created` with `data: { template: { id, name } }`, and so on); pass the transaction's
 * EntityManager so the entry commits or rolls back with the change it describes.
 */

/** Types recorded by the projects domain; other domains add their own (`template_created`, ...). */
export type ActivityType =
  | 'project_created'
  | 'project_updated'
  | 'member_joined'
  | 'member_removed'
  | 'role_changed'
  | 'invitation_sent'
  | 'invitation_cancelled'
  | 'invitation_rejected'
  | (string & {});

export interface ActivityInput {
  projectId: string;
  /** The user who acted; null for system events. */
  userId: string | null;
  type: ActivityType;
  /** Extra fields of the entry. `type`, `user` and `timestamp` are reserved and cannot be overridden. */
  data?: Record<string, unknown>;
}

export async function recordActivity(db: Queryable, input: ActivityInput): Promise<void> {
  // created_at is left to the database's clock_timestamp(): entries written in one transaction
  // get distinct, increasing times, so "newest first" is exact.
  await db.query(`INSERT INTO activities (id, project_id, user_id, type, data) VALUES ($1, $2, $3, $4, $5)`, [
    randomUUID(),
    input.projectId,
    input.userId,
    input.type,
    JSON.stringify(input.data ?? {}),
  ]);
}

export interface ActivityRow {
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  user: { id: string; name: string; email: string } | null;
}

/** Newest first: `limit` entries from the `offset`-th on, and how many the project has. */
export async function listActivities(db: Queryable, projectId: string, limit: number, offset = 0): Promise<{ rows: ActivityRow[]; total: number }> {
  const rows: Array<{ type: string; data: Record<string, unknown>; created_at: Date; user_id: string | null; name: string | null; email: string | null }> =
    await db.query(
      `SELECT a.type, a.data, a.created_at, u.id AS user_id, u.name, u.email
         FROM activities a LEFT JOIN users u ON u.id = a.user_id
        WHERE a.project_id = $1
        ORDER BY a.created_at DESC, a.id
        LIMIT $2 OFFSET $3`,
      [projectId, limit, offset],
    );
  const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM activities WHERE project_id = $1`, [projectId]);
  return {
    rows: rows.map((r) => ({
      type: r.type,
      data: r.data,
      createdAt: r.created_at,
      user: r.user_id ? { id: r.user_id, name: r.name!, email: r.email! } : null,
    })),
    total: n as number,
  };
}
