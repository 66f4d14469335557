import Router from '@koa/router';
import type { Services } from '../../platform/services';
import type { Scope } from '../middleware/guards';
import { validate } from '../validation';
import * as presenter from './templates.presenter';
import * as schema from './templates.schema';
import * as versions from './template-versions.service';
import { actorOf, templateGuards, templateRouter } from './template-guards';

/** Publish, versions, one version's state, restore (spec, "Templates"; "Versioning" §2). */
export function templateVersionRoutes(services: Services, prefix: string): Router {
  const deps = { db: services.db, evaluator: services.evaluator };
  const router = templateRouter(prefix);
  const { read, write, designerWrite } = templateGuards(deps.db);

  router.post('/:id/publish', designerWrite, async (ctx) => {
    const input = validate(schema.publishSchema, ctx.request.body);
    const version = await versions.publishTemplate(deps, actorOf(ctx.state.scope as Scope), ctx.params.id, input.releaseNotes);
    ctx.status = 201;
    ctx.body = presenter.presentPublished(version);
  });

  router.get('/:id/versions', read, async (ctx) => {
    const records = await versions.listVersions(deps, (ctx.state.scope as Scope).projectId, ctx.params.id);
    ctx.body = records.map(presenter.presentVersion);
  });

  router.get('/:id/versions/:versionId', read, async (ctx) => {
    const { template, ...record } = await versions.getVersion(deps, (ctx.state.scope as Scope).projectId, ctx.params.id, ctx.params.versionId);
    ctx.body = presenter.presentVersionState(template, record);
  });

  router.post('/:id/versions/:versionId/restore', write, async (ctx) => {
    const input = validate(schema.publishSchema, ctx.request.body);
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
