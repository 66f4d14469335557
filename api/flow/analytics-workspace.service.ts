import type { DataSource } from 'typeorm';
import { bucketStarts, fillBuckets, percentOf, type Granularity } from '../../domain/flow/analytics-periods';
import {
  CREDIT_PACKS,
  DOCUMENT_ADD_ONS,
  FLOW_PLAN_PRICES,
  overageCostUsd,
  planId,
  planLimits,
  planPrice,
} from '../../domain/flow/plan-catalogue';
import { monthStart } from '../../domain/flow/plans';
import { scopeParams, type AnalyticsScope } from './analytics.service';

/**
 * Workspace analytics beyond the runs themselves (docs/flow.md, "Analytics"): approvals,
 * deliveries and circuits, billing, the documents-and-runs timeline, the team, and the static
 * price lists. Every query is bound to the project.
 */

const periodOf = (s: AnalyticsScope) => ({ period: s.window.period, from: s.window.from, to: s.window.to, gateId: s.gateId ?? null });
const ms = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v)));

/** Per approver request (one row per run and approver), requested inside the window. */
export async function approvalMetrics(db: DataSource, s: AnalyticsScope) {
  const [a] = await db.query(
    `SELECT count(*)::int AS requested,
            count(*) FILTER (WHERE status = 'approved')::int AS approved,
            count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
            count(*) FILTER (WHERE status = 'expired')::int AS expired,
            count(*) FILTER (WHERE status = 'pending')::int AS pending,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at) * 1000)
              FILTER (WHERE status IN ('approved','rejected') AND decided_at IS NOT NULL) AS median_ms,
            percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at) * 1000)
              FILTER (WHERE status IN ('approved','rejected') AND decided_at IS NOT NULL) AS p90_ms
       FROM flow_approvals
      WHERE project_id = $1 AND created_at >= $2 AND created_at <= $3 AND ($4::uuid IS NULL OR gate_id = $4)`,
    scopeParams(s),
  );
  return {
    ...periodOf(s),
    requested: a.requested as number,
    approved: a.approved as number,
    rejected: a.rejected as number,
    expired: a.expired as number,
    pending: a.pending as number,
    // Among requests that closed: an expired request is a "no" the approver never gave.
    approvalRate: percentOf(a.approved, a.approved + a.rejected + a.expired),
    medianDecisionMs: ms(a.median_ms),
    p90DecisionMs: ms(a.p90_ms),
  };
}

