import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { AppError } from '../../domain/errors';
import { requireProject, type Scope } from '../middleware/guards';
import { multipartUploadAs } from '../middleware/uploads';
import { mount } from '../openapi/route';
import { pageMeta } from '../page-meta';
import * as presenter from './imports.presenter';
import { importEndpoints as routes } from './reporting.endpoints';
import * as imports from './imports.service';

/**
 * Model imports under /api/reporting/imports (docs/reporting.md "Imports"):
 * members upload a Metabase, Redash or JRXML model; viewers read the records.
 */
export function importRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/reporting/imports' });
  const read = requireProject(db, { role: 'viewer' });
  const write = requireProject(db, { role: 'member' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const deps = { db, evaluator: services.evaluator, limits: services.config.reporting, importPool: services.importPool };
  // At most 10 MB, counted while it streams; past it 413 ERR_IMP_004 (the upload's own ERR_REQ_002 renamed).
  const importUpload = multipartUploadAs({ ...services.config.uploads, maxFileBytes: imports.IMPORT_MAX_BYTES }, '/api/reporting/imports', () =>
    new AppError('ERR_IMP_004', undefined, { maxBytes: imports.IMPORT_MAX_BYTES }),
  );

  mount(router, routes.create, write, importUpload, async (ctx, { body: input }) => {
    const files = ctx.request.files?.file;
    const file = Array.isArray(files) ? files[0] : files;
    const actor = { projectId: scope(ctx).projectId, userId: scope(ctx).userId };
    const record = await imports.runImport(deps, actor, file, input);
    ctx.status = input.dryRun ? 200 : 201;
    ctx.body = presenter.presentImport(record);
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { imports: page, total } = await imports.listImports(deps, scope(ctx).projectId, query);
    ctx.body = { data: page.map((i) => presenter.presentImport(i, { withItems: false })), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presenter.presentImport(await imports.getImport(deps, scope(ctx).projectId, ctx.params.id));
  });

  return router;
}
