import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { validate } from '../validation';
import * as invitations from './invitations.service';
import * as members from './members.service';
import * as presenter from './teams.presenter';
import * as schema from './teams.schema';

/**
 * Members of the active project. Any member reads the list; owners and admins invite (an admin
 * has "full access except project deletion"); removing, re-roling and cancelling invitations are
 * the owner's (spec: "owner only"), refused to others with ERR_TEAM_003.
 */
export function memberRoutes(router: Router, services: Services): void {
  const { db } = services;
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const owner = requireProject(db, { role: 'owner', deniedCode: 'ERR_TEAM_003' });

  router.get('/members', requireProject(db, { role: 'viewer' }), async (ctx) => {
    const rows = await members.listMembers(db, scope(ctx).projectId);
    ctx.body = { data: rows.map(presenter.presentMember) };
  });

  router.post('/members/invite', requireProject(db, { role: 'admin' }), async (ctx) => {
    const input = validate(schema.inviteSchema, ctx.request.body, schema.inviteCodes);
    const invitation = await invitations.invite(services, { projectId: scope(ctx).projectId, inviter: ctx.state.user, email: input.email, role: input.role });
    ctx.status = 201;
    ctx.body = presenter.presentInvitation(invitation);
  });

  router.delete('/members/:id/invitation', owner, async (ctx) => {
    const { projectId, userId } = scope(ctx);
    await invitations.cancelInvitation(db, { projectId, actorId: userId!, invitationId: ctx.params.id });
    ctx.body = { message: 'Invitation cancelled' };
  });

  router.delete('/members/:id', owner, async (ctx) => {
    const { projectId, userId } = scope(ctx);
    await members.removeMember(db, { projectId, actorId: userId!, memberId: ctx.params.id });
    ctx.body = { message: 'Member removed' };
  });

  router.patch('/members/:id/role', owner, async (ctx) => {
    const { role } = validate(schema.roleSchema, ctx.request.body);
    const { projectId, userId } = scope(ctx);
    const member = await members.changeRole(db, { projectId, actorId: userId!, memberId: ctx.params.id, role });
    ctx.body = presenter.presentMember(member);
  });
}
