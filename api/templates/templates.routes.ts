import Router from '@koa/router';
import type { Context } from 'koa';
import type { TemplateEntity } from '../../db/templates/template.entity';
import type { Services } from '../../platform/services';
import { AppError } from '../../domain/errors';
import { isOutputFormat } from '../../domain/templates/template-definition';
import type { Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { validate } from '../validation';
import * as presenter from './templates.presenter';
import * as schema from './templates.schema';
import * as templates from './templates.service';
import { isTemplateCheckJson, readJsonBytes } from './check-body';
import { actorOf, ATTACHMENT_PREFIX, templateGuards, templateRouter } from './template-guards';
import { templateIoRoutes } from './template-io.routes';
import { templateComponentTypeRoutes } from './component-types';
import { templateExampleRoutes } from './template-examples';
import { templateVersionRoutes } from './template-versions.routes';

/**
 * Where the template API is mounted (spec: `/api/templates`, its legacy alias
 * `/api/templates/attachment/*`, and `/api/v1/templates`). The alias comes first: otherwise
 * `/api/templates/:id` would take `/api/templates/attachment` as a template named "attachment"
 * (a slug that is reserved for this reason).
 */
const TEMPLATE_PREFIXES = [ATTACHMENT_PREFIX, '/api/templates', '/api/v1/templates'] as const;

/** Every template router under every prefix, in the order they must be registered. */
export function templateRouters(services: Services): Router[] {
  return TEMPLATE_PREFIXES.flatMap((prefix) => [
    templateComponentTypeRoutes(services, prefix),
    templateExampleRoutes(services, prefix),
    templateRoutes(services, prefix),
    templateVersionRoutes(services, prefix),
    templateIoRoutes(services, prefix),
  ]);
}

/** Create, list, read, edit, delete, duplicate, bulk delete, and the two validation checks. */
function templateRoutes(services: Services, prefix: string): Router {
  const deps = { db: services.db, evaluator: services.evaluator };
  const router = templateRouter(prefix);
  const { read, write, designerRead, designerWrite } = templateGuards(deps.db);
  // Idempotency-Key on create and duplicate: the answer is stored in the transaction that inserts the template (docs/idempotency.md).
  const idem = idempotent(services);
  const scope = (ctx: Context) => ctx.state.scope as Scope;

  // Static paths before `/:id` ones (path-to-regexp would otherwise read them as ids).
  router.post('/bulk-delete', write, async (ctx) => {
    const input = validate(schema.bulkDeleteSchema, ctx.request.body);
    ctx.body = await templates.bulkDeleteTemplates(deps, actorOf(scope(ctx)), input.ids);
  });

  // A JSON body is read as bytes and parsed by the worker that checks it (check-body.ts).
  router.post('/validate-schema', read, async (ctx) => {
    if (isTemplateCheckJson(ctx)) {
      ctx.body = await services.evaluator.check(scope(ctx).projectId, 'templateSchemaJson', await readJsonBytes(ctx, services.config.jsonBodyLimit));
      return;
    }
    const input = validate(schema.validateSchemaSchema, ctx.request.body);
    if (!isOutputFormat(input.templateType)) {
      throw new AppError('ERR_TMPL_009', "templateType must be 'pdf' or 'excel'", { field: 'templateType' });
    }
    // Placeholders are checked against the variables only when those are themselves valid
    // (validate-variables reports their problems); a broken list would only add noise here.
    ctx.body = await services.evaluator.check(scope(ctx).projectId, 'templateSchema', input, input.templateType);
  });

  router.post('/validate-variables', read, async (ctx) => {
    if (isTemplateCheckJson(ctx)) {
      ctx.body = await services.evaluator.check(scope(ctx).projectId, 'templateVariablesJson', await readJsonBytes(ctx, services.config.jsonBodyLimit));
      return;
    }
    const input = validate(schema.validateVariablesSchema, ctx.request.body);
    ctx.body = await services.evaluator.check(scope(ctx).projectId, 'templateVariables', input);
  });

  router.post('/', write, idem, async (ctx) => {
    const input = validate(schema.createTemplateSchema, ctx.request.body);
    const created = (template: TemplateEntity) => ({ status: 201, headers: {}, body: presenter.presentCreatedTemplate(template) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, created(await templates.createTemplate(deps, actorOf(scope(ctx)), input, store && ((m, t) => store(m, created(t))))));
  });

  router.get('/', read, async (ctx) => {
    const query = validate(schema.listTemplatesSchema, ctx.query);
    const { templates: page, total } = await templates.listTemplates(deps, scope(ctx).projectId, query);
    ctx.body = presenter.presentTemplateList(page, total, query.page, query.limit);
  });

  router.get('/folders', read, async (ctx) => {
    ctx.body = { data: await templates.templateFolders(deps, scope(ctx).projectId) };
  });

  router.get('/:id', designerRead, async (ctx) => {
    ctx.body = presenter.presentTemplate(await templates.getTemplate(deps, scope(ctx).projectId, ctx.params.id));
  });

  router.put('/:id', designerWrite, async (ctx) => {
    const patch = validate(schema.updateTemplateSchema, ctx.request.body);
    ctx.body = presenter.presentTemplate(await templates.updateTemplate(deps, actorOf(scope(ctx)), ctx.params.id, patch));
  });

  router.delete('/:id', write, async (ctx) => {
    await templates.deleteTemplate(deps, actorOf(scope(ctx)), ctx.params.id);
    ctx.body = { success: true, message: 'Template deleted' };
  });

  router.post('/:id/duplicate', write, idem, async (ctx) => {
    const copied = (template: TemplateEntity) => ({ status: 201, headers: {}, body: presenter.presentTemplate(template) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, copied(await templates.duplicateTemplate(deps, actorOf(scope(ctx)), ctx.params.id, store && ((m, t) => store(m, copied(t))))));
  });

  return router;
}
