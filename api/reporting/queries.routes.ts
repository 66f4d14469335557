import Router from '@koa/router';
import { AppError } from '../../domain/errors';
import type { Context } from 'koa';
import { probeRunners } from './probes';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { pageMeta } from '../page-meta';
import * as presenter from './queries.presenter';
import { queryEndpoints as routes } from './reporting.endpoints';
import * as queries from './queries.service';

/**
 * Reporting query objects under /api/reporting/queries (docs/reporting.md "Query objects"). Viewers read; members
 * write, publish, restore, validate and preview. API keys never manage queries (403 ERR_AUTH_005).
 */
export function queryRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/reporting/queries' });
  const read = requireProject(db, { role: 'viewer' });
  const write = requireProject(db, { role: 'member' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const actor = (ctx: Context): queries.Actor => ({ projectId: scope(ctx).projectId, userId: scope(ctx).userId });
  const deps = { db, evaluator: services.evaluator, connect: probeRunners(services), limits: services.config.reporting, storage: services.storage };

  mount(router, routes.validate, write, async (ctx, { body: input }) => {
    ctx.body = await queries.validateQuery(deps, scope(ctx).projectId, input);
  });

  mount(router, routes.create, write, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presenter.presentQuery(await queries.createQuery(deps, actor(ctx), input));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { queries: page, total } = await queries.listQueries(deps, scope(ctx).projectId, query);
    ctx.body = { data: page.map((q) => presenter.presentQuery(q, { withText: false })), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presenter.presentQuery(await queries.getQuery(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, write, async (ctx, { body: patch }) => {
    ctx.body = presenter.presentQuery(await queries.updateQuery(deps, actor(ctx), ctx.params.id, patch));
  });

  // The design's edit (docs/reporting.md "Query objects"): a full replacement by a create body; PATCH changes the fields it names.
  mount(router, routes.replace, write, async (ctx, { body: input }) => {
    ctx.body = presenter.presentQuery(await queries.replaceQuery(deps, actor(ctx), ctx.params.id, input));
  });

  mount(router, routes.delete, write, async (ctx) => {
    await queries.deleteQuery(deps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.publish, write, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presenter.presentPublished(await queries.publishQuery(deps, actor(ctx), ctx.params.id, input.releaseNotes));
  });

  mount(router, routes.versions, read, async (ctx) => {
    ctx.body = (await queries.listVersions(deps, scope(ctx).projectId, ctx.params.id)).map(presenter.presentVersion);
  });

  mount(router, routes.version, read, async (ctx) => {
    ctx.body = presenter.presentVersionDetail(await queries.getVersion(deps, scope(ctx).projectId, ctx.params.id, ctx.params.version));
  });

  mount(router, routes.restore, write, async (ctx, { body: input }) => {
    const result = await queries.restoreVersion(deps, actor(ctx), ctx.params.id, ctx.params.version, input.releaseNotes);
    ctx.body = { success: true, newVersion: result.newVersion, message: `Version ${result.restoredVersion} restored and published as version ${result.newVersion}` };
  });

  mount(router, routes.preview, write, async (ctx, { body: input }) => {
    try {
      ctx.body = await queries.previewQuery(deps, scope(ctx).projectId, ctx.params.id, input);
    } catch (err) {
      // An agent that has not answered within `wait`: 202 with the task to read later (GET /api/reporting/tasks/:taskId).
      if (!(err instanceof AppError) || err.code !== 'ERR_AGENT_012' || !err.relatedInfo?.taskId) throw err;
      ctx.status = 202;
      ctx.body = err.relatedInfo;
    }
  });

  return router;
}
