import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ChannelTarget } from '../../domain/reporting/channel-kinds';
import type { ReportDeliveryAttempt, ReportDeliveryStatus } from '../../domain/reporting/delivery';
import { reportDeliveryMachine } from '../../domain/reporting/delivery-status';
import { randomBase62 } from '../../domain/signing';
import { modifyReturning, type Queryable } from '../sql';
import type { ChannelEntity } from './channel.entity';
import { ReportDeliveryEntity } from './delivery.entity';
import { completeJobRunAfterRedelivery, settleJobRunDeliveries } from './job-run-state';
import { completeRunAfterRedelivery, settleRunDeliveries } from './run-state';

/**
 * The only writer of `reporting_deliveries.status` (docs/architecture.md, "State machines";
 * docs/reporting.md "Deliveries", "Statuses"), moved by conditional UPDATEs from the statuses
 * domain/reporting/delivery-status.ts allows: `pending` → `delivering` → `completed` | `failed`,
 * `skipped` for a channel that is inactive or gone; a manual retry moves `failed` (or `skipped`)
 * back to `pending`. It also keeps the owner's `delivery_status` while deliveries are under way; the
 * owner's `status` is moved by its own module (run-state.ts, job-run-state.ts), which this one calls.
 */

export const DELIVERY_SHORT_ID_PREFIX = 'rdlv_';

/** Whose deliveries: a run's, or a job run's bundle. */
export type DeliveryOwner = { runId: string; jobRunId?: undefined } | { jobRunId: string; runId?: undefined };

const ownerTable = (o: DeliveryOwner) => (o.runId ? 'reporting_runs' : 'reporting_job_runs');
const ownerColumn = (o: DeliveryOwner) => (o.runId ? 'run_id' : 'job_run_id');
const ownerId = (o: DeliveryOwner) => (o.runId ?? o.jobRunId)!;

/** What the owner's channels resolved to: the targets of each live channel, and the ids that are gone. */
export interface PlannedChannel {
  channelId: string;
  kind: ChannelEntity['kind'] | 'unknown';
  targets: ChannelTarget[];
  /** `channel_inactive` or `channel_deleted`: recorded `skipped`, nothing sent. */
  skip?: 'channel_inactive' | 'channel_deleted';
}

/**
 * Inserts one delivery per channel target (idempotent: a retried activity finds the rows it made)
 * and answers the ids still to send, `pending` or `delivering` (a crash mid-delivery resumes them).
 */
const [PENDING, SKIPPED] = reportDeliveryMachine.initial;

export async function insertDeliveries(db: DataSource, projectId: string, owner: DeliveryOwner, channels: PlannedChannel[]): Promise<string[]> {
  await db.transaction(async (m) => {
    for (const c of channels) {
      const targets = c.skip ? [{ key: 'default', masked: '' }] : c.targets;
      for (const t of targets) {
        await m.query(
          `INSERT INTO reporting_deliveries (id, project_id, short_id, ${ownerColumn(owner)}, channel_id, kind, target_key, target, status, note, completed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT DO NOTHING`,
          [randomUUID(), projectId, DELIVERY_SHORT_ID_PREFIX + randomBase62(16), ownerId(owner), c.channelId, c.kind, t.key, t.masked, c.skip ? SKIPPED : PENDING, c.skip ?? null, c.skip ? new Date() : null],
        );
      }
    }
    await m.query(`UPDATE ${ownerTable(owner)} SET delivery_status = 'pending', updated_at = now() WHERE id = $1 AND delivery_status = 'none'`, [ownerId(owner)]);
  });
  const rows: Array<{ id: string }> = await db.query(
    `SELECT id FROM reporting_deliveries WHERE ${ownerColumn(owner)} = $1 AND status IN ('pending','delivering') ORDER BY created_at, id`,
    [ownerId(owner)],
  );
  return rows.map((r) => r.id);
}

export async function loadDelivery(db: Queryable, deliveryId: string): Promise<ReportDeliveryEntity | null> {
  return db.getRepository(ReportDeliveryEntity).findOneBy({ id: deliveryId });
}

/** `pending → delivering` before an attempt, and the owner's delivery status with it. */
export async function markDelivering(db: DataSource, d: ReportDeliveryEntity): Promise<void> {
  await db.query(`UPDATE reporting_deliveries SET status = 'delivering', updated_at = now() WHERE id = $1 AND status = ANY($2::text[])`, [
    d.id,
    reportDeliveryMachine.sourcesOf('delivering', ['pending', 'delivering']),
  ]);
  const owner: DeliveryOwner = d.runId ? { runId: d.runId } : { jobRunId: d.jobRunId! };
  await db.query(`UPDATE ${ownerTable(owner)} SET delivery_status = 'delivering', updated_at = now() WHERE id = $1 AND delivery_status IN ('none','pending')`, [ownerId(owner)]);
}

