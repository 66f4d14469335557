import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { teamEndpoints as routes } from './identity.endpoints';
import * as invitations from './invitations.service';
import { signedIn, signedInUser } from './signed-in';
import * as presenter from './teams.presenter';

/**
 * The invitee's side (any signed-in user, acting on invitations addressed to their e-mail) and
 * the active project's pending invitations (owner and admins, who send them). Declared in
 * identity.endpoints.ts; `signedIn` loads the user before the body is validated.
 */
export function invitationRoutes(router: Router, services: Services): void {
  const { db } = services;
  const user = signedIn(db);

  mount(router, routes.invitations, requireProject(db, { role: 'admin' }), async (ctx: Context) => {
    const rows = await invitations.listProjectInvitations(db, (ctx.state.scope as Scope).projectId);
    ctx.body = { data: rows.map(presenter.presentInvitation) };
  });

  mount(router, routes.myInvitations, user, async (ctx) => {
    const rows = await invitations.listMyInvitations(db, signedInUser(ctx));
    ctx.body = { data: rows.map(presenter.presentMyInvitation) };
  });

  // For whoever holds the e-mailed link, signed in or not (the invitation page shows it before sign-in); changes nothing.
  mount(router, routes.invitationByLink, async (ctx, { query }) => {
    const invitation = await invitations.invitationByLink(db, ctx.params.id, query.token);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = presenter.presentInvitationByLink(invitation);
  });

  mount(router, routes.acceptInvitation, user, async (ctx, { body }) => {
    await invitations.acceptInvitation(db, { user: signedInUser(ctx), invitationId: ctx.params.id, token: body.token });
    ctx.body = { message: 'Invitation accepted' };
  });

  mount(router, routes.rejectInvitation, user, async (ctx, { body }) => {
    await invitations.rejectInvitation(db, { user: signedInUser(ctx), invitationId: ctx.params.id, token: body.token });
    ctx.body = { message: 'Invitation rejected' };
  });
}
