import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One file a run produced (docs/reporting.md "Runs"); the bytes live in artefact storage under `storage_key`. */
@Entity({ name: 'reporting_run_outputs' })
export class ReportRunOutputEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'run_id' }) runId: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('text') format: 'pdf' | 'excel' | 'csv';
  /** csv: the dataset the file holds. */
  @Column('text', { nullable: true }) dataset: string | null;
  @Column('text') filename: string;
  @Column('text', { name: 'storage_key' }) storageKey: string;
  @Column('text', { name: 'content_type' }) contentType: string;
  @Column('bigint', { transformer: { to: (v: number) => v, from: (v: string) => Number(v) } }) bytes: number;
  @Column('integer', { name: 'page_count', nullable: true }) pageCount: number | null;
  @Column('integer', { name: 'row_count', nullable: true }) rowCount: number | null;
  /** After REPORTING_ARTEFACT_RETENTION_DAYS the file is deleted and downloads answer 410 ERR_RPT_012. */
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