export interface AttemptRecord {
  attempt: ReportDeliveryAttempt;
  /** `delivering` while a retry is scheduled. */
  status: Extract<ReportDeliveryStatus, 'delivering' | 'completed' | 'failed'>;
  nextAttemptAt: Date | null;
  remoteRef?: string;
  note?: string;
}

/**
 * Appends one attempt (numbered after the ones before it) and moves the delivery, from where the
 * table lets it reach `r.status`: a completed delivery is never touched again.
 */
export async function recordDeliveryAttempt(db: DataSource, deliveryId: string, r: AttemptRecord): Promise<void> {
  await db.query(
    `UPDATE reporting_deliveries SET
        attempts = attempts || jsonb_build_array($2::jsonb || jsonb_build_object('number', jsonb_array_length(attempts) + 1)),
        status = $3, next_attempt_at = $4,
        remote_ref = coalesce($5, remote_ref), note = coalesce($6, note),
        completed_at = CASE WHEN $3 IN ('completed','failed') THEN now() ELSE NULL END,
        updated_at = now()
      WHERE id = $1 AND status = ANY($7::text[])`,
    [deliveryId, JSON.stringify(r.attempt), r.status, r.nextAttemptAt, r.remoteRef ?? null, r.note ?? null, reportDeliveryMachine.sourcesOf(r.status)],
  );
}

/** A delivery whose workflow was cancelled or ended without an outcome: `failed`, so a manual retry can find it. */
export async function abandonReportDelivery(db: DataSource, deliveryId: string): Promise<void> {
  await db.query(`UPDATE reporting_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = now(), updated_at = now() WHERE id = $1 AND status = ANY($2::text[])`, [
    deliveryId,
    reportDeliveryMachine.sourcesOf('failed', ['pending', 'delivering']),
  ]);
}

/** Counts of an owner's deliveries by status. */
async function deliveryCounts(db: Queryable, owner: DeliveryOwner): Promise<{ total: number; open: number; failed: number }> {
  const [row] = await db.query(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status IN ('pending','delivering'))::int AS open,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM reporting_deliveries WHERE ${ownerColumn(owner)} = $1`,
    [ownerId(owner)],
  );
  return row;
}

/**
 * The owner's delivery status once its delivery workflows ended: `completed` when every delivery
 * completed or was skipped, else `failed` with "n of m deliveries failed" (the Flow rule). A run or
 * job run still `delivering` moves with it (by its own module). Answers the final status.
 */
export async function settleDeliveries(db: DataSource, owner: DeliveryOwner): Promise<'completed' | 'failed'> {
  const { total, open, failed } = await deliveryCounts(db, owner);
  const unfinished = failed + open;
  const status = unfinished === 0 ? 'completed' : 'failed';
  const error = unfinished === 0 ? null : { code: 'ERR_RDLV_004', message: `${unfinished} of ${total} deliveries failed` };
  if (owner.runId !== undefined) await settleRunDeliveries(db, owner.runId, status, error);
  else await settleJobRunDeliveries(db, owner.jobRunId, status, error);
  return status;
}

/**
 * After a manual retry delivered: a run (or job run) that ended `failed` only because of its
 * deliveries completes once none is left failed or open (docs/reporting.md "Deliveries", as Flow
 * runs do): the `failed → completed` move of its table, made and guarded by its own module.
 */
export async function completeOwnerIfDelivered(db: DataSource, owner: DeliveryOwner): Promise<boolean> {
  const { open, failed } = await deliveryCounts(db, owner);
  if (open > 0 || failed > 0) return false;
  return owner.runId !== undefined ? completeRunAfterRedelivery(db, owner.runId) : completeJobRunAfterRedelivery(db, owner.jobRunId);
}

/**
 * `failed`/`skipped → pending` for a manual retry, counting it (its workflow id takes the count).
 * Answers the retry number, or throws the reason it cannot be retried.
 */
export async function reopenDelivery(db: DataSource, deliveryId: string): Promise<{ retry: number } | { refused: ReportDeliveryStatus }> {
  const rows = await modifyReturning<{ manual_retries: number }>(
    db,
    `UPDATE reporting_deliveries SET status = 'pending', manual_retries = manual_retries + 1, next_attempt_at = NULL, completed_at = NULL, updated_at = now(),
            retry_pending_since = now()
      WHERE id = $1 AND status = ANY($2::text[]) RETURNING manual_retries`,
    [deliveryId, reportDeliveryMachine.sourcesOf('pending')],
  );
  if (rows[0]) return { retry: rows[0].manual_retries };
  const d = await loadDelivery(db, deliveryId);
  return { refused: d?.status ?? 'completed' };
}
