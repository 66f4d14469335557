import Router from '@koa/router';
import type { Context } from 'koa';
import { listActivities } from '../../db/identity/activity';
import type { Services } from '../../platform/services';
import { requireMembership, requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { pageMeta } from '../page-meta';
import { teamEndpoints as routes } from './identity.endpoints';
import { invitationRoutes } from './invitations.routes';
import { memberRoutes } from './members.routes';
import * as presenter from './teams.presenter';
import * as teams from './teams.service';
import { signedIn, signedInUser } from './signed-in';

/**
 * Spec, "Projects (JWT only)". /api/teams/:id routes take the project from the path (the caller
 * must be a member; owner for changes, ERR_TEAM_003); everything else acts on the active project
 * (X-Team-Id, default personal). Roles are decided by the guards only. Each route is declared once,
 * in identity.endpoints.ts (api/openapi/route.ts).
 */
export function teamRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/teams' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;

  // Static paths before /:id: @koa/router matches in registration order and would otherwise hand
  // /members, /invitations/my and /activity to the project routes.
  memberRoutes(router, services);
  invitationRoutes(router, services);

  mount(router, routes.activity, requireProject(db, { role: 'viewer' }), async (ctx, { query }) => {
    const { limit, page } = query;
    const { rows, total } = await listActivities(db, scope(ctx).projectId, limit, (page - 1) * limit);
    ctx.body = { data: rows.map(presenter.presentActivity), meta: pageMeta(total, page, limit) };
  });

  const user = signedIn(db);

  mount(router, routes.create, user, async (ctx, { body }) => {
    const project = await teams.createProject(db, { userId: signedInUser(ctx).id, ...body });
    ctx.status = 201;
    ctx.body = presenter.presentCreatedProject(project);
  });

  mount(router, routes.list, user, async (ctx) => {
    const rows = await teams.listProjects(db, signedInUser(ctx).id);
    ctx.body = { data: rows.map(presenter.presentProject) };
  });

  const member = requireMembership(db, { role: 'viewer', param: 'id' });
  const owner = requireMembership(db, { role: 'owner', param: 'id', deniedCode: 'ERR_TEAM_003' });

  mount(router, routes.get, member, async (ctx) => {
    const { userId, projectId } = scope(ctx);
    ctx.body = presenter.presentProject(await teams.getProject(db, userId!, projectId));
  });

  mount(router, routes.update, owner, async (ctx, { body }) => {
    const { userId, projectId } = scope(ctx);
    ctx.body = presenter.presentProject(await teams.updateProject(db, { userId: userId!, projectId, ...body }));
  });

  mount(router, routes.delete, owner, async (ctx) => {
    const { userId, projectId } = scope(ctx);
    await teams.deleteProject(db, { userId: userId!, projectId });
    ctx.body = { message: 'Project deleted' };
  });

  return router;
}
