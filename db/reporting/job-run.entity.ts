import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JobRunItem, JobRunStatus } from '../../domain/reporting/job-run-status';

/** One run of a report job (docs/reporting.md "Jobs"): its reports run as child runs, then one bundled delivery. */
@Entity({ name: 'reporting_job_runs' })
export class ReportJobRunEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rjrun_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('uuid', { name: 'job_id' }) jobId: string;
  @Column('text') trigger: 'manual' | 'api' | 'schedule';
  @Column('uuid', { name: 'schedule_id', nullable: true }) scheduleId: string | null;
  /** The schedule's local wall-clock minute (`2026-10-25T02:30 Europe/Berlin`); unique per schedule. */
  @Column('text', { name: 'occurrence_key', nullable: true }) occurrenceKey: string | null;
  @Column('timestamptz', { name: 'scheduled_for' }) scheduledFor: Date;
  @Column('text') timezone: string;
  @Column('text') status: JobRunStatus;
  @Column('text', { name: 'skip_reason', nullable: true }) skipReason: string | null;
  @Column('jsonb') items: JobRunItem[];
  @Column('integer', { name: 'total_runs' }) totalRuns: number;
  @Column('integer', { name: 'completed_runs' }) completedRuns: number;
  @Column('integer', { name: 'failed_runs' }) failedRuns: number;
  @Column('text', { name: 'delivery_status' }) deliveryStatus: 'none' | 'pending' | 'delivering' | 'completed' | 'failed';
  @Column('jsonb', { name: 'channel_ids' }) channelIds: string[];
  @Column('jsonb', { nullable: true }) error: { code: string; message: string } | null;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('uuid', { name: 'api_key_id', nullable: true }) apiKeyId: string | null;
  /** True while its workflow has to be started (platform/workflow-outbox.ts): job runs the API opened (manual, api); a schedule's are started by the schedule workflow. */
  @Column('boolean', { name: 'workflow_pending', default: false }) workflowPending: boolean;
  @Column('timestamptz', { name: 'workflow_started_at', nullable: true }) workflowStartedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
