import Router from '@koa/router';
import type { Context } from 'koa';
import { listActivities } from '../../db/identity/activity';
import type { Services } from '../../platform/services';
import { loadUser, requireMembership, requireProject, type Scope } from '../middleware/guards';
import { pageMeta } from '../page-meta';
import { validate } from '../validation';
import { invitationRoutes } from './invitations.routes';
import { memberRoutes } from './members.routes';
import * as presenter from './teams.presenter';
import * as schema from './teams.schema';
import * as teams from './teams.service';

/**
 * Spec, "Projects (JWT only)". /api/teams/:id routes take the project from the path (the caller
 * must be a member; owner for changes, ERR_TEAM_003); everything else acts on the active project
 * (X-Team-Id, default personal). Roles are decided by the guards only.
 */
export function teamRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/teams' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;

  // Static paths before /:id: @koa/router matches in registration order and would otherwise hand
  // /members, /invitations/my and /activity to the project routes.
  memberRoutes(router, services);
  invitationRoutes(router, services);

  router.get('/activity', requireProject(db, { role: 'viewer' }), async (ctx) => {
    const { limit, page } = validate(schema.activityQuerySchema, ctx.query);
    const { rows, total } = await listActivities(db, scope(ctx).projectId, limit, (page - 1) * limit);
    ctx.body = { data: rows.map(presenter.presentActivity), meta: pageMeta(total, page, limit) };
  });

  router.post('/', async (ctx) => {
    const user = await loadUser(db, ctx);
    const input = validate(schema.createTeamSchema, ctx.request.body);
    const project = await teams.createProject(db, { userId: user.id, ...input });
    ctx.status = 201;
    ctx.body = presenter.presentCreatedProject(project);
  });

  router.get('/', async (ctx) => {
    const user = await loadUser(db, ctx);
    const rows = await teams.listProjects(db, user.id);
    ctx.body = { data: rows.map(presenter.presentProject) };
  });

  const member = requireMembership(db, { role: 'viewer', param: 'id' });
  const owner = requireMembership(db, { role: 'owner', param: 'id', deniedCode: 'ERR_TEAM_003' });

  router.get('/:id', member, async (ctx) => {
    const { userId, projectId } = scope(ctx);
    ctx.body = presenter.presentProject(await teams.getProject(db, userId!, projectId));
  });

  router.put('/:id', owner, async (ctx) => {
    const input = validate(schema.updateTeamSchema, ctx.request.body);
    const { userId, projectId } = scope(ctx);
    ctx.body = presenter.presentProject(await teams.updateProject(db, { userId: userId!, projectId, ...input }));
  });

  router.delete('/:id', owner, async (ctx) => {
    const { userId, projectId } = scope(ctx);
    await teams.deleteProject(db, { userId: userId!, projectId });
    ctx.body = { message: 'Project deleted' };
  });

  return router;
}
