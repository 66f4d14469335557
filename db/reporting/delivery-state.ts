import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ChannelTarget } from '../../domain/reporting/channel-kinds';
import type { ReportDeliveryAttempt, ReportDeliveryStatus } from '../../domain/reporting/delivery';
import { randomBase62 } from '../../domain/signing';
import { modifyReturning, type Queryable } from '../sql';
import type { ChannelEntity } from './channel.entity';
import { ReportDeliveryEntity } from './delivery.entity';

/**
 * The only writer of `reporting_deliveries` and of the delivery status of runs and job runs
 * (docs/reporting.md "Deliveries", "Statuses"): a delivery is `pending` → `delivering` →
 * `completed` | `failed`, `skipped` for a channel that is inactive or gone; a manual retry moves
 * `failed` (or `skipped`) back to `pending`.
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
export async function insertDeliveries(db: DataSource, projectId: string, owner: DeliveryOwner, channels: PlannedChannel[]): Promise<string[]> {
  await db.transaction(async (m) => {
    for (const c of channels) {
      const targets = c.skip ? [{ key: 'default', masked: '' }] : c.targets;
      for (const t of targets) {
        await m.query(
          `INSERT INTO reporting_deliveries (id, project_id, short_id, ${ownerColumn(owner)}, channel_id, kind, target_key, target, status, note, completed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT DO NOTHING`,
          [randomUUID(), projectId, DELIVERY_SHORT_ID_PREFIX + randomBase62(16), ownerId(owner), c.channelId, c.kind, t.key, t.masked, c.skip ? 'skipped' : 'pending', c.skip ?? null, c.skip ? new Date() : null],
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
  await db.query(`UPDATE reporting_deliveries SET status = 'delivering', updated_at = now() WHERE id = $1 AND status IN ('pending','delivering')`, [d.id]);
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

/** Appends one attempt (numbered after the ones before it) and moves the delivery; a completed delivery is never touched again. */
export async function recordDeliveryAttempt(db: DataSource, deliveryId: string, r: AttemptRecord): Promise<void> {
  await db.query(
    `UPDATE reporting_deliveries SET
        attempts = attempts || jsonb_build_array($2::jsonb || jsonb_build_object('number', jsonb_array_length(attempts) + 1)),
        status = $3, next_attempt_at = $4,
        remote_ref = coalesce($5, remote_ref), note = coalesce($6, note),
        completed_at = CASE WHEN $3 IN ('completed','failed') THEN now() ELSE NULL END,
        updated_at = now()
      WHERE id = $1 AND status <> 'completed'`,
    [deliveryId, JSON.stringify(r.attempt), r.status, r.nextAttemptAt, r.remoteRef ?? null, r.note ?? null],
  );
}

/** A delivery whose workflow was cancelled or ended without an outcome: `failed`, so a manual retry can find it. */
export async function abandonReportDelivery(db: DataSource, deliveryId: string): Promise<void> {
  await db.query(`UPDATE reporting_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = now(), updated_at = now() WHERE id = $1 AND status IN ('pending','delivering')`, [deliveryId]);
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
 * job run still `delivering` moves with it. Answers the final status.
 */
export async function settleDeliveries(db: DataSource, owner: DeliveryOwner): Promise<'completed' | 'failed'> {
  const { total, open, failed } = await deliveryCounts(db, owner);
  const unfinished = failed + open;
  const status = unfinished === 0 ? 'completed' : 'failed';
  const error = unfinished === 0 ? null : JSON.stringify({ code: 'ERR_RDLV_004', message: `${unfinished} of ${total} deliveries failed` });
  await db.query(
    `UPDATE ${ownerTable(owner)} SET delivery_status = $2, updated_at = now(),
        status = CASE WHEN status = 'delivering' THEN $2 ELSE status END,
        ${owner.runId ? `failed_stage = CASE WHEN status = 'delivering' AND $2 = 'failed' THEN 'delivery' ELSE failed_stage END,` : ''}
        error = CASE WHEN status = 'delivering' THEN $3::jsonb ELSE error END,
        completed_at = CASE WHEN status = 'delivering' THEN now() ELSE completed_at END
      WHERE id = $1`,
    [ownerId(owner), status, error],
  );
  return status;
}

/**
 * After a manual retry delivered: a run (or job run) that ended `failed` only because of its
 * deliveries completes once none is left failed or open (docs/reporting.md "Deliveries", as Flow
 * runs do). The one move out of `failed`, so it is guarded here and not in the state machine.
 */
export async function completeOwnerIfDelivered(db: DataSource, owner: DeliveryOwner): Promise<boolean> {
  const { open, failed } = await deliveryCounts(db, owner);
  if (open > 0 || failed > 0) return false;
  const rows = await modifyReturning(
    db,
    `UPDATE ${ownerTable(owner)} SET delivery_status = 'completed', updated_at = now(),
        status = CASE WHEN status = 'failed' THEN 'completed' ELSE status END,
        ${owner.runId ? `failed_stage = NULL,` : ''} error = NULL
      WHERE id = $1 AND delivery_status = 'failed' AND (status <> 'failed' OR ${owner.runId ? `failed_stage = 'delivery'` : `error->>'code' = 'ERR_RDLV_004'`})
      RETURNING id`,
    [ownerId(owner)],
  );
  return rows.length > 0;
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
      WHERE id = $1 AND status IN ('failed','skipped') RETURNING manual_retries`,
    [deliveryId],
  );
  if (rows[0]) return { retry: rows[0].manual_retries };
  const d = await loadDelivery(db, deliveryId);
  return { refused: d?.status ?? 'completed' };
}
