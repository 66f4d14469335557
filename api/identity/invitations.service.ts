import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { recordActivity } from '../../db/identity/activity';
import { InvitationEntity } from '../../db/identity/invitation.entity';
import type { InvitableRole } from '../../domain/identity/account.types';
import type { UserEntity } from '../../db/identity/user.entity';
import { isUniqueViolation, type Queryable } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { sha256Hex } from '../../domain/signing';
import type { Services } from '../../platform/services';
import type { MyInvitationRow } from './teams.presenter';

import type { InvitationView } from './account-pages.html';
import { isUuid } from '../../domain/ids';

export type InvitationDeps = Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'config' | 'outbox'>;

export interface InviteInput {
  projectId: string;
  /** The caller; the guard has checked they are an admin or the owner of the project. */
  inviter: UserEntity;
  email: string;
  role: InvitableRole;
}

/**
 * Invites an address into the project and e-mails it a link through a workflow (so an SMTP outage
 * delays the e-mail instead of failing the call). An earlier invitation to the same address that
 * expired unanswered is cancelled first, so it can be sent again.
 */
export async function invite(deps: InvitationDeps, input: InviteInput): Promise<InvitationEntity> {
  if (!input.inviter.emailVerifiedAt) throw new AppError('ERR_AUTH_006');
  const now = new Date();
  const invitation: InvitationEntity = Object.assign(new InvitationEntity(), {
    id: randomUUID(),
    projectId: input.projectId,
    email: input.email,
    role: input.role,
    tokenHash: null,
    status: 'pending',
    invitedBy: input.inviter.id,
    expiresAt: new Date(now.getTime() + deps.config.teams.invitationTtlSeconds * 1000),
    createdAt: now,
    decidedAt: null,
    workflowPending: true,
    workflowStartedAt: null,
  });
  try {
    await deps.db.transaction(async (m) => {
      const member = await m.query(
        `SELECT 1 FROM memberships ms JOIN users u ON u.id = ms.user_id WHERE ms.project_id = $1 AND u.email = $2`,
        [input.projectId, input.email],
      );
      if (member.length > 0) throw new AppError('ERR_TEAM_007', undefined, { field: 'email' });
      await m.query(
        `UPDATE invitations SET status = 'cancelled', decided_at = now()
          WHERE project_id = $1 AND email = $2 AND status = 'pending' AND expires_at <= now()`,
        [input.projectId, input.email],
      );
      const open = await m.query(`SELECT 1 FROM invitations WHERE project_id = $1 AND email = $2 AND status = 'pending'`, [input.projectId, input.email]);
      if (open.length > 0) throw new AppError('ERR_TEAM_008', undefined, { field: 'email' });
      await m.getRepository(InvitationEntity).insert(invitation);
      await recordActivity(m, {
        projectId: input.projectId,
        userId: input.inviter.id,
        type: 'invitation_sent',
        data: { invitation: { id: invitation.id, email: invitation.email, role: invitation.role } },
      });
    });
  } catch (err) {
    // A concurrent invite of the same address won the partial unique index.
    if (isUniqueViolation(err)) throw new AppError('ERR_TEAM_008', undefined, { field: 'email' });
    throw err;
  }
  // The e-mail's workflow starts after commit, off the request path (platform/workflow-outbox.ts).
  deps.outbox.start({ kind: 'invitation', id: invitation.id, projectId: input.projectId });
  return invitation;
}

/** Pending, unexpired invitations of the active project (for the owner and admins). */
export async function listProjectInvitations(db: Queryable, projectId: string): Promise<InvitationEntity[]> {
  return db
    .getRepository(InvitationEntity)
    .createQueryBuilder('i')
    .where(`i.project_id = :projectId AND i.status = 'pending' AND i.expires_at > now()`, { projectId })
    .orderBy('i.created_at', 'DESC')
    .getMany();
}

/**
 * Invitations waiting for the caller. Only for a verified address: anyone can sign up with an
 * address they do not own, and must not learn which projects invited it.
 */
export async function listMyInvitations(db: Queryable, user: UserEntity): Promise<MyInvitationRow[]> {
  if (!user.emailVerifiedAt) throw new AppError('ERR_AUTH_006');
  return db.query(
    `SELECT i.id, i.project_id AS "teamId", p.name AS "teamName", i.role, u.name AS "invitedBy", i.expires_at AS "expiresAt"
       FROM invitations i
       JOIN projects p ON p.id = i.project_id AND p.deleted_at IS NULL
       LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.email = $1 AND i.status = 'pending' AND i.expires_at > now()
      ORDER BY i.created_at DESC`,
    [user.email],
  );
}

export interface DecideInput {
  user: UserEntity;
  invitationId: string;
  /** The token from the e-mailed link: proves the caller reads that mailbox. */
  token?: string;
}

interface PendingRow {
  id: string;
  project_id: string;
  email: string;
  role: InvitableRole;
  token_hash: string | null;
  status: string;
  expires_at: Date;
}

function sameToken(token: string, hash: string | null): boolean {
  return hash !== null && timingSafeEqual(Buffer.from(sha256Hex(token), 'hex'), Buffer.from(hash, 'hex'));
}

/**
 * Accepts or rejects an invitation addressed to the caller. Someone else's, decided or unknown is
 * ERR_TEAM_009 alike (nothing to probe). Accepting needs a verified account (ERR_AUTH_006) and the
 * e-mailed token (issue 29: a verified address alone used to accept any invitation to it; a missing
 * token is 400 ERR_AUTH_007 with `field: "token"`); declining needs the e-mailed token or a verified
 * account; a wrong token is ERR_AUTH_007.
 */
