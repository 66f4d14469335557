import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { QueryDefinition } from './query.entity';

/** A published, immutable snapshot of a query's draft (docs/reporting.md "Query objects"). */
@Entity({ name: 'reporting_query_versions' })
export class QueryVersionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'query_id' }) queryId: string;
  /** 1, 2, 3… per query; a restore also takes the next number. */
  @Column('integer') version: number;
  @Column('jsonb') definition: QueryDefinition;
  /** The datasource the version reads from, as it was at publication. */
  @Column('uuid', { name: 'datasource_id' }) datasourceId: string;
  @Column('text', { name: 'release_notes', nullable: true }) releaseNotes: string | null;
  @Column('timestamptz', { name: 'published_at' }) publishedAt: Date;
  @Column('uuid', { name: 'published_by', nullable: true }) publishedBy: string | null;
}
