import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { TemplateEntity } from '../../db/templates/template.entity';
import type { Services } from '../../platform/services';
import { AppError } from '../../domain/errors';
import { isOutputFormat } from '../../domain/templates/template-definition';
import type { Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { mount } from '../openapi/route';
import * as presenter from './templates.presenter';
import * as templates from './templates.service';
import { isTemplateCheckJson, readJsonBytes } from './check-body';
import { templateEndpointsAt, TEMPLATE_PREFIXES, type TemplatePrefix } from './templates.endpoints';
import { actorOf, templateGuards, templateRouter } from './template-guards';
import { templateIoRoutes } from './template-io.routes';
import { templateComponentTypeRoutes } from './component-types';
import { templateExampleRoutes } from './template-examples';
import { templateVersionRoutes } from './template-versions.routes';

/**
 * Every template router under every prefix (spec: `/api/templates`, its legacy alias
 * `/api/templates/attachment/*`, and `/api/v1/templates`; TEMPLATE_PREFIXES, alias first), in the
 * order they must be registered. Each route is declared once per prefix, in templates.endpoints.ts
 * (api/openapi/route.ts): its operation in the OpenAPI document, its validation and its handler's
 * input type come from that declaration.
 */
export function templateRouters(services: Services): Router[] {
  return TEMPLATE_PREFIXES.flatMap(([prefix]) => [
    templateComponentTypeRoutes(services, prefix),
    templateExampleRoutes(services, prefix),
    templateRoutes(services, prefix),
    templateVersionRoutes(services, prefix),
    templateIoRoutes(services, prefix),
  ]);
}

/** Create, list, read, edit, delete, duplicate, bulk delete, and the two validation checks. */
function templateRoutes(services: Services, prefix: TemplatePrefix): Router {
  const deps = { db: services.db, evaluator: services.evaluator };
  const routes = templateEndpointsAt[prefix];
  const router = templateRouter(prefix);
  const { read, write, designerRead, designerWrite } = templateGuards(deps.db);
  // Idempotency-Key on create and duplicate: the answer is stored in the transaction that inserts the template (docs/idempotency.md).
  const idem = idempotent(services);
  const scope = (ctx: Context) => ctx.state.scope as Scope;

  // Static paths before `/:id` ones (path-to-regexp would otherwise read them as ids).
  mount(router, routes.bulkDelete, write, async (ctx, { body }) => {
    ctx.body = await templates.bulkDeleteTemplates(deps, actorOf(scope(ctx)), body.ids);
  });

  // A JSON body under /api/templates is read as bytes and checked, parsing included, by the worker
  // (check-body.ts): answered before the route's validation, which takes the other (parsed) bodies.
  const checkJsonBytes =
    (check: 'templateSchemaJson' | 'templateVariablesJson'): Middleware =>
    async (ctx, next) => {
      if (!isTemplateCheckJson(ctx)) return next();
      ctx.body = await services.evaluator.check(scope(ctx).projectId, check, await readJsonBytes(ctx, services.config.jsonBodyLimit));
    };

  mount(router, routes.validateSchema, read, checkJsonBytes('templateSchemaJson'), async (ctx, { body: input }) => {
    if (!isOutputFormat(input.templateType)) {
      throw new AppError('ERR_TMPL_009', "templateType must be 'pdf' or 'excel'", { field: 'templateType' });
    }
    // Placeholders are checked against the variables only when those are themselves valid
    // (validate-variables reports their problems); a broken list would only add noise here.
    ctx.body = await services.evaluator.check(scope(ctx).projectId, 'templateSchema', input, input.templateType);
  });

  mount(router, routes.validateVariables, read, checkJsonBytes('templateVariablesJson'), async (ctx, { body }) => {
    ctx.body = await services.evaluator.check(scope(ctx).projectId, 'templateVariables', body);
  });

  mount(router, routes.create, write, idem, async (ctx, { body: input }) => {
    const created = (template: TemplateEntity) => ({ status: 201, headers: {}, body: presenter.presentCreatedTemplate(template) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, created(await templates.createTemplate(deps, actorOf(scope(ctx)), input, store && ((m, t) => store(m, created(t))))));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { templates: page, total } = await templates.listTemplates(deps, scope(ctx).projectId, query);
    ctx.body = presenter.presentTemplateList(page, total, query.page, query.limit);
  });

  mount(router, routes.folders, read, async (ctx) => {
    ctx.body = { data: await templates.templateFolders(deps, scope(ctx).projectId) };
  });

  mount(router, routes.get, designerRead, async (ctx) => {
    ctx.body = presenter.presentTemplate(await templates.getTemplate(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, designerWrite, async (ctx, { body: patch }) => {
    ctx.body = presenter.presentTemplate(await templates.updateTemplate(deps, actorOf(scope(ctx)), ctx.params.id, patch));
  });

  mount(router, routes.delete, write, async (ctx) => {
    await templates.deleteTemplate(deps, actorOf(scope(ctx)), ctx.params.id);
    ctx.body = { success: true, message: 'Template deleted' };
  });

  mount(router, routes.duplicate, write, idem, async (ctx) => {
    const copied = (template: TemplateEntity) => ({ status: 201, headers: {}, body: presenter.presentTemplate(template) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, copied(await templates.duplicateTemplate(deps, actorOf(scope(ctx)), ctx.params.id, store && ((m, t) => store(m, copied(t))))));
  });

  return router;
}
