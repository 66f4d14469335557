import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { contentDisposition } from '../../adapters/storage/storage';
import { AppError } from '../../domain/errors';
import { ASSET_LIMITS } from '../../domain/templates/asset-content';
import type { Scope } from '../middleware/guards';
import { multipartUploadAs } from '../middleware/uploads';
import { pageMeta } from '../page-meta';
import { actorOf, templateGuards } from '../templates/template-guards';
import { mount } from '../openapi/route';
import { validate } from '../validation';
import { assetEndpoints as routes } from './assets.endpoints';
import * as presenter from './assets.presenter';
import * as schema from './assets.schema';
import * as assets from './assets.service';

/** The largest upload of any kind: the multipart parser stops reading past it, while the file streams in. */
const UPLOAD_MAX_BYTES = Math.max(ASSET_LIMITS.imageMaxBytes, ASSET_LIMITS.fontMaxBytes, ASSET_LIMITS.svgMaxBytes, ASSET_LIMITS.pdfMaxBytes);

/**
 * Assets under /api/assets (docs/templates.md "Assets and fonts"): who may read and change them is
 * who may read and change templates (template-guards.ts): viewers and API keys with
 * `read_templates` read, members upload and delete. Each route is declared once, in
 * assets.endpoints.ts (api/openapi/route.ts).
 */
export function assetRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/assets' });
  const { read, write } = templateGuards(services.db);
  const deps = { db: services.db, evaluator: services.evaluator, limits: services.config.assets };
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  // Past the largest kind's limit the upload is cut off while it streams: 413 ERR_ASSET_003, not the parser's ERR_REQ_002.
  const assetUpload = multipartUploadAs({ ...services.config.uploads, maxFileBytes: UPLOAD_MAX_BYTES }, '/api/assets', () =>
    new AppError('ERR_ASSET_003', `Assets are at most ${UPLOAD_MAX_BYTES} bytes`, { limit: UPLOAD_MAX_BYTES }),
  );

  // Multipart only: refused before its fields are validated (here, not by mount).
  mount(router, { operation: routes.upload.operation }, write, assetUpload, async (ctx) => {
    if (!ctx.is('multipart')) throw new AppError('ERR_VALID_001', 'Upload the image or font as multipart/form-data, in the part `file`', { field: 'Content-Type' });
    const files = ctx.request.files?.file;
    const file = Array.isArray(files) ? files[0] : files;
    const input = validate(schema.uploadAssetSchema, ctx.request.body ?? {});
    const created = await assets.uploadAsset(deps, actorOf(scope(ctx)), file, input);
    ctx.status = 201;
    ctx.body = presenter.presentAsset(created);
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { assets: page, total } = await assets.listAssets(deps, scope(ctx).projectId, query);
    ctx.body = { data: page.map(presenter.presentAsset), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presenter.presentAsset(await assets.getAsset(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.content, read, async (ctx) => {
    const asset = await assets.getAsset(deps, scope(ctx).projectId, ctx.params.id, true);
    ctx.body = asset.content;
    ctx.type = asset.mediaType;
    ctx.set('Content-Disposition', contentDisposition(asset.name));
    ctx.set('Cache-Control', 'private, max-age=3600, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // An SVG opened from here is a document of this origin: it may run nothing and load nothing.
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox");
  });

  mount(router, routes.delete, write, async (ctx) => {
    await assets.deleteAsset(deps, scope(ctx).projectId, ctx.params.id);
    ctx.body = { success: true, message: 'Asset deleted' };
  });

  return router;
}
