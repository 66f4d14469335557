import Router from '@koa/router';
import type Joi from 'joi';
import type { Context } from 'koa';
import { periodWindow } from '../../domain/flow/analytics-periods';
import type { Scope } from '../middleware/guards';
import { validate } from '../validation';
import type { AnalyticsQuery } from './analytics.schema';
import { noQuery, periodGateQuery, periodGranularityGateQuery, periodGranularityQuery, periodQuery } from './analytics.schema';
import { gateMetrics, overview, runOutcomes, throughput, validationErrors, type AnalyticsScope } from './analytics.service';
import { approvalMetrics, billingSummary, combinedTimeline, creditPacks, infraHealth, plans, teamOverview } from './analytics-workspace.service';
import type { FlowApiDeps } from './flow-api';
import { findGate } from './gates.service';

/**
 * Spec, "Flow analytics": twelve GET endpoints of the workspace, read access like every Flow
 * read (any API key of the workspace, or a viewer's JWT). Bodies: docs/flow.md, "Analytics".
 */
export function analyticsRoutes(deps: FlowApiDeps): Router {
  const { db, read } = deps;
  const router = new Router({ prefix: '/api/flow/analytics' });

  /** Parses the query and resolves `gateId` (UUID, shortId or slug) to a gate of this workspace, else 404. */
  async function scopeOf(ctx: Context, schema: Joi.Schema<AnalyticsQuery>): Promise<{ scope: AnalyticsScope; query: AnalyticsQuery }> {
    const query = validate(schema, ctx.query);
    const projectId = (ctx.state.scope as Scope).projectId;
    const gateId = query.gateId === undefined ? undefined : (await findGate(db, projectId, query.gateId)).id;
    return { scope: { projectId, window: periodWindow(query.period, new Date()), gateId }, query };
  }

  router.get('/overview', read, async (ctx) => {
    ctx.body = await overview(db, (await scopeOf(ctx, periodGateQuery)).scope);
  });
  router.get('/run-outcomes', read, async (ctx) => {
    ctx.body = await runOutcomes(db, (await scopeOf(ctx, periodGateQuery)).scope);
  });
  router.get('/throughput', read, async (ctx) => {
    const { scope, query } = await scopeOf(ctx, periodGranularityGateQuery);
    ctx.body = await throughput(db, scope, query.granularity);
  });
  router.get('/validation-errors', read, async (ctx) => {
    ctx.body = await validationErrors(db, (await scopeOf(ctx, periodGateQuery)).scope);
  });
  router.get('/approval-metrics', read, async (ctx) => {
    ctx.body = await approvalMetrics(db, (await scopeOf(ctx, periodGateQuery)).scope);
  });
  router.get('/infra-health', read, async (ctx) => {
    ctx.body = await infraHealth(db, (await scopeOf(ctx, periodGateQuery)).scope);
  });
  router.get('/gate-metrics', read, async (ctx) => {
    ctx.body = await gateMetrics(db, (await scopeOf(ctx, periodGateQuery)).scope);
  });
  router.get('/billing-summary', read, async (ctx) => {
    validate(noQuery, ctx.query);
    ctx.body = await billingSummary(db, (ctx.state.scope as Scope).projectId, new Date());
  });
  router.get('/combined-timeline', read, async (ctx) => {
    const { scope, query } = await scopeOf(ctx, periodGranularityQuery);
    ctx.body = await combinedTimeline(db, scope, query.granularity);
  });
  router.get('/team-overview', read, async (ctx) => {
    ctx.body = await teamOverview(db, (await scopeOf(ctx, periodQuery)).scope);
  });
  router.get('/plans', read, (ctx) => {
    validate(noQuery, ctx.query);
    ctx.body = plans();
  });
  router.get('/credit-packs', read, (ctx) => {
    validate(noQuery, ctx.query);
    ctx.body = creditPacks();
  });

  return router;
}