export async function infraHealth(db: DataSource, s: AnalyticsScope) {
  const params = scopeParams(s);
  const [[d], breakers, [render]] = await Promise.all([
    db.query(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE d.status = 'completed')::int AS completed,
              count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
              count(*) FILTER (WHERE d.status IN ('pending','delivering'))::int AS pending,
              avg(jsonb_array_length(d.attempts)) FILTER (WHERE jsonb_array_length(d.attempts) > 0) AS avg_attempts
         FROM webhook_deliveries d
        WHERE d.project_id = $1 AND d.source = 'flow' AND d.created_at >= $2 AND d.created_at <= $3
          AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM flow_runs r WHERE r.id::text = d.run_id AND r.gate_id = $4))`,
      params,
    ),
    // Circuits are state, not history: the live gates as they are now, whatever the period.
    db.query(
      `SELECT id, name, circuit_breaker_enabled, circuit_state, consecutive_failures, circuit_open_until
         FROM flow_gates WHERE project_id = $1 AND deleted_at IS NULL AND ($2::uuid IS NULL OR id = $2)
        ORDER BY (circuit_state <> 'closed') DESC, name, id`,
      [s.projectId, s.gateId ?? null],
    ),
    // The run workflow records render failures as "Render failed: …" (workflows/flow/flow-run.workflow.ts).
    db.query(
      `SELECT count(*)::int AS n FROM flow_runs r
        WHERE r.project_id = $1 AND r.created_at >= $2 AND r.created_at <= $3 AND ($4::uuid IS NULL OR r.gate_id = $4)
          AND r.status = 'failed' AND r.error LIKE 'Render failed:%'`,
      params,
    ),
  ]);
  return {
    ...periodOf(s),
    deliveries: {
      total: d.total as number,
      completed: d.completed as number,
      failed: d.failed as number,
      pending: d.pending as number,
      successRate: percentOf(d.completed, d.completed + d.failed),
      avgAttempts: d.avg_attempts === null ? null : Math.round(Number(d.avg_attempts) * 100) / 100,
    },
    circuitBreakers: breakers.map((g: Record<string, any>) => ({
      gateId: g.id,
      name: g.name,
      enabled: g.circuit_breaker_enabled,
      state: g.circuit_state,
      consecutiveFailures: g.consecutive_failures,
      openUntil: g.circuit_open_until,
    })),
    renderFailures: render.n as number,
  };
}

export async function billingSummary(db: DataSource, projectId: string, now: Date) {
  const since = monthStart(now);
  const [[project], [runs], [gates]] = await Promise.all([
    db.query(`SELECT plan FROM projects WHERE id = $1`, [projectId]),
    db.query(`SELECT count(*)::int AS n FROM flow_runs WHERE project_id = $1 AND created_at >= $2`, [projectId, since]),
    db.query(`SELECT count(*)::int AS n FROM flow_gates WHERE project_id = $1 AND deleted_at IS NULL`, [projectId]),
  ]);
  const id = planId(project?.plan);
  const price = planPrice(id);
  const limits = planLimits(id);
  const overageRuns = limits.hardRunCap ? 0 : Math.max(0, runs.n - limits.runsPerMonth);
  const overage = overageCostUsd(overageRuns, price.overagePerRunUsd);
  return {
    plan: id,
    planName: price.name,
    month: since.toISOString().slice(0, 7),
    periodStart: since,
    runsThisMonth: runs.n as number,
    runsIncluded: limits.runsPerMonth,
    runsRemaining: Math.max(0, limits.runsPerMonth - runs.n),
    overageRuns,
    overagePerRunUsd: price.overagePerRunUsd,
    overageCostUsd: overage,
    monthlyPriceUsd: price.monthlyPriceUsd,
    estimatedTotalUsd: Math.round((price.monthlyPriceUsd + overage) * 100) / 100,
    limits: {
      maxGates: limits.maxGates,
      maxApproversPerGate: limits.maxApproversPerGate,
      contentLimitChars: limits.contentLimitChars,
      retentionDays: limits.artefactRetentionDays,
    },
    gates: { used: gates.n as number, max: limits.maxGates },
  };
}

export async function combinedTimeline(db: DataSource, s: AnalyticsScope, granularity: Granularity) {
  const bucket = `to_char(date_trunc($4, created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
  const params = [s.projectId, s.window.from, s.window.to, granularity];
  const where = `project_id = $1 AND created_at >= $2 AND created_at <= $3`;
  const [docs, runs] = await Promise.all([
    db.query(`SELECT ${bucket} AS bucket, count(*)::int AS n FROM document_jobs WHERE ${where} GROUP BY 1`, params),
    db.query(`SELECT ${bucket} AS bucket, count(*)::int AS n FROM flow_runs WHERE ${where} GROUP BY 1`, params),
  ]);
  const byKey = new Map<string, { documents: number; runs: number }>();
  const entry = (k: string) => byKey.get(k) ?? byKey.set(k, { documents: 0, runs: 0 }).get(k)!;
  for (const r of docs as Array<{ bucket: string; n: number }>) entry(r.bucket).documents = r.n;
  for (const r of runs as Array<{ bucket: string; n: number }>) entry(r.bucket).runs = r.n;
  const buckets = fillBuckets(bucketStarts(s.window, granularity), byKey, () => ({ documents: 0, runs: 0 }));
  const totals = buckets.reduce((t, b) => ({ documents: t.documents + b.documents, runs: t.runs + b.runs }), { documents: 0, runs: 0 });
  return { period: s.window.period, from: s.window.from, to: s.window.to, granularity, totals, buckets };
}

export async function teamOverview(db: DataSource, s: AnalyticsScope) {
  const inWindow = `project_id = $1 AND created_at >= $2 AND created_at <= $3`;
  const window = [s.projectId, s.window.from, s.window.to];
  const [t] = await db.query(
      `SELECT (SELECT count(*)::int FROM memberships WHERE project_id = $1) AS members,
              (SELECT count(*)::int FROM invitations WHERE project_id = $1 AND status = 'pending' AND expires_at > now()) AS pending_invitations,
              (SELECT count(*)::int FROM api_keys WHERE project_id = $1 AND is_active AND (expires_at IS NULL OR expires_at > now())) AS api_keys,
              (SELECT count(*)::int FROM flow_gates WHERE project_id = $1 AND deleted_at IS NULL) AS gates,
              (SELECT count(*)::int FROM flow_gates WHERE project_id = $1 AND deleted_at IS NULL AND status = 'active') AS active_gates,
              (SELECT count(*)::int FROM flow_runs WHERE ${inWindow}) AS runs,
              (SELECT count(*)::int FROM document_jobs WHERE ${inWindow}) AS documents`,
    window,
  );
  return {
    period: s.window.period,
    from: s.window.from,
    to: s.window.to,
    members: t.members as number,
    pendingInvitations: t.pending_invitations as number,
    apiKeys: t.api_keys as number,
    gates: t.gates as number,
    activeGates: t.active_gates as number,
    runs: t.runs as number,
    documents: t.documents as number,
  };
}

export function plans() {
  return {
    plans: FLOW_PLAN_PRICES.map((p) => {
      const l = planLimits(p.id);
      return {
        id: p.id,
        name: p.name,
        monthlyPriceUsd: p.monthlyPriceUsd,
        annualPriceUsd: p.annualPriceUsd,
        runsPerMonth: l.runsPerMonth,
        maxGates: l.maxGates,
        maxApproversPerGate: l.maxApproversPerGate,
        retentionDays: l.artefactRetentionDays,
        contentLimitChars: l.contentLimitChars,
        overagePerRunUsd: p.overagePerRunUsd,
      };
    }),
  };
}

export function creditPacks() {
  return {
    packs: CREDIT_PACKS.map((p) => ({ ...p, pricePerDocumentUsd: Math.round((p.priceUsd / p.documents) * 10_000) / 10_000, expires: false })),
    addOns: DOCUMENT_ADD_ONS.map((a) => ({ ...a })),
  };
}
