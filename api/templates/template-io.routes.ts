import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Services } from '../../platform/services';
import { workerPreviews } from '../../platform/worker-previews';
import { AppError } from '../../domain/errors';
import type { Scope } from '../middleware/guards';
import { multipartUpload } from '../middleware/uploads';
import { mount } from '../openapi/route';
import { consumeOrRefuse, previewLimiter } from '../rate-limits';
import * as presenter from './templates.presenter';
import { templateEndpointsAt, type TemplatePrefix } from './templates.endpoints';
import * as analytics from './template-analytics.service';
import * as io from './template-io.service';
import { actorOf, templateGuards, templateRouter } from './template-guards';
import { acceptanceLimits } from '../../domain/documents/acceptance';

/** The import's file (the multipart field `file`), if one was uploaded. */
function uploadedFile(ctx: Context) {
  const upload = ctx.request.files?.file;
  return Array.isArray(upload) ? upload[0] : upload;
}

/** An import without a file is ERR_TMPL_015, whatever its fields: checked before they are validated. */
async function requireUploadedFile(ctx: Context, next: Next): Promise<void> {
  if (!uploadedFile(ctx)) throw new AppError('ERR_TMPL_015', 'No file uploaded for import: send it as the multipart field `file`', { field: 'file' });
  await next();
}

/** Export, import, preview, sample data, calculated values, analytics and automation fields of templates. */
export function templateIoRoutes(services: Services, prefix: TemplatePrefix): Router {
  const { db } = services;
  const routes = templateEndpointsAt[prefix];
  const deps = { db, evaluator: services.evaluator };
  const router = templateRouter(prefix);
  const { read, write, designerRead, designerWrite } = templateGuards(db);
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;
  // Previews render on the render worker role, never on this process's Chromium (issue 29).
  const render = workerPreviews(services);

  // The upload is read only once the caller is known to be a member; it is deleted when the request ends.
  mount(router, routes.import, write, multipartUpload(services.config.uploads, `${prefix}/import`), requireUploadedFile, async (ctx, { body: fields }) => {
    const file = uploadedFile(ctx);
    if (!file) throw new Error('requireUploadedFile let an import without a file through');
    const text = await readFile(file.filepath, 'utf8');
    const result = await io.importTemplate(deps, services.config.assets, actorOf(ctx.state.scope as Scope), text, fields.duplicateHandling);
    ctx.status = result.status === 'created' ? 201 : 200;
    ctx.body = result;
  });

  mount(router, routes.export, read, async (ctx) => {
    const { slug, file } = await io.exportTemplate(deps, projectId(ctx), ctx.params.id);
    ctx.set('Content-Disposition', `attachment; filename="${slug}.json"`);
    ctx.type = 'application/json';
    ctx.body = `${JSON.stringify(file, null, 2)}\n`;
  });

  const previews = previewLimiter(services);
  mount(router, routes.preview, designerRead, async (ctx, { body: input }) => {
    // Renders are the expensive thing: every caller of a project shares its per-minute budget.
    await consumeOrRefuse(previews, projectId(ctx), 'ERR_LIMIT_014', `At most ${services.config.mailAbuse.previewsPerMinute} previews per minute per project`);
    const { template, document } = await io.previewTemplate({ ...deps, render, acceptance: acceptanceLimits(services.config) }, projectId(ctx), ctx.params.id, input);
    ctx.set('Content-Disposition', `inline; filename="${template.slug}.${document.fileExtension}"`);
    if (document.pageCount !== undefined) ctx.set('X-Page-Count', String(document.pageCount));
    ctx.type = document.contentType;
    ctx.body = document.body;
  });

  mount(router, routes.previewGrid, designerRead, async (ctx, { body: input }) => {
    await consumeOrRefuse(previews, projectId(ctx), 'ERR_LIMIT_014', `At most ${services.config.mailAbuse.previewsPerMinute} previews per minute per project`);
    ctx.body = await io.previewTemplateGrid({ ...deps, render, acceptance: acceptanceLimits(services.config) }, projectId(ctx), ctx.params.id, input.variables);
  });

  mount(router, routes.sampleData, designerRead, async (ctx) => {
    ctx.body = { data: await io.templateSampleData(deps, projectId(ctx), ctx.params.id) };
  });

  mount(router, routes.keepSampleData, designerWrite, async (ctx, { body: input }) => {
    await io.keepSampleData(deps, projectId(ctx), ctx.params.id, input.data);
    ctx.body = { data: input.data };
  });

  mount(router, routes.calculate, designerRead, async (ctx, { body: input }) => {
    ctx.body = { values: await io.calculateTemplate(deps, projectId(ctx), ctx.params.id, input.variables ?? {}) };
  });

  mount(router, routes.analytics, read, async (ctx, { query }) => {
    ctx.body = presenter.presentAnalytics(await analytics.templateAnalytics(deps, projectId(ctx), ctx.params.id, query));
  });

  mount(router, routes.automationFields, read, async (ctx) => {
    ctx.body = { fields: await io.templateAutomationFields(deps, projectId(ctx), ctx.params.id) };
  });

  return router;
}
