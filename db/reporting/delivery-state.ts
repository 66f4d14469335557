import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ChannelTarget } from '../../domain/reporting/channel-kinds';
import { randomBase62 } from '../../domain/signing';
import { insertReportDelivery } from '../deliveries/delivery-state';
import type { Queryable } from '../sql';
import type { ChannelEntity } from './channel.entity';
import { ReportDeliveryEntity } from './delivery.entity';
import { completeJobRunAfterRedelivery, settleJobRunDeliveries } from './job-run-state';
import { completeRunAfterRedelivery, settleRunDeliveries } from './run-state';

/**
 * A run's or job run's report deliveries (docs/reporting.md "Deliveries", "Statuses"): their rows,
 * and the owner's `delivery_status` while they are under way. The deliveries' `status` is moved by
 * db/deliveries/delivery-state.ts (the attempt recorder of both delivery tables); the owner's `status`
 * by its own module (run-state.ts, job-run-state.ts), which this one calls.
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
        await insertReportDelivery(m, { id: randomUUID(), projectId, shortId: DELIVERY_SHORT_ID_PREFIX + randomBase62(16), owner: [ownerColumn(owner), ownerId(owner)], channelId: c.channelId, kind: c.kind, target: t, skip: c.skip });
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

/** The owner's delivery status as its first attempt begins. */
export async function markOwnerDelivering(db: Queryable, d: Pick<ReportDeliveryEntity, 'runId' | 'jobRunId'>): Promise<void> {
  const owner: DeliveryOwner = d.runId ? { runId: d.runId } : { jobRunId: d.jobRunId! };
  await db.query(`UPDATE ${ownerTable(owner)} SET delivery_status = 'delivering', updated_at = now() WHERE id = $1 AND delivery_status IN ('none','pending')`, [ownerId(owner)]);
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
