import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ReportFormat } from './report.entity';

export type ScheduleTargetType = 'report' | 'job';
export type ScheduleStatus = 'active' | 'paused';

/**
 * A report schedule (docs/reporting.md "Scheduling"): a cron in a zone that
 * runs a report or a job. The row is the source of truth; its Temporal Schedule
 * (`report-schedule-<id>`, platform/report-schedules.ts) follows it.
 */
@Entity({ name: 'reporting_schedules' })
export class ReportScheduleEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rsch_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('text') name: string;
  @Column('text', { name: 'target_type' }) targetType: ScheduleTargetType;
  @Column('uuid', { name: 'target_id' }) targetId: string;
  /** Five fields (domain/reporting/cron.ts), read by Temporal as wall-clock time in `timezone`. */
  @Column('text') cron: string;
  /** IANA zone. */
  @Column('text') timezone: string;
  /** Report parameters (report targets), checked against the latest published version. */
  @Column('jsonb') parameters: Record<string, unknown>;
  @Column('jsonb', { name: 'channel_ids' }) channelIds: string[];
  /** A subset of the report's formats; null: all of them. */
  @Column('jsonb', { nullable: true }) outputs: ReportFormat[] | null;
  /** Overrides the report's `skipIfEmpty`; null: the report's. */
  @Column('boolean', { name: 'skip_if_empty', nullable: true }) skipIfEmpty: boolean | null;
  @Column('text') status: ScheduleStatus;
  @Column('text', { name: 'pause_note', nullable: true }) pauseNote: string | null;
  @Column('integer', { name: 'catchup_window_minutes' }) catchupWindowMinutes: number;
  @Column('timestamptz', { name: 'start_at', nullable: true }) startAt: Date | null;
  @Column('timestamptz', { name: 'end_at', nullable: true }) endAt: Date | null;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
}
