import type { Queryable } from '../../db/sql';
import { TemplateEntity } from '../../db/templates/template.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import { successRate } from '../../domain/documents/analytics';
import { AppError } from '../../domain/errors';
import type { AnalyticsQuery } from './templates.schema';
import type { TemplateDeps } from './template-store.service';

/** Spec, GET /api/templates/:id/analytics: usage, performance and a daily trend of one template. */

export interface UsageRange {
  /** Inclusive. */
  start: Date;
  /** Exclusive. */
  end: Date;
}

export interface TemplateUsage {
  /** Documents whose generation was requested in the range, whatever became of them. */
  total: number;
  completed: number;
  failed: number;
  /** Mean generation time of the completed ones; null when none completed. */
  avgGenerationTimeMs: number | null;
  /** Requests per UTC day (`YYYY-MM-DD`), days without any left out. */
  byDay: Array<{ date: string; count: number }>;
}

/** The template's jobs created in [start, end), by status and by UTC day (document_jobs_template_idx). */
async function templateUsage(db: Queryable, templateId: string, range: UsageRange): Promise<TemplateUsage> {
  const params = [templateId, range.start, range.end];
  const where = `template_id = $1 AND created_at >= $2 AND created_at < $3`;
  const [[totals], byDay] = await Promise.all([
    db.query(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              avg(generation_ms) FILTER (WHERE status = 'completed')::float AS avg_ms
         FROM document_jobs WHERE ${where}`,
      params,
    ),
    db.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, count(*)::int AS count
         FROM document_jobs WHERE ${where} GROUP BY 1 ORDER BY 1`,
      params,
    ),
  ]);
  return { total: totals.total, completed: totals.completed, failed: totals.failed, avgGenerationTimeMs: totals.avg_ms, byDay };
}

const PERIOD_DAYS: Record<AnalyticsQuery['period'], number> = { '7d': 7, '30d': 30, '90d': 90, '1y': 365 };
const DAY_MS = 86_400_000;
/** A trend is one entry per day; a range longer than a leap year is refused rather than sent as thousands. */
const MAX_RANGE_DAYS = 366;

/**
 * `startDate`/`endDate` win over `period`; either alone is completed from `period` (end defaults
 * to now). Ranges are whole UTC days, the end day included.
 */
function analyticsRange(query: AnalyticsQuery, now = new Date()): UsageRange {
  const days = PERIOD_DAYS[query.period];
  const endDay = startOfUtcDay(query.endDate ?? (query.startDate ? new Date(query.startDate.getTime() + (days - 1) * DAY_MS) : now));
  const startDay = startOfUtcDay(query.startDate ?? new Date(endDay.getTime() - (days - 1) * DAY_MS));
  if (startDay > endDay) throw new AppError('ERR_VALID_001', 'startDate must not be after endDate', { field: 'startDate' });
  const range = { start: startDay, end: new Date(endDay.getTime() + DAY_MS) };
  if ((range.end.getTime() - range.start.getTime()) / DAY_MS > MAX_RANGE_DAYS) {
    throw new AppError('ERR_VALID_001', `The range may span at most ${MAX_RANGE_DAYS} days`, { field: 'startDate' });
  }
  return range;
}

function startOfUtcDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

export interface TemplateAnalytics {
  template: TemplateEntity;
  usage: { total: number; last7Days: number; last30Days: number };
  performance: { successRate: number; avgGenerationTimeMs: number; failedCount: number };
  trend: Array<{ date: string; count: number }>;
}

export async function templateAnalytics(deps: TemplateDeps, projectId: string, ref: string, query: AnalyticsQuery, now = new Date()): Promise<TemplateAnalytics> {
  const template = await findTemplate(deps.db, projectId, ref);
  const range = analyticsRange(query, now);
  const last = (days: number) => ({ start: new Date(now.getTime() - days * DAY_MS), end: now });
  const [inRange, last7, last30] = await Promise.all([
    templateUsage(deps.db, template.id, range),
    templateUsage(deps.db, template.id, last(7)),
    templateUsage(deps.db, template.id, last(30)),
  ]);
  const counts = new Map(inRange.byDay.map((d) => [d.date, d.count]));
  const trend: Array<{ date: string; count: number }> = [];
  for (let t = range.start.getTime(); t < range.end.getTime(); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    trend.push({ date, count: counts.get(date) ?? 0 });
  }
  return {
    template,
    usage: { total: inRange.total, last7Days: last7.total, last30Days: last30.total },
    performance: {
      successRate: successRate(inRange.completed, inRange.failed),
      avgGenerationTimeMs: Math.round(inRange.avgGenerationTimeMs ?? 0),
      failedCount: inRange.failed,
    },
    trend,
  };
}
