import type Joi from 'joi';
import { RUN_STATUSES } from '../../domain/flow/run-status';
import { GRANULARITIES, PERIODS } from '../../domain/flow/analytics-periods';
import { FLOW_PLAN_PRICES } from '../../domain/flow/plan-catalogue';
import { ok, type JsonSchema } from '../openapi/operation';
import { routeTable } from '../openapi/route';
import * as analytics from './analytics.schema';

/**
 * The twelve Flow analytics routes' declarations (docs/architecture.md "One declaration per route";
 * mounted by api/flow/analytics.routes.ts) with their answers typed, as
 * docs/flow.md "Analytics" shows them (analytics.service.ts, analytics-workspace.service.ts). The
 * dashboard's Analytics page reads them through the typed client; every object lists all its
 * fields and no others, so tests/integration/openapi/responses.test.ts fails on a field the
 * services add, drop or retype.
 */

const str = { type: 'string' };
const count = { type: 'integer', minimum: 0 };
const time = { type: 'string', format: 'date-time' };
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
const rate = nullable({ type: 'number', minimum: 0, maximum: 100, description: 'A percentage 0–100 (2 decimals), as every rate of the API; null when there is nothing to divide by' });
const ms = (description: string) => nullable({ type: 'integer', description });
const usd = { type: 'number', description: 'US dollars' };

function object(properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), required: Object.keys(properties), properties, additionalProperties: false };
}
const counts = (names: readonly string[]) => object(Object.fromEntries(names.map((n) => [n, count])));
const list = (item: JsonSchema, description?: string): JsonSchema => ({ type: 'array', ...(description ? { description } : {}), items: item });

/** The window every period answer starts with (docs/flow.md "Analytics": the last N UTC days, today included, up to now). */
const window = {
  period: { type: 'string', enum: PERIODS },
  from: { ...time, description: 'Midnight UTC, N−1 days ago' },
  to: { ...time, description: 'The moment of the request' },
};
const scoped = { ...window, gateId: nullable({ type: 'string', format: 'uuid', description: 'The gate asked for (resolved to its UUID), or null for the whole workspace' }) };
const granularity = { type: 'string', enum: GRANULARITIES };
const bucketStart = { type: 'string', format: 'date', description: 'The bucket\'s first UTC day (a Monday for weeks, the 1st for months)' };

const overview = object({
  ...scoped,
  totals: counts(['runs', 'completed', 'failed', 'validationFailed', 'inProgress', 'inReview', 'approved', 'rejected', 'expired']),
  successRate: rate,
  validationPassRate: rate,
  avgTimeToCompleteMs: ms('Average completedAt − createdAt of completed runs; null without any'),
  activeGates: count,
}, 'Runs of the period in total and by state, with the rates');

const runOutcomes = object({ ...scoped, total: count, byStatus: counts(RUN_STATUSES), bySource: counts(['rest', 'mcp']) }, 'Runs of the period by status and by source');

const throughput = object({
  ...scoped,
  granularity,
  buckets: list(object({ start: bucketStart, runs: count, completed: count, failed: count, validationFailed: count }), 'Every bucket of the period, empty ones with zeros'),
}, 'Runs per day, week or month');

const validationErrors = object({
  ...scoped,
  failedRuns: count,
  totalErrors: count,
  byCode: list(object({ code: nullable(str), count }), 'Every error code, most frequent first'),
  byField: list(object({ field: nullable(str), count }), 'The 20 most frequent fields (a business rule\'s is its id), most frequent first'),
  byLayer: counts(['schema', 'business_rules']),
}, 'Errors of the runs that failed validation in the period');

const approvalMetrics = object({
  ...scoped,
  requested: count,
  approved: count,
  rejected: count,
  expired: count,
  pending: count,
  approvalRate: rate,
  medianDecisionMs: ms('Median decidedAt − createdAt of approved and rejected requests'),
  p90DecisionMs: ms('90th percentile of the same'),
}, 'Approval requests (one per run and approver) of the period');

const infraHealth = object({
  ...scoped,
  deliveries: object({ total: count, completed: count, failed: count, pending: count, successRate: rate, avgAttempts: nullable({ type: 'number' }) }),
  circuitBreakers: list(
    object({ gateId: { type: 'string', format: 'uuid' }, name: str, enabled: { type: 'boolean' }, state: { type: 'string', enum: ['closed', 'open', 'half_open'] }, consecutiveFailures: count, openUntil: nullable(time) }),
    'Each live gate\'s circuit as it is now, open and half-open first',
  ),
  renderFailures: count,
}, 'Deliveries and render failures of the period, circuits now');

