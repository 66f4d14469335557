import { Column, Entity, PrimaryColumn } from 'typeorm';
import { sealedText } from '../secret-columns';

/** A document webhook subscription (contract §4). Soft-deleted: its deliveries stay readable to operators. */
@Entity({ name: 'webhook_subscriptions' })
export class WebhookSubscriptionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('text') url: string;
  @Column('text', { array: true }) events: string[];
  @Column('text', { nullable: true }) description: string | null;
  /** `whsec_…`: it keys the HMAC of every delivery. Encrypted at rest; shown to the caller once, at creation. */
  @Column('text', { transformer: sealedText }) secret: string;
  @Column('boolean', { name: 'is_active' }) isActive: boolean;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('uuid', { name: 'created_by_api_key_id', nullable: true }) createdByApiKeyId: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
}
