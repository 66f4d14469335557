import type { DataSource } from 'typeorm';
import { RUN_STATUSES, type RunStatus } from '../../domain/flow/run-status';
import { bucketStarts, fillBuckets, percentOf, type Granularity, type PeriodWindow } from '../../domain/flow/analytics-periods';

/**
 * Run analytics of one workspace (docs/flow.md, "Analytics"): SQL aggregates over flow_runs in a
 * period window, optionally one gate. Every query is bound to the project, so another
 * workspace's runs can never be counted. Windows include both ends (`from` ≤ created_at ≤ `to`).
 */

export interface AnalyticsScope {
  projectId: string;
  window: PeriodWindow;
  /** A gate of the project, already resolved to its UUID; undefined for the whole workspace. */
  gateId?: string;
}

/** $1 project, $2 from, $3 to, $4 gate (or null): the shared prefix of every run query below. */
export const scopeParams = (s: AnalyticsScope) => [s.projectId, s.window.from, s.window.to, s.gateId ?? null];
const RUNS_IN_SCOPE = `r.project_id = $1 AND r.created_at >= $2 AND r.created_at <= $3 AND ($4::uuid IS NULL OR r.gate_id = $4)`;

/** Statuses a run ends in; the success rate is completed among these. */
const FINISHED: RunStatus[] = ['completed', 'failed', 'validation_failed', 'rejected', 'expired'];
const IN_PROGRESS: RunStatus[] = ['validated', 'rendering', 'delivering'];

const periodOf = (s: AnalyticsScope) => ({ period: s.window.period, from: s.window.from, to: s.window.to, gateId: s.gateId ?? null });

async function countsByStatusAndSource(db: DataSource, s: AnalyticsScope) {
  const rows: Array<{ status: RunStatus; source: 'rest' | 'mcp'; n: number }> = await db.query(
    `SELECT r.status, r.source, count(*)::int AS n FROM flow_runs r WHERE ${RUNS_IN_SCOPE} GROUP BY 1, 2`,
    scopeParams(s),
  );
  const byStatus = Object.fromEntries(RUN_STATUSES.map((st) => [st, 0])) as Record<RunStatus, number>;
  const bySource = { rest: 0, mcp: 0 };
  for (const r of rows) {
    byStatus[r.status] += r.n;
    bySource[r.source] += r.n;
  }
  return { byStatus, bySource, total: rows.reduce((sum, r) => sum + r.n, 0) };
}

const sum = (byStatus: Record<RunStatus, number>, statuses: RunStatus[]) => statuses.reduce((n, st) => n + byStatus[st], 0);

export async function overview(db: DataSource, s: AnalyticsScope) {
  const { byStatus, total } = await countsByStatusAndSource(db, s);
  const [timing] = await db.query(
    `SELECT avg(extract(epoch FROM r.completed_at - r.created_at) * 1000) AS avg_ms
       FROM flow_runs r WHERE ${RUNS_IN_SCOPE} AND r.status = 'completed' AND r.completed_at IS NOT NULL`,
    scopeParams(s),
  );
  const [gates] = await db.query(
    `SELECT count(*)::int AS n FROM flow_gates WHERE project_id = $1 AND deleted_at IS NULL AND status = 'active' AND ($2::uuid IS NULL OR id = $2)`,
    [s.projectId, s.gateId ?? null],
  );
  return {
    ...periodOf(s),
    totals: {
      runs: total,
      completed: byStatus.completed,
      failed: byStatus.failed,
      validationFailed: byStatus.validation_failed,
      inProgress: sum(byStatus, IN_PROGRESS),
      inReview: byStatus.review_required,
      approved: byStatus.approved,
      rejected: byStatus.rejected,
      expired: byStatus.expired,
    },
    successRate: percentOf(byStatus.completed, sum(byStatus, FINISHED)),
    validationPassRate: percentOf(total - byStatus.validation_failed, total),
    avgTimeToCompleteMs: timing.avg_ms === null ? null : Math.round(Number(timing.avg_ms)),
    activeGates: gates.n as number,
  };
}

export async function runOutcomes(db: DataSource, s: AnalyticsScope) {
  const { byStatus, bySource, total } = await countsByStatusAndSource(db, s);
  return { ...periodOf(s), total, byStatus, bySource };
}

