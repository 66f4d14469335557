import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { workerPreviews } from '../../platform/worker-previews';
import { AppError } from '../../domain/errors';
import type { Scope } from '../middleware/guards';
import { multipartUpload } from '../middleware/uploads';
import { consumeOrRefuse, previewLimiter } from '../rate-limits';
import { validate } from '../validation';
import * as presenter from './templates.presenter';
import * as schema from './templates.schema';
import * as analytics from './template-analytics.service';
import * as io from './template-io.service';
import { actorOf, templateGuards, templateRouter } from './template-guards';
import { acceptanceLimits } from '../../domain/documents/acceptance';

/** Export, import, preview, sample data, calculated values, analytics and automation fields of templates. */
export function templateIoRoutes(services: Services, prefix: string): Router {
  const { db } = services;
  const deps = { db, evaluator: services.evaluator };
  const router = templateRouter(prefix);
  const { read, write, designerRead, designerWrite } = templateGuards(db);
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;
  // Previews render on the render worker role, never on this process's Chromium (issue 29).
  const render = workerPreviews(services);

  // The upload is read only once the caller is known to be a member; it is deleted when the request ends.
  router.post('/import', write, multipartUpload(services.config.uploads, `${prefix}/import`), async (ctx) => {
    const upload = ctx.request.files?.file;
    const file = Array.isArray(upload) ? upload[0] : upload;
    if (!file) throw new AppError('ERR_TMPL_015', 'No file uploaded for import: send it as the multipart field `file`', { field: 'file' });
    const fields = validate(schema.importFieldsSchema, ctx.request.body);
    const text = await readFile(file.filepath, 'utf8');
    const result = await io.importTemplate(deps, services.config.assets, actorOf(ctx.state.scope as Scope), text, fields.duplicateHandling);
    ctx.status = result.status === 'created' ? 201 : 200;
    ctx.body = result;
  });

  router.get('/:id/export', read, async (ctx) => {
    const { slug, file } = await io.exportTemplate(deps, projectId(ctx), ctx.params.id);
    ctx.set('Content-Disposition', `attachment; filename="${slug}.json"`);
    ctx.type = 'application/json';
    ctx.body = `${JSON.stringify(file, null, 2)}\n`;
  });

  const previews = previewLimiter(services);
  router.post('/:id/preview', designerRead, async (ctx) => {
    const input = validate(schema.previewSchema, ctx.request.body, { format: 'ERR_TMPL_009' });
    // Renders are the expensive thing: every caller of a project shares its per-minute budget.
    await consumeOrRefuse(previews, projectId(ctx), 'ERR_LIMIT_014', `At most ${services.config.mailAbuse.previewsPerMinute} previews per minute per project`);
    const { template, document } = await io.previewTemplate({ ...deps, render, acceptance: acceptanceLimits(services.config) }, projectId(ctx), ctx.params.id, input);
    ctx.set('Content-Disposition', `inline; filename="${template.slug}.${document.fileExtension}"`);
    if (document.pageCount !== undefined) ctx.set('X-Page-Count', String(document.pageCount));
    ctx.type = document.contentType;
    ctx.body = document.body;
  });

  router.post('/:id/preview/grid', designerRead, async (ctx) => {
    const input = validate(schema.calculateSchema, ctx.request.body);
    await consumeOrRefuse(previews, projectId(ctx), 'ERR_LIMIT_014', `At most ${services.config.mailAbuse.previewsPerMinute} previews per minute per project`);
    ctx.body = await io.previewTemplateGrid({ ...deps, render, acceptance: acceptanceLimits(services.config) }, projectId(ctx), ctx.params.id, input.variables);
  });

  router.get('/:id/sample-data', designerRead, async (ctx) => {
    ctx.body = { data: await io.templateSampleData(deps, projectId(ctx), ctx.params.id) };
  });

  router.put('/:id/sample-data', designerWrite, async (ctx) => {
    const input = validate(schema.sampleDataSchema, ctx.request.body);
    await io.keepSampleData(deps, projectId(ctx), ctx.params.id, input.data);
    ctx.body = { data: input.data };
  });

  router.post('/:id/calculate', designerRead, async (ctx) => {
    const input = validate(schema.calculateSchema, ctx.request.body);
    ctx.body = { values: await io.calculateTemplate(deps, projectId(ctx), ctx.params.id, input.variables ?? {}) };
  });

  router.get('/:id/analytics', read, async (ctx) => {
    const query = validate(schema.analyticsSchema, ctx.query);
    ctx.body = presenter.presentAnalytics(await analytics.templateAnalytics(deps, projectId(ctx), ctx.params.id, query));
  });

  router.get('/:id/automation-fields', read, async (ctx) => {
    ctx.body = { fields: await io.templateAutomationFields(deps, projectId(ctx), ctx.params.id) };
  });

  return router;
}
