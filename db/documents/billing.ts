import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors';
import { modifyReturning, type Queryable } from '../sql';

/**
 * Quotas and credits. Both are spent by a single conditional UPDATE, so concurrent requests can
 * never take more than there is: the row lock serialises them and the WHERE clause refuses the
 * one that would overspend.
 */

function monthKey(at = new Date()): string {
  return at.toISOString().slice(0, 7);
}

/** Reserves `n` free documents of this month's quota, or throws ERR_QUOTA_008. */
export async function reserveFreeDocuments(db: Queryable, projectId: string, n: number, limit: number, at = new Date()): Promise<void> {
  const month = monthKey(at);
  await db.query(`INSERT INTO document_quota_usage (project_id, month, free_used) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`, [projectId, month]);
  const rows = await modifyReturning(
    db,
    `UPDATE document_quota_usage SET free_used = free_used + $3
      WHERE project_id = $1 AND month = $2 AND free_used + $3 <= $4 RETURNING free_used`,
    [projectId, month, n, limit],
  );
  if (rows.length === 0) {
    const used = await freeDocumentsUsed(db, projectId, at);
    throw new AppError('ERR_QUOTA_008', undefined, { limit, used, requested: n, resetsAt: nextMonthStart(at).toISOString() });
  }
}

/** Gives back free documents of a job that failed or was cancelled (in the month it was reserved). */
export async function releaseFreeDocuments(db: Queryable, projectId: string, n: number, reservedAt: Date): Promise<void> {
  await db.query(`UPDATE document_quota_usage SET free_used = GREATEST(free_used - $3, 0) WHERE project_id = $1 AND month = $2`, [
    projectId,
    monthKey(reservedAt),
    n,
  ]);
}

export async function freeDocumentsUsed(db: Queryable, projectId: string, at = new Date()): Promise<number> {
  const rows: Array<{ free_used: number }> = await db.query(`SELECT free_used FROM document_quota_usage WHERE project_id = $1 AND month = $2`, [projectId, monthKey(at)]);
  return rows[0]?.free_used ?? 0;
}

/** When this month's free quota starts again: the first instant of the next calendar month (UTC). */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** Spends `n` credits, or throws ERR_QUOTA_011. The ledger records why. */
export async function spendCredits(db: Queryable, projectId: string, n: number, reason: string, jobId?: string): Promise<void> {
  const rows = await modifyReturning(db, `UPDATE credit_balances SET balance = balance - $2 WHERE project_id = $1 AND balance >= $2 RETURNING balance`, [
    projectId,
    n,
  ]);
  if (rows.length === 0) {
    throw new AppError('ERR_QUOTA_011', undefined, { required: n, balance: await creditBalance(db, projectId) });
  }
  await addLedgerEntry(db, projectId, -n, reason, jobId);
}

/** Adds credits (operator grant, or the refund of a failed or cancelled job). */
export async function addCredits(db: Queryable, projectId: string, n: number, reason: string, jobId?: string): Promise<number> {
  const rows = await modifyReturning<{ balance: number }>(
    db,
    `INSERT INTO credit_balances (project_id, balance) VALUES ($1, $2)
      ON CONFLICT (project_id) DO UPDATE SET balance = credit_balances.balance + EXCLUDED.balance RETURNING balance`,
    [projectId, n],
  );
  await addLedgerEntry(db, projectId, n, reason, jobId);
  return rows[0].balance;
}

export async function creditBalance(db: Queryable, projectId: string): Promise<number> {
  const rows: Array<{ balance: number }> = await db.query(`SELECT balance FROM credit_balances WHERE project_id = $1`, [projectId]);
  return rows[0]?.balance ?? 0;
}

async function addLedgerEntry(db: Queryable, projectId: string, delta: number, reason: string, jobId?: string): Promise<void> {
  await db.query(`INSERT INTO credit_ledger (id, project_id, delta, reason, job_id) VALUES ($1, $2, $3, $4, $5)`, [randomUUID(), projectId, delta, reason, jobId ?? null]);
}
