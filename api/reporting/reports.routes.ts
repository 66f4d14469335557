import Router from '@koa/router';
import type { Context } from 'koa';
import { probeRunners } from './probes';
import type { Services } from '../../platform/services';
import { workerPreviews } from '../../platform/worker-previews';
import { consumeOrRefuse, previewLimiter } from '../rate-limits';
import { previewReport } from './report-preview.service';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { pageMeta } from '../page-meta';
import * as presenter from './reports.presenter';
import { reportEndpoints as routes } from './reporting.endpoints';
import * as reports from './reports.service';

/**
 * Reports under /api/reporting/reports (docs/reporting.md "Reports"). Viewers and
 * API keys with `read_reports` read; members write, publish and restore. API keys never manage
 * reports (403 ERR_AUTH_005). Runs and previews are not here.
 */
export function reportRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/reporting/reports' });
  const read = requireProject(db, { role: 'viewer', permission: 'read_reports' });
  const write = requireProject(db, { role: 'member' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const actor = (ctx: Context): reports.Actor => ({ projectId: scope(ctx).projectId, userId: scope(ctx).userId });
  const deps = { db };

  const present = async (r: Awaited<ReturnType<typeof reports.getReport>>) => presenter.presentReport(r, (await reports.outdatedDependencies(db, [r])).get(r.id));

  mount(router, routes.create, write, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presenter.presentReport(await reports.createReport(deps, actor(ctx), input));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { reports: page, total } = await reports.listReports(deps, scope(ctx).projectId, query);
    const outdated = await reports.outdatedDependencies(db, page);
    ctx.body = { data: page.map((r) => presenter.presentReport(r, outdated.get(r.id))), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = await present(await reports.getReport(deps, scope(ctx).projectId, ctx.params.id));
  });

  // PUT as templates have it; PATCH, the query objects' verb, does the same (the fields given).
  for (const route of [routes.put, routes.patch]) {
    mount(router, route, write, async (ctx, { body: patch }) => {
      ctx.body = await present(await reports.updateReport(deps, actor(ctx), ctx.params.id, patch));
    });
  }

  mount(router, routes.delete, write, async (ctx) => {
    await reports.deleteReport(deps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.publish, write, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presenter.presentPublished(await reports.publishReport(deps, actor(ctx), ctx.params.id, input.releaseNotes));
  });

  const previews = previewLimiter(services);
  const previewDeps = { db, storage: services.storage, evaluator: services.evaluator, connect: probeRunners(services), render: workerPreviews(services) };
  mount(router, routes.preview, write, async (ctx, { body: input }) => {
    // Previews run queries and renders from the API process: every caller of a project shares its per-minute budget.
    await consumeOrRefuse(previews, scope(ctx).projectId, 'ERR_LIMIT_014', `At most ${services.config.mailAbuse.previewsPerMinute} previews per minute per project`);
    const file = await previewReport(previewDeps, scope(ctx).projectId, ctx.params.id, input);
    ctx.set('Content-Disposition', `inline; filename="${file.filename}"`);
    if (file.pageCount !== undefined) ctx.set('X-Page-Count', String(file.pageCount));
    ctx.type = file.contentType;
    ctx.body = file.body;
  });

  mount(router, routes.versions, read, async (ctx) => {
    ctx.body = (await reports.listVersions(deps, scope(ctx).projectId, ctx.params.id)).map(presenter.presentVersion);
  });

  mount(router, routes.version, read, async (ctx) => {
    ctx.body = presenter.presentVersionDetail(await reports.getVersion(deps, scope(ctx).projectId, ctx.params.id, ctx.params.version));
  });

  mount(router, routes.restore, write, async (ctx, { body: input }) => {
    const result = await reports.restoreVersion(deps, actor(ctx), ctx.params.id, ctx.params.version, input.releaseNotes);
    ctx.body = { success: true, newVersion: result.newVersion, message: `Version ${result.restoredVersion} restored and published as version ${result.newVersion}` };
  });

  return router;
}
