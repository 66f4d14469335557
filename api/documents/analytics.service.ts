import { creditBalance, freeDocumentsUsed, nextMonthStart } from '../../db/documents/billing';
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
 * Beyond both forms (for the dashboard's Usage page, docs/documents.md): each day's completed and
 * failed counts beside its `count`, and `byTemplate`.
 */
export async function documentAnalytics(deps: DocumentDeps, projectId: string, period: Period) {
  const params = [projectId, period.startDate, period.endDate];
  const range = `project_id = $1 AND created_at >= $2 AND created_at <= $3`;
  const ended = `count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'failed')::int AS failed`;
  const [byStatusRows, byFormatRows, byDateRows, [avg], byTemplateRows] = await Promise.all([
    deps.db.query(`SELECT status, count(*)::int AS n FROM document_jobs WHERE ${range} GROUP BY status`, params),
    deps.db.query(`SELECT format, count(*)::int AS n FROM document_jobs WHERE ${range} GROUP BY format`, params),
    deps.db.query(
      `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS date, count(*)::int AS count, ${ended}
         FROM document_jobs WHERE ${range} GROUP BY 1 ORDER BY 1`,
      params,
    ),
    deps.db.query(`SELECT avg(generation_ms)::float AS ms FROM document_jobs WHERE ${range} AND status = 'completed'`, params),
    // Per template, with its name as it is now (a deleted template's jobs keep their id and name).
    deps.db.query(
      `SELECT j.template_id AS "templateId", t.name AS "templateName", j.total, j.completed, j.failed
         FROM (SELECT template_id, count(*)::int AS total, ${ended} FROM document_jobs WHERE ${range} GROUP BY template_id) j
         LEFT JOIN templates t ON t.id = j.template_id AND t.project_id = $1
        ORDER BY j.total DESC, t.name, j.template_id`,
      params,
    ),
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
    byDate: byDateRows as Array<{ date: string; count: number; completed: number; failed: number }>,
    byTemplate: (byTemplateRows as Array<{ templateId: string; templateName: string | null; total: number; completed: number; failed: number }>).map((t) => ({
      ...t,
      successRate: successRate(t.completed, t.failed),
    })),
    summary: { totalDocuments: total, successfulDocuments: byStatus.completed, failedDocuments: byStatus.failed, successRate: rate },
    byStatus,
    period: { startDate: period.startDate.toISOString(), endDate: period.endDate.toISOString() },
    successRate: rate,
    avgGenerationTimeMs,
  };
}

/**
 * GET /api/documents/quota: this calendar month's (UTC) free documents against the project's
 * quota (`FREE_DOCUMENTS_PER_MONTH`) and its credit balance, as generation spends them
 * (db/documents/billing.ts): a failed or cancelled job's free document is given back.
 */
export async function documentQuota(deps: Pick<DocumentDeps, 'db' | 'config'>, projectId: string, now = new Date()) {
  const limit = deps.config.documents.freeDocumentsPerMonth;
  const [used, balance] = await Promise.all([freeDocumentsUsed(deps.db, projectId, now), creditBalance(deps.db, projectId)]);
  return {
    month: now.toISOString().slice(0, 7),
    resetsAt: nextMonthStart(now).toISOString(),
    freeDocuments: { limit, used, remaining: Math.max(0, limit - used) },
    credits: { balance },
  };
}
