import type { DataSource } from 'typeorm';
import { recordActivity } from '../../db/identity/activity';
import type { InvitableRole } from '../../domain/identity/account.types';
import type { Queryable } from '../../db/sql';
import { AppError } from '../../domain/errors';
import type { MemberRow } from './teams.presenter';
import { isUuid } from '../../domain/ids';

/**
 * Members of the caller's active project. The route's guard resolved the project and checked the
 * caller's role; these functions only act on that project's rows.
 */

const MEMBER_SELECT = `
  SELECT u.id, u.email, u.name, m.role, m.joined_at AS "joinedAt"
    FROM memberships m JOIN users u ON u.id = m.user_id
   WHERE m.project_id = $1`;

/** Oldest member (the owner, normally) first. */
export async function listMembers(db: Queryable, projectId: string): Promise<MemberRow[]> {
  return db.query(`${MEMBER_SELECT} ORDER BY m.joined_at, u.email`, [projectId]);
}

async function findMember(db: Queryable, projectId: string, userId: string, lock = false): Promise<MemberRow> {
  const [row] = isUuid(userId) ? ((await db.query(`${MEMBER_SELECT} AND m.user_id = $2${lock ? ' FOR UPDATE OF m' : ''}`, [projectId, userId])) as MemberRow[]) : [];
  if (!row) throw new AppError('ERR_TEAM_011');
  return row;
}

export interface MemberChange {
  projectId: string;
  /** The caller (the owner: the guard allows no one else). */
  actorId: string;
  /** User id of the member acted on. */
  memberId: string;
}

/** Removes a member. The owner cannot remove themselves (ERR_TEAM_012): a project keeps its owner. */
export async function removeMember(db: DataSource, input: MemberChange): Promise<void> {
  if (input.memberId === input.actorId) throw new AppError('ERR_TEAM_012');
  await db.transaction(async (m) => {
    const member = await findMember(m, input.projectId, input.memberId, true);
    await m.query(`DELETE FROM memberships WHERE project_id = $1 AND user_id = $2`, [input.projectId, member.id]);
    await recordActivity(m, {
      projectId: input.projectId,
      userId: input.actorId,
      type: 'member_removed',
      data: { member: { id: member.id, name: member.name, email: member.email }, role: member.role },
    });
  });
}

/**
 * Gives a member another role (admin, member or viewer). The owner's own role cannot change
 * (ERR_TEAM_013): that would leave the project without anyone allowed to delete it.
 */
export async function changeRole(db: DataSource, input: MemberChange & { role: InvitableRole }): Promise<MemberRow> {
  if (input.memberId === input.actorId) throw new AppError('ERR_TEAM_013');
  return db.transaction(async (m) => {
    const member = await findMember(m, input.projectId, input.memberId, true);
    if (member.role === 'owner') throw new AppError('ERR_TEAM_013');
    if (member.role === input.role) return member;
    await m.query(`UPDATE memberships SET role = $3 WHERE project_id = $1 AND user_id = $2`, [input.projectId, member.id, input.role]);
    await recordActivity(m, {
      projectId: input.projectId,
      userId: input.actorId,
      type: 'role_changed',
      data: { member: { id: member.id, name: member.name, email: member.email }, from: member.role, to: input.role },
    });
    return { ...member, role: input.role };
  });
}
