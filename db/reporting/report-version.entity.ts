import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { PinnedDefinition, ReportDefinition } from './report.entity';

/** A published, immutable report (docs/reporting.md "Reports"): the resolved definition a run reads. */
@Entity({ name: 'reporting_report_versions' })
export class ReportVersionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'report_id' }) reportId: string;
  /** 1, 2, 3… per report; a restore also takes the next number. */
  @Column('integer') version: number;
  /** Template and query versions as numbers. */
  @Column('jsonb') definition: PinnedDefinition;
  /** The draft as it was written (`latest` kept): what a restore puts back into the draft. */
  @Column('jsonb') draft: ReportDefinition;
  /** Name and description as they were at publication. */
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { name: 'release_notes', nullable: true }) releaseNotes: string | null;
  @Column('timestamptz', { name: 'published_at' }) publishedAt: Date;
  @Column('uuid', { name: 'published_by', nullable: true }) publishedBy: string | null;
}
