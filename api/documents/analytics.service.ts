import { successRate } from '../../domain/documents/analytics';
import { AppError } from '../../domain/errors';
import type { DocumentDeps } from './documents.service';

const DAY_MS = 24 * 3600 * 1000;

export interface Period {
  startDate: Date;
  endDate: Date;
}

/** Default: the last 30 days up to now. */
export function periodOf(q: { startDate?: Date; endDate?: Date }, now = new Date()): Period {
  const endDate = q.endDate ?? now;
  const startDate = q.startDate ?? new Date(endDate.getTime() - 30 * DAY_MS);
  if (startDate > endDate) throw new AppError('ERR_VALID_001', 'startDate must not be after endDate', { field: 'startDate' });
  return { startDate, endDate };
}


/**
 * Contract §4: one body carrying both published forms (A: totals, byFormat, byDate; B: summary,
 * byStatus, period), plus successRate and avgGenerationTimeMs. Computed in SQL over the jobs table.
 */
export async function documentAnalytics(deps: DocumentDeps, projectId: string, period: Period) {
  const params = [projectId, period.startDate, period.endDate];
  const range = `project_id = $1 AND created_at >= $2 AND created_at <= $3`;
  const [byStatusRows, byFormatRows, byDateRows, [avg]] = await Promise.all([
    deps.db.query(`SELECT status, count(*)::int AS n FROM document_jobs WHERE ${range} GROUP BY status`, params),
    deps.db.query(`SELECT format, count(*)::int AS n FROM document_jobs WHERE ${range} GROUP BY format`, params),
    deps.db.query(
      `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS date, count(*)::int AS count
         FROM document_jobs WHERE ${range} GROUP BY 1 ORDER BY 1`,
      params,
    ),
    deps.db.query(`SELECT avg(generation_ms)::float AS ms FROM document_jobs WHERE ${range} AND status = 'completed'`, params),
  ]);
  const byStatus: Record<string, number> = { queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const r of byStatusRows) byStatus[r.status] = r.n;
  const byFormat: Record<string, number> = { pdf: 0, excel: 0 };
  for (const r of byFormatRows) byFormat[r.format] = r.n;
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const rate = successRate(byStatus.completed, byStatus.failed);
  const avgGenerationTimeMs = avg?.ms == null ? 0 : Math.round(avg.ms);
  return {
    totalDocuments: total,
    completedDocuments: byStatus.completed,
    failedDocuments: byStatus.failed,
    byFormat,
    byDate: byDateRows as Array<{ date: string; count: number }>,
    summary: { totalDocuments: total, successfulDocuments: byStatus.completed, failedDocuments: byStatus.failed, successRate: rate },
    byStatus,
    period: { startDate: period.startDate.toISOString(), endDate: period.endDate.toISOString() },
    successRate: rate,
    avgGenerationTimeMs,
  };
}
