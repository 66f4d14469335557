import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ParameterDef } from '../../domain/reporting/parameters';
import type { OutputOptions } from '../../domain/documents/output';

export type DatasetShape = 'rows' | 'first_row' | 'value';
export type ReportFormat = 'pdf' | 'excel' | 'csv';
/** A version reference in a draft: `latest` is resolved to a number when the report is published. */
export type VersionRef = 'latest' | number;

/** One query of a report and how its result reaches the template (docs/reporting.md "Reports"). */
export interface ReportDataset {
  /** An identifier, unique in the report. */
  name: string;
  /** The query object's UUID (a body may name it by short id or slug; it is stored resolved). */
  queryId: string;
  queryVersion: VersionRef;
  /** Query parameter → `"{{reportParam}}"` or a literal value. */
  parameters: Record<string, unknown>;
  shape: DatasetShape;
  /** The template variable the result is bound to; the dataset's name when absent. */
  bindTo?: string;
}

export interface ReportOutput {
  format: ReportFormat;
  /** csv only: the datasets written, one file each (all when absent). */
  datasets?: string[];
  /** pdf only: what is done to the printed PDF (docs/documents.md "Output options"), checked when the report is saved. */
  output?: OutputOptions;
}

/**
 * What a report version freezes (docs/reporting.md "Reports"). In the draft the versions may be `latest`; in a
 * published version they are numbers, so a run needs nothing but the version and what it pins.
 */
export interface ReportDefinition<V = VersionRef> {
  templateId: string | null;
  templateVersion: V | null;
  datasets: Array<Omit<ReportDataset, 'queryVersion'> & { queryVersion: V }>;
  parameters: ParameterDef[];
  outputs: ReportOutput[];
  filenamePattern: string;
  skipIfEmpty: boolean;
  useCredit: boolean;
}

export type PinnedDefinition = ReportDefinition<number>;

/**
 * A report (docs/reporting.md "Reports"): an editable draft and published, immutable
 * versions, like query objects. Deleted rows stay (`deleted_at`) with their versions.
 */
@Entity({ name: 'reporting_reports' })
export class ReportEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rpt_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** Made from the first name; never changes. */
  @Column('text') slug: string;
  /** Unique per project among live reports, case-insensitive. */
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { name: 'folder_id', nullable: true }) folderId: string | null;
  /** The draft's definition: template, datasets, parameters, outputs, file name, flags. */
  @Column('jsonb') draft: ReportDefinition;
  @Column('boolean', { name: 'is_published' }) isPublished: boolean;
  /** 0 until the first publish. */
  @Column('integer', { name: 'latest_version' }) latestVersion: number;
  @Column('timestamptz', { name: 'published_at', nullable: true }) publishedAt: Date | null;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
