import type { DataSource } from 'typeorm';
import { DELIVERY_SHORT_ID_PREFIX, type DeliveryOwner } from '../../db/reporting/delivery-state';
import { ReportDeliveryEntity } from '../../db/reporting/delivery.entity';
import { AppError } from '../../domain/errors';
import { deliveryRetryEntry, type WorkflowOutbox } from '../../platform/workflow-outbox';
import { isUuid } from '../../domain/ids';
import { retryDelivery as reopenAndStart } from '../deliveries/delivery-retry';

/**
 * Report deliveries as the API shows and retries them (docs/reporting.md "Deliveries"): full records with attempts
 * under a run, a masked target only, and a manual retry that re-sends one failed delivery without touching the others.
 */

export interface DeliveryDeps {
  db: DataSource;
  outbox: Pick<WorkflowOutbox, 'start'>;
}

/** The summary a run or job run carries (docs/reporting.md "Runs"): no attempts. */
export const deliverySummary = (d: ReportDeliveryEntity) => ({ id: d.id, channelId: d.channelId, kind: d.kind, target: d.target, status: d.status });

/** Deliveries of runs or job runs, oldest first, grouped by owner id. */
export async function deliveriesOf(db: DataSource, owner: 'runId' | 'jobRunId', ids: string[]): Promise<Map<string, ReportDeliveryEntity[]>> {
  const byOwner = new Map<string, ReportDeliveryEntity[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byOwner;
  const rows = await db
    .getRepository(ReportDeliveryEntity)
    .createQueryBuilder('d')
    .where(`d.${owner} IN (:...ids)`, { ids })
    .orderBy('d.createdAt', 'ASC')
    .addOrderBy('d.id', 'ASC')
    .getMany();
  for (const d of rows) byOwner.get(d[owner]!)?.push(d);
  return byOwner;
}

async function findDelivery(db: DataSource, projectId: string, ref: string): Promise<ReportDeliveryEntity> {
  const where = isUuid(ref) ? { id: ref, projectId } : ref.startsWith(DELIVERY_SHORT_ID_PREFIX) ? { shortId: ref, projectId } : null;
  const d = where ? await db.getRepository(ReportDeliveryEntity).findOneBy(where) : null;
  if (!d) throw new AppError('ERR_RDLV_001');
  return d;
}

/**
 * Re-sends one failed (or skipped) delivery as `report-delivery-<id>-retry-<n>`, with the full
 * retry schedule again. 409 ERR_RDLV_002 when it completed, ERR_RDLV_003 while it is pending or
 * under way. The delivery is reopened with its outbox mark in one statement and its workflow started
 * after the answer (platform/workflow-outbox.ts): Temporal is not on the request path, and a start
 * that fails is made by a worker's sweep.
 */
export async function retryDelivery(deps: DeliveryDeps, projectId: string, ref: string): Promise<ReportDeliveryEntity> {
  const d = await findDelivery(deps.db, projectId, ref);
  await reopenAndStart(deps.db, 'reporting_deliveries', d.id, {
    refusal: async () => {
      const { status } = await findDelivery(deps.db, projectId, d.id);
      return status === 'completed' ? new AppError('ERR_RDLV_002', undefined, { status }) : new AppError('ERR_RDLV_003', undefined, { status });
    },
    start: (retry) => deps.outbox.start(deliveryRetryEntry({ id: d.id, projectId }, retry)),
  });
  return findDelivery(deps.db, projectId, d.id);
}

/** Every failed delivery of a run or job run, re-sent (POST /runs/:id/retry `deliveriesOnly`). Answers how many. */
export async function retryFailedDeliveries(deps: DeliveryDeps, projectId: string, owner: DeliveryOwner): Promise<number> {
  const column = owner.runId ? 'run_id' : 'job_run_id';
  const rows: Array<{ id: string }> = await deps.db.query(`SELECT id FROM reporting_deliveries WHERE ${column} = $1 AND project_id = $2 AND status = 'failed'`, [owner.runId ?? owner.jobRunId, projectId]);
  for (const r of rows) await retryDelivery(deps, projectId, r.id);
  return rows.length;
}
