import type { ActivityRow } from '../../db/identity/activity';
import type { InvitationEntity } from '../../db/identity/invitation.entity';
import type { Role } from '../../domain/identity/roles';
import type { InvitationByLink } from './invitations.service';

/** A project as one member sees it. */
export interface ProjectRow {
  id: string;
  name: string;
  slug: string;
  isPersonal: boolean;
  role: Role;
  memberCount: number;
  createdAt: Date;
}

export interface MemberRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
}

export interface MyInvitationRow {
  id: string;
  teamId: string;
  teamName: string;
  role: string;
  invitedBy: string | null;
  expiresAt: Date;
}

/** The spec's project object. */
export function presentProject(p: ProjectRow) {
  return { id: p.id, name: p.name, slug: p.slug, isPersonal: p.isPersonal, role: p.role, memberCount: p.memberCount, createdAt: p.createdAt.toISOString() };
}

/** POST /api/teams answers only what the spec lists. */
export function presentCreatedProject(p: Pick<ProjectRow, 'id' | 'name' | 'slug' | 'createdAt'>) {
  return { id: p.id, name: p.name, slug: p.slug, createdAt: p.createdAt.toISOString() };
}

export function presentMember(m: MemberRow) {
  return { id: m.id, email: m.email, name: m.name, role: m.role, joinedAt: m.joinedAt.toISOString() };
}

export function presentInvitation(i: Pick<InvitationEntity, 'id' | 'email' | 'role' | 'status' | 'expiresAt'>) {
  return { id: i.id, email: i.email, role: i.role, status: i.status, expiresAt: i.expiresAt.toISOString() };
}

/** The invitee's view; `invitedBy` is the inviter's display name (null once that account is gone). */
export function presentMyInvitation(i: MyInvitationRow) {
  return { id: i.id, teamId: i.teamId, teamName: i.teamName, role: i.role, invitedBy: i.invitedBy, expiresAt: i.expiresAt.toISOString() };
}

/** The invitation behind an e-mailed link (GET /api/teams/invitations/:id?token=…). */
export function presentInvitationByLink(i: InvitationByLink) {
  return { id: i.id, teamId: i.teamId, teamName: i.teamName, role: i.role, email: i.email, invitedBy: i.invitedBy, expiresAt: i.expiresAt.toISOString() };
}

const RESERVED = new Set(['type', 'user', 'timestamp']);

/** The entry's own fields, then the event's; event data can never override `type`, `user` or `timestamp`. */
export function presentActivity(a: ActivityRow) {
  const extra = Object.fromEntries(Object.entries(a.data).filter(([k]) => !RESERVED.has(k)));
  return { type: a.type, user: a.user, timestamp: a.createdAt.toISOString(), ...extra };
}
