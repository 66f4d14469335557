import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ApiKeyPermissions } from '../../domain/identity/api-keys';

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('uuid', { name: 'created_by' }) createdBy: string;
  @Column('text') name: string;
  @Column('text', { name: 'key_type' }) keyType: string;
  @Column('text', { name: 'key_prefix' }) keyPrefix: string;
  /** SHA-256 of the full key: keys are high-entropy, so a fast hash is enough and lookups stay O(1). */
  @Column('text', { name: 'key_hash' }) keyHash: string;
  @Column('jsonb') permissions: ApiKeyPermissions;
  @Column('boolean', { name: 'is_active' }) isActive: boolean;
  @Column('timestamptz', { name: 'expires_at', nullable: true }) expiresAt: Date | null;
  @Column('timestamptz', { name: 'last_used_at', nullable: true }) lastUsedAt: Date | null;
  @Column('bigint', { name: 'total_requests', default: 0, transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  totalRequests: number;
  @Column('integer', { name: 'requests_today', default: 0 }) requestsToday: number;
  @Column('date', { name: 'requests_day', nullable: true }) requestsDay: string | null;
  @Column('integer', { name: 'documents_generated', default: 0 }) documentsGenerated: number;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
