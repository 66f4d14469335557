import { Column, Entity, PrimaryColumn } from 'typeorm';
import { sealedHeaders, sealedText } from '../secret-columns';
import type { DeliveryAttempt, DeliverySource, DeliveryStatus } from '../../domain/webhooks/delivery';

/**
 * One event sent to one target (a document subscription or a Flow delivery channel), with every
 * attempt (contract §5). Written by db/webhooks/deliveries.ts and the delivery activity.
 */
@Entity({ name: 'webhook_deliveries' })
export class WebhookDeliveryEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('text') source: DeliverySource;
  @Column('uuid', { name: 'subscription_id', nullable: true }) subscriptionId: string | null;
  @Column('text', { name: 'run_id', nullable: true }) runId: string | null;
  /** The URL of the last attempt (document deliveries follow their subscription's current URL). */
  @Column('text') url: string;
  /** Flow channels only: the channel's signing secret, encrypted at rest. Never presented. */
  @Column('text', { nullable: true, transformer: sealedText }) secret: string | null;
  /** Flow channels only: extra request headers of the channel, values encrypted at rest. */
  @Column('jsonb', { nullable: true, transformer: sealedHeaders }) headers: Record<string, string> | null;
  /** `X-Service-Event-Id`: the event id, or for Flow the run id. */
  @Column('text', { name: 'event_id' }) eventId: string;
  @Column('text', { name: 'event_type' }) eventType: string;
  /** The exact JSON body sent on every attempt. */
  @Column('json') payload: Record<string, unknown>;
  @Column('text') status: DeliveryStatus;
  @Column('jsonb') attempts: DeliveryAttempt[];
  @Column('timestamptz', { name: 'next_attempt_at', nullable: true }) nextAttemptAt: Date | null;
  @Column('integer', { name: 'manual_retries', default: 0 }) manualRetries: number;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
}
