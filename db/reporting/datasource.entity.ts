import { Column, Entity, PrimaryColumn } from 'typeorm';
import { sealedDatasourceConfig, sealedDatasourceSecrets } from '../secret-columns';
import type { ConnectionTest, DatasourceKind, DiscoveredSchema } from '../../domain/reporting/query-runner';

/** One stored secret of a datasource: the value (plaintext in the entity, `enc:v1:…` in the row) and when it was set. */
export interface DatasourceSecret {
  value: string;
  updatedAt: string;
}

export type DatasourceSecrets = Record<string, DatasourceSecret>;

export interface DatasourcePool {
  max: number;
  idleTimeoutSeconds: number;
}

export interface DatasourceDefaults {
  timeoutSeconds: number;
  maxRows: number;
}

/** The outcome of the latest connection test (POST /api/reporting/datasources/:id/test). */
export interface DatasourceLastTest extends Partial<ConnectionTest> {
  at: string;
  ok: boolean;
  error: { code: string; message: string } | null;
}

/** A reporting datasource (docs/reporting.md "Datasources"): where queries read from. */
@Entity({ name: 'reporting_datasources' })
export class DatasourceEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `ds_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** Unique per project, case-insensitive. */
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') kind: DatasourceKind;
  @Column('text', { name: 'connection_mode' }) connectionMode: 'direct' | 'agent';
  @Column('uuid', { name: 'agent_id', nullable: true }) agentId: string | null;
  /** Settings per kind (host, port, database, user, ssl...); an http_json datasource's `defaultHeaders` values are secrets, encrypted at rest like `secrets` and never answered. */
  @Column('jsonb', { transformer: sealedDatasourceConfig }) config: Record<string, unknown>;
  /** Write-only; each value encrypted at rest with the application key (db/secret-columns.ts), re-encrypted by key rotation (db/secrets-at-rest.ts). */
  @Column('jsonb', { transformer: sealedDatasourceSecrets }) secrets: DatasourceSecrets;
  @Column('text', { name: 'secret_mode' }) secretMode: 'stored' | 'sealed' | 'agent_local';
  @Column('jsonb') pool: DatasourcePool;
  @Column('jsonb') defaults: DatasourceDefaults;
  @Column('jsonb', { name: 'last_test', nullable: true }) lastTest: DatasourceLastTest | null;
  @Column('jsonb', { nullable: true }) schema: DiscoveredSchema | null;
  @Column('timestamptz', { name: 'schema_refreshed_at', nullable: true }) schemaRefreshedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
