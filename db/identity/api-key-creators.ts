import type { Queryable } from '../sql';

/**
 * The creator side of an API key's state (domain/identity/api-key-state.ts), read in the same
 * query as the key: the membership lookup is the memberships primary key, the user the users
 * primary key, so a call with a key stays one indexed query.
 */
const CREATOR_STATE = `
  (m.user_id IS NOT NULL) AS creator_is_member,
  (u.deletion_status IS NOT NULL) AS creator_pending_deletion`;
const CREATOR_JOINS = `
  LEFT JOIN memberships m ON m.project_id = k.project_id AND m.user_id = k.created_by
  LEFT JOIN users u ON u.id = k.created_by`;

export interface CreatorState {
  creatorIsMember: boolean;
  creatorPendingDeletion: boolean;
}

export interface KeyForCall extends CreatorState {
  id: string;
  projectId: string;
  /** The member who minted the key (the key works only while they are in the project). */
  createdBy: string;
  permissions: Record<string, boolean>;
  isActive: boolean;
  expiresAt: Date | null;
}

/** The key with this SHA-256, with its creator's state; undefined when none. */
export async function findKeyForCall(db: Queryable, keyHash: string): Promise<KeyForCall | undefined> {
  const rows: Array<{ id: string; project_id: string; created_by: string; permissions: Record<string, boolean>; is_active: boolean; expires_at: Date | null; creator_is_member: boolean; creator_pending_deletion: boolean }> =
    await db.query(`SELECT k.id, k.project_id, k.created_by, k.permissions, k.is_active, k.expires_at, ${CREATOR_STATE} FROM api_keys k ${CREATOR_JOINS} WHERE k.key_hash = $1`, [keyHash]);
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    projectId: r.project_id,
    createdBy: r.created_by,
    permissions: r.permissions,
    isActive: r.is_active,
    expiresAt: r.expires_at,
    creatorIsMember: r.creator_is_member,
    creatorPendingDeletion: r.creator_pending_deletion,
  };
}

/** Creator states of the given keys (one query for a page of the key list). */
export async function creatorStates(db: Queryable, keyIds: string[]): Promise<Map<string, CreatorState>> {
  if (keyIds.length === 0) return new Map();
  const rows: Array<{ id: string; creator_is_member: boolean; creator_pending_deletion: boolean }> = await db.query(
    `SELECT k.id, ${CREATOR_STATE} FROM api_keys k ${CREATOR_JOINS} WHERE k.id = ANY($1::uuid[])`,
    [keyIds],
  );
  return new Map(rows.map((r) => [r.id, { creatorIsMember: r.creator_is_member, creatorPendingDeletion: r.creator_pending_deletion }]));
}
