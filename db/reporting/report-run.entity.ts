import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { FailedStage, ReportRunStatus, RunDataset, RunTrigger } from '../../domain/reporting/run-status';

/**
 * One run of a published report version (docs/reporting.md "Runs"). The row is
 * written before the workflow starts (`report-run-<id>`); its status moves only through
 * db/reporting/run-state.ts.
 */
@Entity({ name: 'reporting_runs' })
export class ReportRunEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rrun_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('uuid', { name: 'report_id' }) reportId: string;
  @Column('integer', { name: 'report_version' }) reportVersion: number;
  @Column('text') trigger: RunTrigger;
  @Column('uuid', { name: 'retry_of', nullable: true }) retryOf: string | null;
  @Column('uuid', { name: 'schedule_id', nullable: true }) scheduleId: string | null;
  @Column('uuid', { name: 'job_run_id', nullable: true }) jobRunId: string | null;
  /** A scheduled run's local wall-clock minute in the schedule's zone (`2026-10-25T02:30 Europe/Berlin`), unique per schedule but for `duplicate_occurrence` records. */
  @Column('text', { name: 'occurrence_key', nullable: true }) occurrenceKey: string | null;
  /** Channels the run delivers to when its outputs are stored (none: the run ends `completed` after rendering). */
  @Column('jsonb', { name: 'channel_ids' }) channelIds: string[];
  /** A schedule's override of the report's `skipIfEmpty` (null: the report's). */
  @Column('boolean', { name: 'skip_if_empty', nullable: true }) skipIfEmpty: boolean | null;
  @Column('timestamptz', { name: 'scheduled_for' }) scheduledFor: Date;
  @Column('text') timezone: string;
  /** Resolved parameter values (JSON: dates as ISO strings). */
  @Column('jsonb') parameters: Record<string, unknown>;
  /** Formats to produce: the version's outputs, or the subset the request named. */
  @Column('jsonb') formats: Array<'pdf' | 'excel' | 'csv'>;
  @Column('text') status: ReportRunStatus;
  @Column('text', { name: 'failed_stage', nullable: true }) failedStage: FailedStage | null;
  @Column('text', { name: 'skip_reason', nullable: true }) skipReason: string | null;
  @Column('jsonb') datasets: RunDataset[];
  @Column('jsonb', { nullable: true }) error: { code: string; message: string } | null;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text', { name: 'delivery_status' }) deliveryStatus: 'none' | 'pending' | 'delivering' | 'completed' | 'failed';
  /** PDF/Excel outputs charged; `billing` says against what (free quota or credits). */
  @Column('integer', { name: 'documents_charged' }) documentsCharged: number;
  @Column('text', { nullable: true }) billing: 'free' | 'credit' | null;
  @Column('timestamptz', { name: 'charged_at', nullable: true }) chargedAt: Date | null;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('uuid', { name: 'api_key_id', nullable: true }) apiKeyId: string | null;
  /** True while its workflow has to be started (platform/workflow-outbox.ts): runs the API opened (manual, api); a schedule's or job's are started by their parent. */
  @Column('boolean', { name: 'workflow_pending', default: false }) workflowPending: boolean;
  @Column('timestamptz', { name: 'workflow_started_at', nullable: true }) workflowStartedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
