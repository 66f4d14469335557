import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { teamEndpoints as routes } from './identity.endpoints';
import * as invitations from './invitations.service';
import * as members from './members.service';
import * as presenter from './teams.presenter';

/**
 * Members of the active project. Any member reads the list; owners and admins invite (an admin
 * has "full access except project deletion"); removing, re-roling and cancelling invitations are
 * the owner's (spec: "owner only"), refused to others with ERR_TEAM_003. Declared in
 * identity.endpoints.ts, the invitation with its own code for a malformed e-mail (`codes`).
 */
export function memberRoutes(router: Router, services: Services): void {
  const { db } = services;
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const owner = requireProject(db, { role: 'owner', deniedCode: 'ERR_TEAM_003' });

  mount(router, routes.members, requireProject(db, { role: 'viewer' }), async (ctx) => {
    const rows = await members.listMembers(db, scope(ctx).projectId);
    ctx.body = { data: rows.map(presenter.presentMember) };
  });

  mount(router, routes.invite, requireProject(db, { role: 'admin' }), async (ctx, { body }) => {
    const invitation = await invitations.invite(services, { projectId: scope(ctx).projectId, inviter: ctx.state.user, email: body.email, role: body.role });
    ctx.status = 201;
    ctx.body = presenter.presentInvitation(invitation);
  });

  mount(router, routes.cancelInvitation, owner, async (ctx) => {
    const { projectId, userId } = scope(ctx);
    await invitations.cancelInvitation(db, { projectId, actorId: userId!, invitationId: ctx.params.id });
    ctx.body = { message: 'Invitation cancelled' };
  });

  mount(router, routes.removeMember, owner, async (ctx) => {
    const { projectId, userId } = scope(ctx);
    await members.removeMember(db, { projectId, actorId: userId!, memberId: ctx.params.id });
    ctx.body = { message: 'Member removed' };
  });

  mount(router, routes.changeRole, owner, async (ctx, { body }) => {
    const { projectId, userId } = scope(ctx);
    const member = await members.changeRole(db, { projectId, actorId: userId!, memberId: ctx.params.id, role: body.role });
    ctx.body = presenter.presentMember(member);
  });
}
