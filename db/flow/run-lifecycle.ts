import { recordRunOutcome } from './gate-circuit';
import { moveRun } from './run-state';
import type { Queryable } from '../sql';

/**
 * The run-record writes of the Flow run workflow (activities/flow) other than its status, which
 * only db/flow/run-state.ts moves. TypeORM-free SQL so any activity can use it.
 */

export async function setRunArtefact(db: Queryable, runId: string, key: string): Promise<void> {
  await db.query(`UPDATE flow_runs SET artefact_key = $2, artefact_stored_at = now(), artefact_expired_at = NULL, updated_at = now() WHERE id = $1`, [runId, key]);
}

export interface DeliveryTally {
  total: number;
  completed: number;
  failed: number;
}

async function tallyRunDeliveries(db: Queryable, runId: string): Promise<DeliveryTally> {
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
 * breaker (`onCircuitOpened` when that report opened it). Returns the status written.
 */
export async function finishRunDeliveries(db: Queryable, runId: string, onCircuitOpened?: () => void): Promise<'completed' | 'failed'> {
  const t = await tallyRunDeliveries(db, runId);
  const ok = t.completed === t.total;
  // The gate's circuit breaker first (counted once per run), so a reader who sees the run ended sees it counted.
  if ((await recordRunOutcome(db, { runId, outcome: ok ? 'success' : 'failure' }))?.opened) onCircuitOpened?.();
  await moveRun(db, {
    runId,
    status: ok ? 'completed' : 'failed',
    deliveryStatus: ok ? 'completed' : 'failed',
    error: ok ? null : `${t.total - t.completed} of ${t.total} deliveries failed`,
    finished: true,
  });
  return ok ? 'completed' : 'failed';
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
