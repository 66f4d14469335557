import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ImportFormat, ImportWarning } from '../../domain/reporting/imports/model';

export type ImportStatus = 'completed' | 'completed_with_warnings' | 'failed';
export type ImportAction = 'created' | 'overwritten' | 'skipped' | 'needs_attention' | 'unsupported';

/** One item of an import (docs/reporting.md "Imports"): what a card, query or report became. */
export interface ImportItem {
  source: { type: 'card' | 'query' | 'jrxml'; name: string; ref: string | null };
  action: ImportAction;
  queryId?: string;
  reportId?: string;
  templateId?: string;
  suggestedSchedule?: { cron: string; timezone: 'UTC' };
  warnings: ImportWarning[];
}

/** A model import (docs/reporting.md "Imports"): the record of what an upload made, dry runs too. */
@Entity({ name: 'reporting_imports' })
export class ImportEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rimp_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('text') format: ImportFormat;
  @Column('text') filename: string;
  @Column('text') status: ImportStatus;
  @Column('boolean', { name: 'dry_run' }) dryRun: boolean;
  @Column('jsonb') items: ImportItem[];
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
