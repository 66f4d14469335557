import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ChannelKind } from '../../domain/reporting/channel-kinds';
import { sealedChannelConfig, sealedDatasourceSecrets } from '../secret-columns';
import type { DatasourceSecrets } from './datasource.entity';

/** The outcome of the latest channel test (POST /api/reporting/channels/:id/test). */
export interface ChannelLastTest {
  at: string;
  ok: boolean;
  durationMs: number;
  error: string | null;
  details: Record<string, unknown> | null;
}

/** A distribution channel (docs/reporting.md "Channels"): where runs are delivered. */
@Entity({ name: 'reporting_channels' })
export class ChannelEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rch_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** Unique per project, case-insensitive. */
  @Column('text') name: string;
  @Column('text') kind: ChannelKind;
  /**
   * Settings per kind (domain/reporting/channel-kinds.ts). A webhook channel's `headers` values are
   * secrets: encrypted at rest (the names are not) and answered as `{set: true}` (channels.presenter.ts).
   */
  @Column('jsonb', { transformer: sealedChannelConfig }) config: Record<string, unknown>;
  /** Write-only `{name: {value, updatedAt}}`; each value encrypted at rest like datasource secrets. */
  @Column('jsonb', { transformer: sealedDatasourceSecrets }) secrets: DatasourceSecrets;
  @Column('boolean', { name: 'is_active' }) isActive: boolean;
  @Column('jsonb', { name: 'last_test', nullable: true }) lastTest: ChannelLastTest | null;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