export async function throughput(db: DataSource, s: AnalyticsScope, granularity: Granularity) {
  const rows: Array<{ bucket: string; runs: number; completed: number; failed: number; validation_failed: number }> = await db.query(
    `SELECT to_char(date_trunc($5, r.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS bucket,
            count(*)::int AS runs,
            count(*) FILTER (WHERE r.status = 'completed')::int AS completed,
            count(*) FILTER (WHERE r.status = 'failed')::int AS failed,
            count(*) FILTER (WHERE r.status = 'validation_failed')::int AS validation_failed
       FROM flow_runs r WHERE ${RUNS_IN_SCOPE} GROUP BY 1`,
    [...scopeParams(s), granularity],
  );
  const byKey = new Map(rows.map((r) => [r.bucket, { runs: r.runs, completed: r.completed, failed: r.failed, validationFailed: r.validation_failed }]));
  const empty = () => ({ runs: 0, completed: 0, failed: 0, validationFailed: 0 });
  return { ...periodOf(s), granularity, buckets: fillBuckets(bucketStarts(s.window, granularity), byKey, empty) };
}

/** Top-N lists stay short enough for a dashboard; codes are few (contract §5) and all shown. */
const TOP_FIELDS = 20;

export async function validationErrors(db: DataSource, s: AnalyticsScope) {
  const failed = `FROM flow_runs r WHERE ${RUNS_IN_SCOPE} AND r.status = 'validation_failed'`;
  // Details are stored as the engine reported them (contract §5: {field, message, code}).
  const details = `FROM flow_runs r CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(r.validation->'details') = 'array' THEN r.validation->'details' ELSE '[]'::jsonb END) d
    WHERE ${RUNS_IN_SCOPE} AND r.status = 'validation_failed'`;
  const params = scopeParams(s);
  const [layers, byCode, byField, [totals]] = await Promise.all([
    db.query(`SELECT r.validation->>'failedLayer' AS layer, count(*)::int AS n ${failed} GROUP BY 1`, params),
    db.query(`SELECT d->>'code' AS code, count(*)::int AS count ${details} GROUP BY 1 ORDER BY 2 DESC, 1`, params),
    db.query(`SELECT d->>'field' AS field, count(*)::int AS count ${details} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${TOP_FIELDS}`, params),
    db.query(`SELECT count(*)::int AS errors ${details}`, params),
  ]);
  const byLayer = { schema: 0, business_rules: 0 };
  for (const l of layers as Array<{ layer: string | null; n: number }>) {
    if (l.layer === 'schema' || l.layer === 'business_rules') byLayer[l.layer] += l.n;
  }
  return {
    ...periodOf(s),
    failedRuns: (layers as Array<{ n: number }>).reduce((n, l) => n + l.n, 0),
    totalErrors: totals.errors as number,
    byCode,
    byField,
    byLayer,
  };
}

export async function gateMetrics(db: DataSource, s: AnalyticsScope) {
  const rows = await db.query(
    `SELECT g.id, g.short_id, g.name, g.slug, g.status,
            count(r.id)::int AS runs,
            count(r.id) FILTER (WHERE r.status = 'completed')::int AS completed,
            count(r.id) FILTER (WHERE r.status = 'failed')::int AS failed,
            count(r.id) FILTER (WHERE r.status = 'validation_failed')::int AS validation_failed,
            count(r.id) FILTER (WHERE r.status = ANY($5))::int AS finished,
            max(r.created_at) AS last_run_at
       FROM flow_gates g
       LEFT JOIN flow_runs r ON r.gate_id = g.id AND r.created_at >= $2 AND r.created_at <= $3
      WHERE g.project_id = $1 AND g.deleted_at IS NULL AND ($4::uuid IS NULL OR g.id = $4)
      GROUP BY g.id ORDER BY runs DESC, g.name, g.id`,
    [...scopeParams(s), FINISHED],
  );
  return {
    ...periodOf(s),
    gates: rows.map((g: Record<string, any>) => ({
      gateId: g.id,
      shortId: g.short_id,
      name: g.name,
      slug: g.slug,
      status: g.status,
      runs: g.runs,
      completed: g.completed,
      failed: g.failed,
      validationFailed: g.validation_failed,
      successRate: percentOf(g.completed, g.finished),
      lastRunAt: g.last_run_at,
    })),
  };
}
