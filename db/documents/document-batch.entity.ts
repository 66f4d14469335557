import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { OutputOptions } from '../../domain/documents/output';
import { sealedOutput } from '../secret-columns';
import type { ArchiveStatus, LeftOutJob } from '../../domain/documents/batch-archive';
import type { BatchStatus } from '../../domain/documents/batch-status';
import type { DocumentFormat } from '../../domain/documents/types';

/** A batch; its counts are derived from its jobs, never stored twice. */
@Entity({ name: 'document_batches' })
export class DocumentBatchEntity {
  /** Also the id of the batch's Temporal workflow. */
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('uuid', { name: 'template_id' }) templateId: string;
  @Column('text') format: DocumentFormat;
  @Column('text') status: BatchStatus;
  @Column('integer', { name: 'total_jobs' }) totalJobs: number;
  @Column('jsonb', { nullable: true }) metadata: Record<string, any> | null;
  /** The generation's `output` options (domain/documents/output.ts); encryption passwords sealed. */
  @Column('jsonb', { nullable: true, transformer: sealedOutput }) output: OutputOptions | null;
  @Column('uuid', { name: 'api_key_id', nullable: true }) apiKeyId: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  /** True while the batch's workflow has to be started (platform/workflow-outbox.ts). */
  @Column('boolean', { name: 'workflow_pending', default: false }) workflowPending: boolean;
  @Column('timestamptz', { name: 'workflow_started_at', nullable: true }) workflowStartedAt: Date | null;
  /** True while the maintenance sweep, which completed the batch, still owes its batch.completed (migration 1732200011500). */
  @Column('boolean', { name: 'event_pending', default: false }) eventPending: boolean;
  /**
   * The archive `output.archive` asked for (migration 1732200013200; docs/documents.md "Batch archives"):
   * null when none was asked for, else `pending`, `ready`, `failed` or `expired`.
   */
  @Column('text', { name: 'archive_status', nullable: true }) archiveStatus: ArchiveStatus | null;
  @Column('text', { name: 'archive_key', nullable: true }) archiveKey: string | null;
  @Column('bigint', { name: 'archive_size', nullable: true, transformer: { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  archiveSize: number | null;
  /** Documents the archive holds. */
  @Column('integer', { name: 'archive_documents', nullable: true }) archiveDocuments: number | null;
  /** The jobs it leaves out (failed, cancelled, or their file gone), in batch order. */
  @Column('jsonb', { name: 'archive_left_out', nullable: true }) archiveLeftOut: LeftOutJob[] | null;
  @Column('text', { name: 'archive_error_code', nullable: true }) archiveErrorCode: string | null;
  @Column('text', { name: 'archive_error', nullable: true }) archiveError: string | null;
  /** When it became ready: retention counts from here. */
  @Column('timestamptz', { name: 'archive_completed_at', nullable: true }) archiveCompletedAt: Date | null;
}