const gateMetrics = object({
  ...scoped,
  gates: list(
    object({
      gateId: { type: 'string', format: 'uuid' },
      shortId: str,
      name: str,
      slug: str,
      status: str,
      runs: count,
      completed: count,
      failed: count,
      validationFailed: count,
      successRate: rate,
      lastRunAt: nullable(time),
    }),
    'Every live gate, busiest first',
  ),
}, 'Runs of the period per gate');

const planIds = FLOW_PLAN_PRICES.map((p) => p.id);
const unlimited = (description: string) => nullable({ type: 'integer', description: `${description}; null: unlimited` });

const billingSummary = object({
  plan: { type: 'string', enum: planIds },
  planName: str,
  month: { type: 'string', description: 'The UTC calendar month, `YYYY-MM`' },
  periodStart: time,
  runsThisMonth: count,
  runsIncluded: count,
  runsRemaining: count,
  overageRuns: count,
  overagePerRunUsd: nullable({ type: 'number', description: 'Null: no overage, runs past the allowance are refused' }),
  overageCostUsd: usd,
  monthlyPriceUsd: usd,
  estimatedTotalUsd: usd,
  limits: object({ maxGates: unlimited('Gates'), maxApproversPerGate: unlimited('Approvers per gate'), contentLimitChars: count, retentionDays: count }),
  gates: object({ used: count, max: unlimited('Gates') }),
}, 'This month\'s runs against the plan');

const combinedTimeline = object({
  ...window,
  granularity,
  totals: counts(['documents', 'runs']),
  buckets: list(object({ start: bucketStart, documents: count, runs: count }), 'Every bucket of the period, empty ones with zeros'),
}, 'Document jobs and Flow runs per bucket');

const teamOverview = object({ ...window, ...counts(['members', 'pendingInvitations', 'apiKeys', 'gates', 'activeGates', 'runs', 'documents']).properties as Record<string, JsonSchema> }, 'The workspace now, and its runs and documents of the period');

const plans = object({
  plans: list(
    object({
      id: { type: 'string', enum: planIds },
      name: str,
      monthlyPriceUsd: usd,
      annualPriceUsd: usd,
      runsPerMonth: count,
      maxGates: unlimited('Gates'),
      maxApproversPerGate: unlimited('Approvers per gate'),
      retentionDays: count,
      contentLimitChars: count,
      overagePerRunUsd: nullable({ type: 'number', description: 'Null: no overage' }),
    }),
  ),
}, 'The plans on offer');

const creditPacks = object({
  packs: list(object({ documents: count, priceUsd: usd, pricePerDocumentUsd: usd, expires: { type: 'boolean' } }), 'One-time packs'),
  addOns: list(object({ documentsPerMonth: count, priceUsdPerMonth: usd }), 'Recurring document add-ons'),
}, 'Credit packs and document add-ons on offer');

const route = routeTable('Flow analytics');

/** A GET under /api/flow/analytics/: read access (any key of the workspace), its query, its answer. */
function get<Query>(path: string, summary: string, query: Joi.ObjectSchema<Query>, answer: JsonSchema) {
  return route<undefined, Query>('get', `/api/flow/analytics/${path}`, summary, { security: 'project', request: { query }, responses: { 200: ok(summary, answer) } });
}

export const analyticsEndpoints = {
  overview: get('overview', 'Runs, pass rate and timings over a period', analytics.periodGateQuery, overview),
  runOutcomes: get('run-outcomes', 'Runs by outcome', analytics.periodGateQuery, runOutcomes),
  throughput: get('throughput', 'Runs over time', analytics.periodGranularityGateQuery, throughput),
  validationErrors: get('validation-errors', 'Most frequent validation errors', analytics.periodGateQuery, validationErrors),
  approvalMetrics: get('approval-metrics', 'Approval counts and times', analytics.periodGateQuery, approvalMetrics),
  infraHealth: get('infra-health', 'Render and delivery health', analytics.periodGateQuery, infraHealth),
  gateMetrics: get('gate-metrics', 'Figures per gate', analytics.periodGateQuery, gateMetrics),
  billingSummary: get('billing-summary', 'Usage against the plan this month', analytics.noQuery, billingSummary),
  combinedTimeline: get('combined-timeline', 'Document jobs and runs over time', analytics.periodGranularityQuery, combinedTimeline),
  teamOverview: get('team-overview', 'Members, keys and gates now; runs and documents of the period', analytics.periodQuery, teamOverview),
  plans: get('plans', 'The plans on offer', analytics.noQuery, plans),
  creditPacks: get('credit-packs', 'The credit packs on offer', analytics.noQuery, creditPacks),
};
