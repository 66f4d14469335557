import type { DataSource } from 'typeorm';
import type { ArtefactStorage } from '../../adapters/storage/storage';

export interface PurgeSummary {
  /** False when the user row was already gone (a retry after a purge whose result was lost). */
  found: boolean;
  projectsDeleted: number;
}

/**
 * Removes everything of a user whose grace period ended. Projects the user owns with no other
 * owner go entirely, soft-deleted ones included (whatever hangs off a project is removed by its
 * ON DELETE CASCADE); projects with another owner are handed to that owner. Then memberships,
 * API keys the user created, tokens, backup codes and finally the user row.
 *
 * The avatar file is deleted before the rows: if the transaction then fails, the retry still
 * finds the key and deletes again (idempotent); the other order could lose the key and leave
 * the file behind for good.
 */
export async function purgeUserData(db: DataSource, storage: ArtefactStorage, userId: string): Promise<PurgeSummary> {
  const [user] = (await db.query(`SELECT avatar_key FROM users WHERE id = $1`, [userId])) as { avatar_key: string | null }[];
  if (!user) return { found: false, projectsDeleted: 0 };
  if (user.avatar_key) await storage.delete(user.avatar_key);

  return db.transaction(async (m) => {
    const doomed = (await m.query(
      `SELECT p.id FROM projects p
        WHERE (p.owner_id = $1 OR EXISTS (SELECT 1 FROM memberships mine WHERE mine.project_id = p.id AND mine.user_id = $1 AND mine.role = 'owner'))
          AND NOT EXISTS (SELECT 1 FROM memberships other WHERE other.project_id = p.id AND other.user_id <> $1 AND other.role = 'owner')
        FOR UPDATE`,
      [userId],
    )) as { id: string }[];
    const ids = doomed.map((p) => p.id);
    if (ids.length > 0) await m.query(`DELETE FROM projects WHERE id = ANY($1::uuid[])`, [ids]);
    // projects.owner_id cascades on user deletion: hand the remaining ones to their longest-standing other owner.
    await m.query(
      `UPDATE projects p SET owner_id = (
          SELECT o.user_id FROM memberships o WHERE o.project_id = p.id AND o.user_id <> $1 AND o.role = 'owner' ORDER BY o.joined_at LIMIT 1),
        updated_at = now()
        WHERE p.owner_id = $1`,
      [userId],
    );
    for (const sql of [
      `DELETE FROM api_keys WHERE created_by = $1`,
      `DELETE FROM memberships WHERE user_id = $1`,
      `DELETE FROM refresh_tokens WHERE user_id = $1`,
      `DELETE FROM email_tokens WHERE user_id = $1`,
      `DELETE FROM backup_codes WHERE user_id = $1`,
      `DELETE FROM users WHERE id = $1`,
    ]) {
      await m.query(sql, [userId]);
    }
    return { found: true, projectsDeleted: ids.length };
  });
}
