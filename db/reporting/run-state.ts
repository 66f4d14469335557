import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { reportRunMachine, type FailedStage, type ReportRunStatus, type RunDataset } from '../../domain/reporting/run-status';
import { addCredits, releaseFreeDocuments, reserveFreeDocuments, spendCredits } from '../documents/billing';
import { modifyReturning, type Queryable } from '../sql';
import { ReportRunEntity } from './report-run.entity';

/**
 * The only writer of `reporting_runs.status` (docs/architecture.md, "State machines"; docs/reporting.md "Statuses").
 * A run is inserted `queued` (or `skipped`) and moved by a conditional UPDATE from the statuses
 * domain/reporting/run-status.ts allows to reach the target: a move that already happened (a
 * retried activity) or that the table does not list (a late step of a cancelled run) changes
 * nothing and answers false. PDF and Excel outputs are charged when the run starts rendering and
 * given back, in the same transaction, when it then fails or is cancelled.
 */

export async function insertReportRun(db: Queryable, run: ReportRunEntity): Promise<void> {
  if (!reportRunMachine.initial.includes(run.status)) throw new Error(`a report run is not created ${run.status}`);
  await db.getRepository(ReportRunEntity).insert(run as QueryDeepPartialEntity<ReportRunEntity>);
}

export interface ReportRunMove {
  runId: string;
  status: ReportRunStatus;
  failedStage?: FailedStage;
  error?: { code: string; message: string };
  skipReason?: string;
}

const ENDED: readonly ReportRunStatus[] = reportRunMachine.ended;

/**
 * Moves a run to `status` if the table allows it from where the run is; a run that leaves
 * `rendering` for `failed` or `cancelled` gets its charged documents back. Returns whether it moved.
 */
export async function moveReportRun(db: DataSource, move: ReportRunMove): Promise<boolean> {
  return db.transaction(async (m) => {
    const params: unknown[] = [move.runId, move.status, reportRunMachine.sourcesOf(move.status)];
    const sets = ['status = $2', 'updated_at = now()'];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (move.failedStage) set('failed_stage', move.failedStage);
    if (move.error) set('error', JSON.stringify(move.error));
    if (move.skipReason) set('skip_reason', move.skipReason);
    if (move.status === 'running') sets.push('started_at = coalesce(started_at, now())');
    if (ENDED.includes(move.status)) sets.push('completed_at = coalesce(completed_at, now())');
    // The row as it was (FROM a locked self-join), so a refund knows what was charged.
    const rows = await modifyReturning<{ project_id: string; documents_charged: number; billing: 'free' | 'credit' | null; charged_at: Date | null; was: ReportRunStatus }>(
      m,
      `UPDATE reporting_runs r SET ${sets.join(', ')}
         FROM (SELECT id, status AS was FROM reporting_runs WHERE id = $1 FOR UPDATE) old
        WHERE r.id = old.id AND r.status = ANY($3::text[])
        RETURNING r.project_id, r.documents_charged, r.billing, r.charged_at, old.was`,
      params,
    );
    const row = rows[0];
    if (!row) return false;
    if ((move.status === 'failed' || move.status === 'cancelled') && row.was === 'rendering' && row.documents_charged > 0) {
      if (row.billing === 'credit') await addCredits(m, row.project_id, row.documents_charged, `refund: report run ${move.status}`);
      else await releaseFreeDocuments(m, row.project_id, row.documents_charged, row.charged_at ?? new Date());
      await m.query(`UPDATE reporting_runs SET documents_charged = 0 WHERE id = $1`, [move.runId]);
    }
    return true;
  });
}

/**
 * `running → rendering`, charging `documents` PDF/Excel outputs against the free quota (`freeLimit`
 * a month) or, with `useCredit`, the credits, in one transaction: a quota or credit error leaves the
 * run `running` for the caller to fail with that code. Answers the billing, or null when the run
 * was no longer running (cancelled meanwhile).
 */
export async function startRendering(db: DataSource, runId: string, charge: { projectId: string; documents: number; useCredit: boolean; freeLimit: number }): Promise<'free' | 'credit' | null> {
  return db.transaction(async (m) => {
    const moved = await modifyReturning(
      m,
      `UPDATE reporting_runs SET status = 'rendering', updated_at = now() WHERE id = $1 AND status = ANY($2::text[]) RETURNING id`,
      [runId, reportRunMachine.sourcesOf('rendering')],
    );
    if (moved.length === 0) return null;
    const billing = charge.useCredit ? 'credit' : 'free';
    if (charge.documents > 0) {
      if (charge.useCredit) await spendCredits(m, charge.projectId, charge.documents, 'report run');
      else await reserveFreeDocuments(m, charge.projectId, charge.documents, charge.freeLimit);
    }
    await m.query(`UPDATE reporting_runs SET documents_charged = $2, billing = $3, charged_at = now() WHERE id = $1`, [runId, charge.documents, billing]);
    return billing;
  });
}

