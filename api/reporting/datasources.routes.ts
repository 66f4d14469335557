import Router from '@koa/router';
import type { Context } from 'koa';
import { probeRunners } from './probes';
import type { Services } from '../../platform/services';
import { createOutboundGuard } from '../../adapters/http/outbound';
import { requireProject, type Scope } from '../middleware/guards';
import { multipartUpload } from '../middleware/uploads';
import { mount } from '../openapi/route';
import * as presenter from './datasources.presenter';
import { datasourceEndpoints as routes } from './reporting.endpoints';
import * as datasources from './datasources.service';
import * as agentTasks from './agent-tasks.service';
import { presentTask } from '../agents/agents.presenter';
import { pageMeta } from '../page-meta';

/**
 * Reporting datasources under /api/reporting/datasources (docs/reporting.md "Datasources", "Access"). Admins and owners
 * manage them (they hold credentials); viewers, and API keys with `read_reports`, read them; members refresh the
 * schema. API keys never change datasources (403 ERR_AUTH_005, `relatedInfo.required: "manage_datasources"`, a flag no
 * key can hold).
 */
export function datasourceRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/reporting/datasources' });
  const read = requireProject(db, { role: 'viewer', permission: 'read_reports' });
  const refresh = requireProject(db, { role: 'member', apiKeyRequired: 'manage_datasources' });
  const manage = requireProject(db, { role: 'admin', apiKeyRequired: 'manage_datasources' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const deps = { db, connect: probeRunners(services), limits: services.config.reporting, storage: services.storage, guard: createOutboundGuard(services.config.outbound.allowlist) };
  // A csv upload: at most 50 MB, counted while it streams (413 ERR_REQ_002 past it); read only once the caller is an admin.
  const csvUpload = multipartUpload({ ...services.config.uploads, maxFileBytes: datasources.CSV_MAX_BYTES }, /^\/api\/reporting\/datasources\/[^/]+\/file$/);

  mount(router, routes.create, manage, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presenter.presentDatasource(await datasources.createDatasource(deps, scope(ctx).projectId, input));
  });

  // A full create body, tested and not saved (before /:id routes, which would take `test` for an id).
  mount(router, routes.testUnsaved, manage, async (ctx, { body: input }) => {
    ctx.body = presenter.presentTest(await datasources.testUnsavedDatasource(deps, scope(ctx).projectId, input));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { datasources: page, total } = await datasources.listDatasources(deps, scope(ctx).projectId, query);
    ctx.body = { data: page.map(presenter.presentDatasource), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presenter.presentDatasource(await datasources.getDatasource(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, manage, async (ctx, { body: patch }) => {
    ctx.body = presenter.presentDatasource(await datasources.updateDatasource(deps, scope(ctx).projectId, ctx.params.id, patch));
  });

  mount(router, routes.delete, manage, async (ctx) => {
    await datasources.deleteDatasource(deps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.test, manage, async (ctx, { body: { wait } }) => {
    const outcome = await datasources.testDatasource(deps, scope(ctx).projectId, ctx.params.id, wait);
    if ('pending' in outcome) {
      ctx.status = 202;
      ctx.body = outcome.pending;
    } else {
      ctx.body = presenter.presentTest(outcome.test, outcome.executedBy);
    }
  });

  mount(router, routes.uploadFile, manage, csvUpload, async (ctx) => {
    const upload = ctx.request.files?.file;
    const file = Array.isArray(upload) ? upload[0] : upload;
    ctx.body = presenter.presentDatasource(await datasources.storeCsvFile(deps, scope(ctx).projectId, ctx.params.id, file));
  });

  mount(router, routes.refreshSchema, refresh, async (ctx, { body: { wait } }) => {
    const outcome = await datasources.refreshSchema(deps, scope(ctx).projectId, ctx.params.id, wait);
    if ('pending' in outcome) ctx.status = 202;
    ctx.body = 'pending' in outcome ? outcome.pending : outcome;
  });

  mount(router, routes.health, read, async (ctx) => {
    ctx.body = await datasources.datasourceHealth(deps, scope(ctx).projectId, ctx.params.id);
  });

  mount(router, routes.schema, read, async (ctx, { query }) => {
    ctx.body = await datasources.getSchema(deps, scope(ctx).projectId, ctx.params.id, query.search);
  });

  return router;
}

/**
 * GET /api/reporting/tasks/:taskId (docs/reporting.md "Tests, schemas and previews through an agent"): an agent task of
 * the project, with its answer once it has one (a test's outcome, a schema, a preview's rows): what a request that got
 * 202 reads later.
 */
export function agentTaskRoutes(services: Services): Router {
  const { db, storage } = services;
  const router = new Router({ prefix: '/api/reporting/tasks' });
  const member = requireProject(db, { role: 'member' });
  mount(router, routes.getTask, member, async (ctx) => {
    const task = await agentTasks.getTask(db, (ctx.state.scope as Scope).projectId, ctx.params.taskId);
    const [agent]: Array<{ short_id: string }> = await db.query(`SELECT short_id FROM reporting_agents WHERE id = $1`, [task.agentId]);
    ctx.body = { ...presentTask(task, agent?.short_id ?? task.agentId), ...(agentTasks.isDone(task) ? { result: await agentTasks.taskAnswer(storage, task) } : {}) };
  });
  return router;
}
