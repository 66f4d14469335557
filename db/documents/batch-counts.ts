import type { Queryable } from '../sql';

export interface BatchCounts {
  completedJobs: number;
  failedJobs: number;
  cancelledJobs: number;
  openJobs: number;
}

/** A batch's counts, derived from its jobs. */
export async function batchCounts(db: Queryable, batchId: string): Promise<BatchCounts> {
  const rows: Array<{ status: string; n: number }> = await db.query(
    `SELECT status, count(*)::int AS n FROM document_jobs WHERE batch_id = $1 GROUP BY status`,
    [batchId],
  );
  const by = Object.fromEntries(rows.map((r) => [r.status, r.n]));
  return {
    completedJobs: by.completed ?? 0,
    failedJobs: by.failed ?? 0,
    cancelledJobs: by.cancelled ?? 0,
    openJobs: (by.queued ?? 0) + (by.processing ?? 0),
  };
}