/** Records one dataset's progress in the run's `datasets` (by name): the given fields replace theirs, the others stay. */
export async function recordRunDataset(db: Queryable, runId: string, dataset: Partial<RunDataset> & { name: string }): Promise<void> {
  await db.query(
    `UPDATE reporting_runs SET updated_at = now(),
        datasets = (SELECT coalesce(jsonb_agg(CASE WHEN d->>'name' = $2 THEN d || $3::jsonb ELSE d END ORDER BY i), '[]'::jsonb)
                      FROM jsonb_array_elements(datasets) WITH ORDINALITY AS e(d, i))
      WHERE id = $1`,
    [runId, dataset.name, JSON.stringify(dataset)],
  );
}

/** A file of a finished run, as the render step stored it. */
export interface RunOutputRecord {
  format: 'pdf' | 'excel' | 'csv';
  dataset?: string;
  filename: string;
  key: string;
  contentType: string;
  bytes: number;
  pageCount?: number;
  rowCount?: number;
}

/**
 * `rendering → completed` (or `delivering`, for a run with channels) with the run's output files,
 * in one transaction: a retried attempt replaces what an earlier one recorded, and a run that left
 * `rendering` meanwhile (cancelled) records nothing. Answers whether the run moved.
 */
export async function completeWithOutputs(db: DataSource, run: ReportRunEntity, outputs: RunOutputRecord[], expiresAt: Date, next: 'completed' | 'delivering' = 'completed'): Promise<boolean> {
  return db.transaction(async (m) => {
    const moved = await modifyReturning(
      m,
      `UPDATE reporting_runs SET status = $3, completed_at = CASE WHEN $3 = 'completed' THEN now() END, updated_at = now() WHERE id = $1 AND status = ANY($2::text[]) RETURNING id`,
      [run.id, reportRunMachine.sourcesOf(next, ['rendering']), next],
    );
    if (moved.length === 0) return false;
    await m.query(`DELETE FROM reporting_run_outputs WHERE run_id = $1`, [run.id]);
    for (const o of outputs) {
      await m.query(
        `INSERT INTO reporting_run_outputs (id, run_id, project_id, format, dataset, filename, storage_key, content_type, bytes, page_count, row_count, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [randomUUID(), run.id, run.projectId, o.format, o.dataset ?? null, o.filename, o.key, o.contentType, o.bytes, o.pageCount ?? null, o.rowCount ?? null, expiresAt],
      );
    }
    return true;
  });
}

/**
 * The run's delivery status once its delivery workflows ended (db/reporting/delivery-state.ts
 * counts them): a run still `delivering` ends with it, `failed` at `delivery` with `error`; a run
 * that left `delivering` meanwhile takes only the delivery status. One statement, so the two agree.
 */
export async function settleRunDeliveries(db: Queryable, runId: string, outcome: 'completed' | 'failed', error: { code: string; message: string } | null): Promise<void> {
  await db.query(
    `UPDATE reporting_runs SET delivery_status = $2, updated_at = now(),
        status = CASE WHEN status = ANY($4::text[]) THEN $2 ELSE status END,
        failed_stage = CASE WHEN status = ANY($4::text[]) AND $2 = 'failed' THEN 'delivery' ELSE failed_stage END,
        error = CASE WHEN status = ANY($4::text[]) THEN $3::jsonb ELSE error END,
        completed_at = CASE WHEN status = ANY($4::text[]) THEN now() ELSE completed_at END
      WHERE id = $1`,
    [runId, outcome, error ? JSON.stringify(error) : null, reportRunMachine.sourcesOf(outcome, ['delivering'])],
  );
}

/**
 * `failed → completed` after manual retries delivered every failed delivery (the caller checked
 * none is failed or open): only a run whose delivery status is `failed` and that failed at
 * `delivery` (or did not fail) moves; `failedStage` and `error` are cleared. Answers whether it moved.
 */
export async function completeRunAfterRedelivery(db: Queryable, runId: string): Promise<boolean> {
  const rows = await modifyReturning(
    db,
    `UPDATE reporting_runs SET delivery_status = 'completed', updated_at = now(),
        status = CASE WHEN status = ANY($2::text[]) THEN 'completed' ELSE status END,
        failed_stage = NULL, error = NULL
      WHERE id = $1 AND delivery_status = 'failed' AND (status <> ALL($2::text[]) OR failed_stage = 'delivery')
      RETURNING id`,
    [runId, reportRunMachine.sourcesOf('completed', ['failed'])],
  );
  return rows.length > 0;
}
