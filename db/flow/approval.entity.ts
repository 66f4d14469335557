import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ApprovalStatus } from '../../domain/flow/approval-status';

/** One approver's say on one run (spec, Approval). `expired`: the window closed, or the run was decided without it. */
@Entity({ name: 'flow_approvals' })
export class ApprovalEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'run_id' }) runId: string;
  @Column('uuid', { name: 'gate_id' }) gateId: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** Lower-case: the identity an external approver proves by typing it. */
  @Column('text', { name: 'approver_email' }) approverEmail: string;
  @Column('text', { name: 'approver_name', nullable: true }) approverName: string | null;
  @Column('text') status: ApprovalStatus;
  @Column('text', { nullable: true }) comment: string | null;
  @Column('timestamptz', { name: 'decided_at', nullable: true }) decidedAt: Date | null;
  /** sha256 of the magic-link token of the last e-mail; cleared with the decision. */
  @Column('text', { name: 'magic_token_hash', nullable: true }) magicTokenHash: string | null;
  @Column('timestamptz', { name: 'magic_token_expires_at', nullable: true }) magicTokenExpiresAt: Date | null;
  @Column('integer', { name: 'sent_count' }) sentCount: number;
  @Column('timestamptz', { name: 'last_sent_at', nullable: true }) lastSentAt: Date | null;
  @Column('timestamptz', { name: 'reminder_sent_at', nullable: true }) reminderSentAt: Date | null;
  /** True from a recorded decision until the run's workflow was told (platform/workflow-outbox.ts `approvalNudge`). */
  @Column('boolean', { name: 'signal_pending', default: false }) signalPending: boolean;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
