import { recordRunOutcome } from './gate-circuit';
import type { RunStatus } from './run.entity';
import { modifyReturning, type Queryable } from '../sql';

/**
 * The run-record writes of the Flow run workflow (activities/flow) and of Flow deliveries that
 * end after their run did (a manual retry, activities/webhooks). TypeORM-free SQL so any
 * activity can use it.
 */

export interface RunUpdate {
  runId: string;
  status?: RunStatus;
  approvalStatus?: string | null;
  deliveryStatus?: string | null;
  error?: string | null;
  /** Sets `completed_at` (the run reached an end: completed, failed, rejected, expired). */
  finished?: boolean;
}

/** Moves a run; only the given fields change. Also notes that the workflow did start. */
export async function updateRun(db: Queryable, u: RunUpdate): Promise<void> {
  const sets: string[] = ['updated_at = now()', 'workflow_pending = false', 'workflow_started_at = coalesce(workflow_started_at, now())'];
  const params: unknown[] = [u.runId];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (u.status !== undefined) set('status', u.status);
  if (u.approvalStatus !== undefined) set('approval_status', u.approvalStatus);
  if (u.deliveryStatus !== undefined) set('delivery_status', u.deliveryStatus);
  if (u.error !== undefined) set('error', u.error);
  if (u.finished) sets.push('completed_at = coalesce(completed_at, now())');
  await db.query(`UPDATE flow_runs SET ${sets.join(', ')} WHERE id = $1`, params);
}

export async function setRunArtefact(db: Queryable, runId: string, key: string): Promise<void> {
  await db.query(`UPDATE flow_runs SET artefact_key = $2, artefact_stored_at = now(), artefact_expired_at = NULL, updated_at = now() WHERE id = $1`, [runId, key]);
}

export interface DeliveryTally {
  total: number;
  completed: number;
  failed: number;
}

export async function tallyRunDeliveries(db: Queryable, runId: string): Promise<DeliveryTally> {
  const [row]: Array<{ total: number; completed: number; failed: number }> = await db.query(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'completed')::int AS completed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM webhook_deliveries WHERE run_id = $1 AND source = 'flow'`,
    [runId],
  );
  return row;
}

/**
 * The end of a run's delivery step, from the delivery records themselves (not from what the
 * workflow's children returned: a manual retry may have fixed one in the meantime): every
 * delivery completed → `completed`, otherwise `failed`, also reported to the gate's circuit
 * breaker. Returns the status written.
 */
export async function finishRunDeliveries(db: Queryable, runId: string): Promise<'completed' | 'failed'> {
  const t = await tallyRunDeliveries(db, runId);
  const ok = t.completed === t.total;
  // The gate's circuit breaker first (counted once per run), so a reader who sees the run ended sees it counted.
  await recordRunOutcome(db, { runId, outcome: ok ? 'success' : 'failure' });
  await updateRun(db, {
    runId,
    status: ok ? 'completed' : 'failed',
    deliveryStatus: ok ? 'completed' : 'failed',
    error: ok ? null : `${t.total - t.completed} of ${t.total} deliveries failed`,
    finished: true,
  });
  return ok ? 'completed' : 'failed';
}

/**
 * After a Flow delivery (by id) completed outside its run's workflow (a manual retry): a `failed` run
 * whose deliveries have now all completed becomes `completed`. A run still delivering is left
 * to its workflow, which reads the records when its deliveries end. One statement, so two
 * retries finishing together cannot disagree.
 */
export async function completeRunIfDelivered(db: Queryable, deliveryId: string): Promise<boolean> {
  const rows = await modifyReturning<{ id: string }>(
    db,
    `UPDATE flow_runs r SET status = 'completed', delivery_status = 'completed', error = NULL, updated_at = now()
      WHERE r.id::text = (SELECT run_id FROM webhook_deliveries WHERE id = $1 AND source = 'flow') AND r.status = 'failed' AND r.delivery_status = 'failed'
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.run_id = r.id::text AND d.source = 'flow' AND d.status <> 'completed')
      RETURNING r.id`,
    [deliveryId],
  );
  return rows.length > 0;
}

/** Runs whose artefact is past retention: stored before `now - retention days` of the project's plan. */
export async function expiredRunArtefacts(db: Queryable, limit: number, retentionDays: Record<string, number>, defaultDays: number): Promise<Array<{ id: string; artefact_key: string }>> {
  return db.query(
    `SELECT r.id, r.artefact_key FROM flow_runs r JOIN projects p ON p.id = r.project_id
      WHERE r.artefact_key IS NOT NULL AND r.artefact_expired_at IS NULL
        AND r.artefact_stored_at < now() - make_interval(days => coalesce(($2::jsonb ->> coalesce(p.plan, 'free'))::int, $3))
      ORDER BY r.artefact_stored_at LIMIT $1`,
    [limit, JSON.stringify(retentionDays), defaultDays],
  );
}

export async function markArtefactExpired(db: Queryable, runId: string): Promise<void> {
  await db.query(`UPDATE flow_runs SET artefact_expired_at = now(), updated_at = now() WHERE id = $1`, [runId]);
}
