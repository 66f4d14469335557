import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { CircuitState } from '../../domain/flow/circuit-breaker';
import type { BusinessRule, FreetextConfig, ObjectSchema, ValidationMode } from '../../domain/flow/gate.types';
import type { ApprovalConfig, ApprovalMode, DeliveryChannel, GateStatus, NotificationMode, RenderMode } from '../../domain/flow/gate-settings';
import { sealedChannels, sealedRenderConfig } from '../secret-columns';

/** A Flow gate (spec, Gate): its settings, its current schema version and its circuit state. */
@Entity({ name: 'flow_gates' })
export class GateEntity {
  @PrimaryColumn('uuid') id: string;
  /** The workspace: the project of the API key that created it. */
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `fgate_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** From the name at creation, kept on rename. */
  @Column('text') slug: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') status: GateStatus;
  @Column('text', { name: 'validation_mode' }) validationMode: ValidationMode;
  @Column('jsonb', { nullable: true }) schema: ObjectSchema | null;
  @Column('jsonb', { name: 'business_rules' }) businessRules: BusinessRule[];
  @Column('jsonb', { name: 'freetext_config', nullable: true }) freetextConfig: FreetextConfig | null;
  @Column('integer', { name: 'schema_version' }) schemaVersion: number;
  @Column('text', { name: 'render_mode' }) renderMode: RenderMode;
  @Column('text', { name: 'render_template_id', nullable: true }) renderTemplateId: string | null;
  /** Its `secret` is encrypted at rest (db/secret-columns.ts) and write-only. */
  @Column('jsonb', { name: 'render_config', nullable: true, transformer: sealedRenderConfig }) renderConfig: Record<string, unknown> | null;
  @Column('text', { name: 'approval_mode' }) approvalMode: ApprovalMode;
  @Column('jsonb', { name: 'approval_config', nullable: true }) approvalConfig: ApprovalConfig | null;
  @Column('jsonb', { name: 'delivery_channels', transformer: sealedChannels }) deliveryChannels: DeliveryChannel[];
  /** Null: no per-gate limit beyond the API key's own. */
  @Column('integer', { name: 'max_submissions_per_minute', nullable: true }) maxSubmissionsPerMinute: number | null;
  @Column('text', { name: 'notification_mode' }) notificationMode: NotificationMode;
  @Column('integer', { name: 'notification_digest_minutes' }) notificationDigestMinutes: number;
  @Column('boolean', { name: 'circuit_breaker_enabled' }) circuitBreakerEnabled: boolean;
  @Column('integer', { name: 'max_failures' }) maxFailures: number;
  @Column('integer', { name: 'cooldown_seconds' }) cooldownSeconds: number;
  @Column('text', { name: 'circuit_state' }) circuitState: CircuitState;
  @Column('integer', { name: 'consecutive_failures' }) consecutiveFailures: number;
  @Column('timestamptz', { name: 'circuit_open_until', nullable: true }) circuitOpenUntil: Date | null;
  @Column('uuid', { name: 'circuit_trial_run_id', nullable: true }) circuitTrialRunId: string | null;
  @Column('timestamptz', { name: 'circuit_trial_started_at', nullable: true }) circuitTrialStartedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
}
