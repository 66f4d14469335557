import Router from '@koa/router';
import type { Services } from '../../platform/services';
import type { Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import * as presenter from './templates.presenter';
import { templateEndpointsAt, type TemplatePrefix } from './templates.endpoints';
import * as versions from './template-versions.service';
import { actorOf, templateGuards, templateRouter } from './template-guards';

/** Publish, versions, one version's state, restore (spec, "Templates"; "Versioning" §2). */
export function templateVersionRoutes(services: Services, prefix: TemplatePrefix): Router {
  const deps = { db: services.db, evaluator: services.evaluator };
  const routes = templateEndpointsAt[prefix];
  const router = templateRouter(prefix);
  const { read, write, designerWrite } = templateGuards(deps.db);

  mount(router, routes.publish, designerWrite, async (ctx, { body: input }) => {
    const version = await versions.publishTemplate(deps, actorOf(ctx.state.scope as Scope), ctx.params.id, input.releaseNotes);
    ctx.status = 201;
    ctx.body = presenter.presentPublished(version);
  });

  mount(router, routes.versions, read, async (ctx) => {
    const records = await versions.listVersions(deps, (ctx.state.scope as Scope).projectId, ctx.params.id);
    ctx.body = records.map(presenter.presentVersion);
  });

  mount(router, routes.version, read, async (ctx) => {
    const { template, ...record } = await versions.getVersion(deps, (ctx.state.scope as Scope).projectId, ctx.params.id, ctx.params.versionId);
    ctx.body = presenter.presentVersionState(template, record);
  });

  mount(router, routes.restore, write, async (ctx, { body: input }) => {
    const actor = actorOf(ctx.state.scope as Scope);
    const result = await versions.restoreVersion(deps, actor, ctx.params.id, ctx.params.versionId, input.releaseNotes);
    ctx.body = {
      success: true,
      newVersion: result.newVersion,
      message: `Version ${result.restoredVersion} restored and published as version ${result.newVersion}`,
    };
  });

  return router;
}
