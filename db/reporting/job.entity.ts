import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One report of a job: its parameters and optional subset of formats. */
export interface ReportJobItem {
  reportId: string;
  parameters: Record<string, unknown>;
  outputs?: Array<'pdf' | 'excel' | 'csv'>;
}

/** A report job (docs/reporting.md "Jobs"): several reports run and delivered together. */
@Entity({ name: 'reporting_jobs' })
export class ReportJobEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rjob_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('jsonb') items: ReportJobItem[];
  /** `bundle`: one delivery with every file; `separate`: each report's run delivers itself. */
  @Column('text') delivery: 'bundle' | 'separate';
  /** Reports run at once (1–5). */
  @Column('integer') concurrency: number;
  @Column('boolean', { name: 'stop_on_failure' }) stopOnFailure: boolean;
  /** Channels of manual runs; schedules name their own. */
  @Column('jsonb', { name: 'channel_ids' }) channelIds: string[];
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
}
