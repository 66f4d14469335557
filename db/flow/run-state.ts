import { runMachine, type RunStatus } from '../../domain/flow/run-status';
import { modifyReturning, type Queryable } from '../sql';
import type { RunEntity } from './run.entity';

/**
 * The only writer of `flow_runs.status` (docs/architecture.md, "State machines"). A run is inserted in
 * one of the table's initial statuses and moved by a conditional UPDATE from the statuses that
 * domain/flow/run-status.ts allows to reach the target: a move the table does not list, or one that
 * already happened (a retried activity), changes nothing and answers false. TypeORM-free SQL so the
 * API and any activity can use it.
 */

const INSERT_RUN = `INSERT INTO flow_runs
  (id, short_id, gate_id, project_id, schema_version, status, source, input_payload, validation, metadata, workflow_pending, created_at, updated_at, completed_at,
   billing, documents_charged, charged_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, $15, $16)`;

/** Records a submitted run (plain SQL: the submission hot path). */
export async function insertRun(db: Queryable, run: RunEntity): Promise<void> {
  if (!runMachine.initial.includes(run.status)) throw new Error(`a run is not created ${run.status}`);
  await db.query(INSERT_RUN, [
    run.id,
    run.shortId,
    run.gateId,
    run.projectId,
    run.schemaVersion,
    run.status,
    run.source,
    JSON.stringify(run.inputPayload),
    JSON.stringify(run.validation),
    run.metadata === null ? null : JSON.stringify(run.metadata),
    run.workflowPending,
    run.createdAt,
    run.completedAt,
    run.billing ?? null,
    run.documentsCharged ?? 0,
    run.chargedAt ?? null,
  ]);
}

export interface RunMove {
  runId: string;
  status: RunStatus;
  approvalStatus?: string | null;
  deliveryStatus?: string | null;
  error?: string | null;
  /** The failure's catalogued code, stored next to `error`. */
  errorCode?: string | null;
  /** Sets `completed_at` (the run reached an end: completed, failed, rejected, expired). */
  finished?: boolean;
}

/**
 * Moves a run to `status` with the given fields, if the table allows it from where the run is.
 * Every move is the run workflow's (or follows it), so it also notes that the workflow did start.
 */
export async function moveRun(db: Queryable, u: RunMove): Promise<boolean> {
  const params: unknown[] = [u.runId, u.status, runMachine.sourcesOf(u.status)];
  const sets = ['status = $2', 'updated_at = now()', 'workflow_pending = false', 'workflow_started_at = coalesce(workflow_started_at, now())'];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (u.approvalStatus !== undefined) set('approval_status', u.approvalStatus);
  if (u.deliveryStatus !== undefined) set('delivery_status', u.deliveryStatus);
  if (u.error !== undefined) set('error', u.error);
  if (u.errorCode !== undefined) set('error_code', u.errorCode);
  if (u.finished) sets.push('completed_at = coalesce(completed_at, now())');
  const rows = await modifyReturning(db, `UPDATE flow_runs SET ${sets.join(', ')} WHERE id = $1 AND status = ANY($3::text[]) RETURNING id`, params);
  return rows.length > 0;
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
    `UPDATE flow_runs r SET status = 'completed', delivery_status = 'completed', error = NULL, error_code = NULL, updated_at = now()
      WHERE r.id::text = (SELECT run_id FROM webhook_deliveries WHERE id = $1 AND source = 'flow') AND r.status = ANY($2::text[]) AND r.delivery_status = 'failed'
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.run_id = r.id::text AND d.source = 'flow' AND d.status <> 'completed')
      RETURNING r.id`,
    [deliveryId, runMachine.sourcesOf('completed', ['failed'])],
  );
  return rows.length > 0;
}