async function decide(db: DataSource, input: DecideInput, decision: 'accepted' | 'rejected'): Promise<void> {
  if (!isUuid(input.invitationId)) throw new AppError('ERR_TEAM_009');
  await db.transaction(async (m) => {
    const [inv] = (await m.query(
      `SELECT i.id, i.project_id, i.email, i.role, i.token_hash, i.status, i.expires_at
         FROM invitations i JOIN projects p ON p.id = i.project_id AND p.deleted_at IS NULL
        WHERE i.id = $1 FOR UPDATE OF i`,
      [input.invitationId],
    )) as PendingRow[];
    if (!inv || inv.email !== input.user.email || inv.status !== 'pending') throw new AppError('ERR_TEAM_009');
    if (input.token !== undefined) {
      if (!sameToken(input.token, inv.token_hash)) throw new AppError('ERR_AUTH_007', 'Invalid invitation token');
    } else if (!input.user.emailVerifiedAt) {
      throw new AppError('ERR_AUTH_006', 'Verify your e-mail address, or decline with the token from the invitation e-mail');
    }
    // Joining needs a verified account with the invited address (docs/identity.md): the e-mailed
    // token alone only proves someone read the mailbox, not that this account's owner did.
    if (decision === 'accepted' && !input.user.emailVerifiedAt) {
      throw new AppError('ERR_AUTH_006', 'Verify your e-mail address before accepting an invitation');
    }
    // …and the token of the e-mailed link: the invitation is for whoever reads that message, and an
    // accept without it would act on an invitation the caller may never have seen.
    if (decision === 'accepted' && input.token === undefined) {
      throw new AppError('ERR_AUTH_007', 'Accepting an invitation needs the token from the invitation e-mail', { field: 'token' });
    }
    if (new Date(inv.expires_at).getTime() <= Date.now()) throw new AppError('ERR_TEAM_010');
    await m.query(`UPDATE invitations SET status = $2, decided_at = now() WHERE id = $1`, [inv.id, decision]);
    if (decision === 'rejected') {
      await recordActivity(m, {
        projectId: inv.project_id,
        userId: input.user.id,
        type: 'invitation_rejected',
        data: { invitation: { id: inv.id, email: inv.email, role: inv.role } },
      });
      return;
    }
    const joined = await m.query(
      `INSERT INTO memberships (project_id, user_id, role, joined_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (project_id, user_id) DO NOTHING RETURNING user_id`,
      [inv.project_id, input.user.id, inv.role],
    );
    // Already a member (added by another invitation meanwhile): the invitation is used up, nothing joins.
    if (joined.length > 0) {
      await recordActivity(m, { projectId: inv.project_id, userId: input.user.id, type: 'member_joined', data: { role: inv.role, invitationId: inv.id } });
    }
  });
}

/** A pending, unexpired invitation whose e-mailed token matches, as the invitation page shows it. */
export async function invitationForPage(db: Queryable, invitationId: string, token: string): Promise<InvitationView | undefined> {
  const inv = await pendingByLink(db, invitationId, token);
  return inv && inv.expiresAt.getTime() > Date.now() ? inv : undefined;
}

export interface InvitationByLink extends InvitationView {
  teamId: string;
  invitedBy: string | null;
}

/**
 * `GET /api/teams/invitations/:id?token=…`: the invitation behind an e-mailed link, for whoever holds
 * the link (signed in or not), as the invitation page shows it; nothing changes. Unknown, answered,
 * withdrawn, of a deleted project or a token that does not match: ERR_TEAM_009 alike; expired (with the
 * right token): ERR_TEAM_010.
 */
export async function invitationByLink(db: Queryable, invitationId: string, token: string): Promise<InvitationByLink> {
  const inv = await pendingByLink(db, invitationId, token);
  if (!inv) throw new AppError('ERR_TEAM_009');
  if (inv.expiresAt.getTime() <= Date.now()) throw new AppError('ERR_TEAM_010');
  return inv;
}

async function pendingByLink(db: Queryable, invitationId: string, token: string): Promise<InvitationByLink | undefined> {
  if (!isUuid(invitationId)) return undefined;
  const [row] = await db.query(
    `SELECT i.id, i.project_id, i.email, i.role, i.token_hash, i.expires_at, p.name AS team_name, u.name AS invited_by
       FROM invitations i
       JOIN projects p ON p.id = i.project_id AND p.deleted_at IS NULL
       LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.id = $1 AND i.status = 'pending'`,
    [invitationId],
  );
  if (!row || !sameToken(token, row.token_hash)) return undefined;
  return { id: row.id, teamId: row.project_id, email: row.email, role: row.role, teamName: row.team_name, invitedBy: row.invited_by ?? null, expiresAt: new Date(row.expires_at) };
}

export const acceptInvitation = (db: DataSource, input: DecideInput) => decide(db, input, 'accepted');
export const rejectInvitation = (db: DataSource, input: DecideInput) => decide(db, input, 'rejected');

/** The owner withdraws a pending invitation of the active project; its link stops working. */
export async function cancelInvitation(db: DataSource, input: { projectId: string; actorId: string; invitationId: string }): Promise<void> {
  if (!isUuid(input.invitationId)) throw new AppError('ERR_TEAM_009');
  await db.transaction(async (m) => {
    const [inv] = (await m.query(
      `SELECT id, email, role FROM invitations WHERE id = $1 AND project_id = $2 AND status = 'pending' FOR UPDATE`,
      [input.invitationId, input.projectId],
    )) as Array<{ id: string; email: string; role: string }>;
    if (!inv) throw new AppError('ERR_TEAM_009');
    await m.query(`UPDATE invitations SET status = 'cancelled', decided_at = now() WHERE id = $1`, [inv.id]);
    await recordActivity(m, { projectId: input.projectId, userId: input.actorId, type: 'invitation_cancelled', data: { invitation: inv } });
  });
}
