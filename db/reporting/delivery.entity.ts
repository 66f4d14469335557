import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ChannelKind } from '../../domain/reporting/channel-kinds';
import type { ReportDeliveryAttempt, ReportDeliveryStatus } from '../../domain/reporting/delivery';

/**
 * One target of one channel for one run or job run (docs/reporting.md "Deliveries"): an e-mail channel has one per
 * recipient, every other kind one. Its workflow is `report-delivery-<id>` (`-retry-<n>` for manual retries).
 */
@Entity({ name: 'reporting_deliveries' })
export class ReportDeliveryEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `rdlv_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('uuid', { name: 'run_id', nullable: true }) runId: string | null;
  @Column('uuid', { name: 'job_run_id', nullable: true }) jobRunId: string | null;
  @Column('uuid', { name: 'channel_id' }) channelId: string;
  @Column('text') kind: ChannelKind;
  /** What the channel sends to (an e-mail recipient; `default` for single-target kinds). Never shown. */
  @Column('text', { name: 'target_key' }) targetKey: string;
  /** The target as shown: address, host + path, webhook host. */
  @Column('text') target: string;
  @Column('text') status: ReportDeliveryStatus;
  @Column('jsonb') attempts: ReportDeliveryAttempt[];
  /** Manual retries so far: the next one's workflow id is `report-delivery-<id>-retry-<n>`. */
  @Column('integer', { name: 'manual_retries' }) manualRetries: number;
  /** Set while a manual retry's workflow has to be started (platform/workflow-outbox.ts `reportDeliveryRetry`). */
  @Column('timestamptz', { name: 'retry_pending_since', nullable: true }) retryPendingSince: Date | null;
  @Column('timestamptz', { name: 'next_attempt_at', nullable: true }) nextAttemptAt: Date | null;
  /** Message id, object key, remote path. */
  @Column('text', { name: 'remote_ref', nullable: true }) remoteRef: string | null;
  /** e.g. `attachment_replaced_by_link`, `channel_inactive`. */
  @Column('text', { nullable: true }) note: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
