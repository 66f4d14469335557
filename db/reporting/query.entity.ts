import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { HttpRequestSpec } from '../../domain/reporting/http-request';
import type { ParameterDef } from '../../domain/reporting/parameters';

export type QueryLanguage = 'sql' | 'http' | 'table';
export type OnRowLimit = 'fail' | 'truncate';

/** A column a run's result must have (docs/reporting.md "Query objects"); a run lacking one fails ERR_QRY_011. */
export interface ExpectedColumn {
  name: string;
  type?: string;
}

/** What a query version freezes (docs/reporting.md "Query objects"); the draft's columns hold the same fields. */
export interface QueryDefinition {
  language: QueryLanguage;
  text: string;
  /** `http`: the request spec; absent (null) for the other languages and in versions published before it existed. */
  request?: HttpRequestSpec | null;
  /** `http`, `table`: optional JSONata over `{rows, params}`. */
  transform?: string | null;
  parameters: ParameterDef[];
  expectedColumns: ExpectedColumn[] | null;
  maxRows: number;
  timeoutSeconds: number;
  onRowLimit: OnRowLimit;
}

/**
 * A reporting query object (docs/reporting.md "Query objects"): an editable draft and
 * published, immutable versions, like templates. Deleted rows stay (`deleted_at`) for the versions
 * reports may pin; their name and slug become free again.
 */
@Entity({ name: 'reporting_queries' })
export class QueryEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `qry_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** Made from the first name; never changes. */
  @Column('text') slug: string;
  /** Unique per project among live queries, case-insensitive. */
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { name: 'folder_id', nullable: true }) folderId: string | null;
  @Column('uuid', { name: 'datasource_id' }) datasourceId: string;
  @Column('text') language: QueryLanguage;
  @Column('text') text: string;
  @Column('jsonb', { nullable: true }) request: HttpRequestSpec | null;
  @Column('text', { nullable: true }) transform: string | null;
  @Column('jsonb') parameters: ParameterDef[];
  @Column('jsonb', { name: 'expected_columns', nullable: true }) expectedColumns: ExpectedColumn[] | null;
  @Column('integer', { name: 'max_rows' }) maxRows: number;
  @Column('integer', { name: 'timeout_seconds' }) timeoutSeconds: number;
  @Column('text', { name: 'on_row_limit' }) onRowLimit: OnRowLimit;
  @Column('boolean', { name: 'is_published' }) isPublished: boolean;
  /** 0 until the first publish. */
  @Column('integer', { name: 'latest_version' }) latestVersion: number;
  @Column('timestamptz', { name: 'published_at', nullable: true }) publishedAt: Date | null;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
