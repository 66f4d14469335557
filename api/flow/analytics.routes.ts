import Router from '@koa/router';
import type { Context } from 'koa';
import { periodWindow } from '../../domain/flow/analytics-periods';
import type { Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { analyticsEndpoints as routes } from './analytics.endpoints';
import type { AnalyticsQuery } from './analytics.schema';
import { gateMetrics, overview, runOutcomes, throughput, validationErrors, type AnalyticsScope } from './analytics.service';
import { approvalMetrics, billingSummary, combinedTimeline, creditPacks, infraHealth, plans, teamOverview } from './analytics-workspace.service';
import type { FlowApiDeps } from './flow-api';
import { findGate } from './gates.service';

/**
 * Spec, "Flow analytics": twelve GET endpoints of the workspace, read access like every Flow
 * read (any API key of the workspace, or a viewer's JWT). Bodies: docs/flow.md, "Analytics".
 * Each route is declared once, in analytics.endpoints.ts (its query schema validates before the handler).
 */
export function analyticsRoutes(deps: FlowApiDeps): Router {
  const { db, read } = deps;
  const router = new Router({ prefix: '/api/flow/analytics' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  /** The window of the query's period, and its `gateId` (UUID, shortId or slug) resolved to a gate of this workspace, else 404. */
  async function scopeOf(ctx: Context, query: AnalyticsQuery): Promise<AnalyticsScope> {
    const gateId = query.gateId === undefined ? undefined : (await findGate(db, projectId(ctx), query.gateId)).id;
    return { projectId: projectId(ctx), window: periodWindow(query.period, new Date()), gateId };
  }

  mount(router, routes.overview, read, async (ctx, { query }) => {
    ctx.body = await overview(db, await scopeOf(ctx, query));
  });
  mount(router, routes.runOutcomes, read, async (ctx, { query }) => {
    ctx.body = await runOutcomes(db, await scopeOf(ctx, query));
  });
  mount(router, routes.throughput, read, async (ctx, { query }) => {
    ctx.body = await throughput(db, await scopeOf(ctx, query), query.granularity);
  });
  mount(router, routes.validationErrors, read, async (ctx, { query }) => {
    ctx.body = await validationErrors(db, await scopeOf(ctx, query));
  });
  mount(router, routes.approvalMetrics, read, async (ctx, { query }) => {
    ctx.body = await approvalMetrics(db, await scopeOf(ctx, query));
  });
  mount(router, routes.infraHealth, read, async (ctx, { query }) => {
    ctx.body = await infraHealth(db, await scopeOf(ctx, query));
  });
  mount(router, routes.gateMetrics, read, async (ctx, { query }) => {
    ctx.body = await gateMetrics(db, await scopeOf(ctx, query));
  });
  mount(router, routes.billingSummary, read, async (ctx) => {
    ctx.body = await billingSummary(db, projectId(ctx), new Date());
  });
  mount(router, routes.combinedTimeline, read, async (ctx, { query }) => {
    ctx.body = await combinedTimeline(db, await scopeOf(ctx, query), query.granularity);
  });
  mount(router, routes.teamOverview, read, async (ctx, { query }) => {
    ctx.body = await teamOverview(db, await scopeOf(ctx, query));
  });
  mount(router, routes.plans, read, (ctx) => {
    ctx.body = plans();
  });
  mount(router, routes.creditPacks, read, (ctx) => {
    ctx.body = creditPacks();
  });

  return router;
}
