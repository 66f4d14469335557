import { Column, Entity, PrimaryColumn } from 'typeorm';
import { sealedText } from '../secret-columns';

/** A request's Idempotency-Key within its project (docs/idempotency.md); written by db/idempotency/idempotency-keys.ts. */
@Entity('idempotency_keys')
export class IdempotencyKeyEntity {
  @PrimaryColumn('uuid', { name: 'project_id' }) projectId: string;
  @PrimaryColumn('varchar', { length: 255 }) key: string;
  /** A row id for db/secrets-at-rest.ts, which pages by it; kept when an expired key is taken over. */
  @Column('uuid') id: string;
  /** SHA-256 hex of method, path, project and the canonical body. */
  @Column('char', { length: 64 }) fingerprint: string;
  @Column('varchar', { length: 10 }) method: string;
  @Column('text') path: string;
  @Column('varchar', { length: 16 }) state: 'in_flight' | 'completed';
  /** Who holds the claim: only its holder completes or releases it. */
  @Column('uuid', { name: 'lease_token' }) leaseToken: string;
  @Column('timestamptz', { name: 'lease_until' }) leaseUntil: Date;
  /** The stored answer as JSON `{status, headers, body}`, sealed at rest. */
  @Column('text', { nullable: true, transformer: sealedText }) response: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
}
