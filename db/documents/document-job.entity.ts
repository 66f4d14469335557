import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { OutputOptions } from '../../domain/documents/output';
import { sealedOutput } from '../secret-columns';
import type { JobStatus } from '../../domain/documents/job-status';
import type { Billing, DocumentFormat, JobKind, MergePartRecord } from '../../domain/documents/types';


@Entity({ name: 'document_jobs' })
export class DocumentJobEntity {
  /** Also the id of the job's Temporal workflow. */
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('uuid', { name: 'batch_id', nullable: true }) batchId: string | null;
  @Column('integer', { name: 'batch_index', nullable: true }) batchIndex: number | null;
  @Column('uuid', { name: 'api_key_id', nullable: true }) apiKeyId: string | null;
  @Column('uuid', { name: 'user_id', nullable: true }) userId: string | null;
  /** Null for a merge (`kind = 'merge'`), which has no template. */
  @Column('uuid', { name: 'template_id', nullable: true }) templateId: string | null;
  @Column('integer', { name: 'template_version', nullable: true }) templateVersion: number | null;
  /** `render`: a template version rendered with `variables`; `merge`: `mergeParts` joined (POST /api/documents/merge). */
  @Column('text', { default: 'render' }) kind: JobKind;
  /** A merge's parts, in order, their bookmark titles resolved when it was accepted. */
  @Column('jsonb', { name: 'merge_parts', nullable: true }) mergeParts: MergePartRecord[] | null;
  @Column('text') format: DocumentFormat;
  @Column('text') status: JobStatus;
  @Column('jsonb') variables: Record<string, any>;
  @Column('jsonb', { nullable: true }) metadata: Record<string, any> | null;
  /** The generation's `output` options (domain/documents/output.ts); encryption passwords sealed. */
  @Column('jsonb', { nullable: true, transformer: sealedOutput }) output: OutputOptions | null;
  @Column('text', { nullable: true }) filename: string | null;
  @Column('text') billing: Billing;
  @Column('integer', { default: 0 }) attempts: number;
  @Column('text', { name: 'artefact_key', nullable: true }) artefactKey: string | null;
  @Column('integer', { name: 'artefact_size', nullable: true }) artefactSize: number | null;
  /** Set when retention removed the artefact; the job then says so instead of offering a dead link. */
  @Column('timestamptz', { name: 'artefact_expired_at', nullable: true }) artefactExpiredAt: Date | null;
  @Column('text', { name: 'error_code', nullable: true }) errorCode: string | null;
  @Column('text', { name: 'error_message', nullable: true }) errorMessage: string | null;
  @Column('uuid', { name: 'retry_of', nullable: true }) retryOf: string | null;
  @Column('integer', { name: 'generation_ms', nullable: true }) generationMs: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  /** True while the job's own workflow has to be started (platform/workflow-outbox.ts); batch jobs: false, their batch's workflow runs them. */
  @Column('boolean', { name: 'workflow_pending', default: false }) workflowPending: boolean;
  @Column('timestamptz', { name: 'workflow_started_at', nullable: true }) workflowStartedAt: Date | null;
  /** True while the maintenance sweep, which failed the job, still owes its document.failed (migration 1732200011500). */
  @Column('boolean', { name: 'event_pending', default: false }) eventPending: boolean;
}
