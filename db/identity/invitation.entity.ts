import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from '../../domain/identity/roles';

/** Spec, Invitation: pending, then accepted or rejected by the invitee, or cancelled by the owner. */
export type InvitationStatus = 'pending' | 'accepted' | 'rejected' | 'cancelled';

/** A role an invitation (or a role change) may grant: never `owner`, a project has exactly one. */
export type InvitableRole = Exclude<Role, 'owner'>;

@Entity({ name: 'invitations' })
export class InvitationEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** Lower-cased invitee address; the invitee is whoever signs in with it. */
  @Column('text') email: string;
  @Column('text') role: InvitableRole;
  /** SHA-256 of the accept token e-mailed to the invitee; null until the e-mail is sent. */
  @Column('text', { name: 'token_hash', nullable: true }) tokenHash: string | null;
  @Column('text') status: InvitationStatus;
  @Column('uuid', { name: 'invited_by', nullable: true }) invitedBy: string | null;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'decided_at', nullable: true }) decidedAt: Date | null;
}
