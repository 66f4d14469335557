import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RunStatus } from '../../domain/flow/run-status';
import type { RunSource, RunValidation } from '../../domain/flow/run.types';

/** One submission to a gate (spec, Run). */
@Entity({ name: 'flow_runs' })
export class RunEntity {
  @PrimaryColumn('uuid') id: string;
  /** `frun_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('uuid', { name: 'gate_id' }) gateId: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('integer', { name: 'schema_version' }) schemaVersion: number;
  @Column('text') status: RunStatus;
  @Column('text') source: RunSource;
  /** The object (variables mode) or string (freetext mode) as submitted. */
  @Column('jsonb', { name: 'input_payload' }) inputPayload: unknown;
  @Column('jsonb') validation: RunValidation;
  @Column('jsonb', { nullable: true }) metadata: Record<string, unknown> | null;
  @Column('text', { name: 'artefact_key', nullable: true }) artefactKey: string | null;
  /** When the artefact was stored; retention counts from here (domain/flow/plans.ts). */
  @Column('timestamptz', { name: 'artefact_stored_at', nullable: true }) artefactStoredAt: Date | null;
  /** Set when retention removed the artefact: `artefactUrl` is null from then on. */
  @Column('timestamptz', { name: 'artefact_expired_at', nullable: true }) artefactExpiredAt: Date | null;
  @Column('text', { name: 'approval_status', nullable: true }) approvalStatus: string | null;
  @Column('text', { name: 'delivery_status', nullable: true }) deliveryStatus: string | null;
  @Column('text', { nullable: true }) error: string | null;
  /** The catalogued code of the failure (a render's ERR_LIMIT_007, ERR_OUTBOUND_001, …); null when none was given. */
  @Column('text', { name: 'error_code', nullable: true }) errorCode: string | null;
  /** True while the run's workflow has to be started (see platform/workflow-outbox.ts). */
  @Column('boolean', { name: 'workflow_pending' }) workflowPending: boolean;
  @Column('timestamptz', { name: 'workflow_started_at', nullable: true }) workflowStartedAt: Date | null;
  /**
   * A native render's cost (docs/documents.md "Quotas and the watermark on every output"): `free`
   * (one of the month's free documents, watermarked) or `credit`; null: not charged (yet).
   */
  @Column('text', { nullable: true }) billing: 'free' | 'credit' | null;
  /** 1 while the charge stands; 0 once given back (the run ended without its document). */
  @Column('integer', { name: 'documents_charged', default: 0 }) documentsCharged: number;
  @Column('timestamptz', { name: 'charged_at', nullable: true }) chargedAt: Date | null;
  /** When recordRunOutcome counted this run for the circuit breaker (at most once). */
  @Column('timestamptz', { name: 'outcome_recorded_at', nullable: true }) outcomeRecordedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
}
