import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { InvitableRole, InvitationStatus } from '../../domain/identity/account.types';

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
  /** True while the invitation e-mail's workflow has to be started (platform/workflow-outbox.ts). */
  @Column('boolean', { name: 'workflow_pending', default: false }) workflowPending: boolean;
  @Column('timestamptz', { name: 'workflow_started_at', nullable: true }) workflowStartedAt: Date | null;
}
