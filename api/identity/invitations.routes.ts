import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../platform/services';
import { loadUser, requireProject, type Scope } from '../middleware/guards';
import { validate } from '../validation';
import * as invitations from './invitations.service';
import * as presenter from './teams.presenter';
import * as schema from './teams.schema';

/**
 * The invitee's side (any signed-in user, acting on invitations addressed to their e-mail) and
 * the active project's pending invitations (owner and admins, who send them).
 */
export function invitationRoutes(router: Router, services: Services): void {
  const { db } = services;

  router.get('/invitations', requireProject(db, { role: 'admin' }), async (ctx: Context) => {
    const rows = await invitations.listProjectInvitations(db, (ctx.state.scope as Scope).projectId);
    ctx.body = { data: rows.map(presenter.presentInvitation) };
  });

  router.get('/invitations/my', async (ctx) => {
    const user = await loadUser(db, ctx);
    const rows = await invitations.listMyInvitations(db, user);
    ctx.body = { data: rows.map(presenter.presentMyInvitation) };
  });

  // For whoever holds the e-mailed link, signed in or not (the invitation page shows it before sign-in); changes nothing.
  router.get('/invitations/:id', async (ctx) => {
    const { token } = validate(schema.invitationLinkQuerySchema, ctx.query);
    const invitation = await invitations.invitationByLink(db, ctx.params.id, token);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = presenter.presentInvitationByLink(invitation);
  });

  router.post('/invitations/:id/accept', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { token } = validate(schema.decideInvitationSchema, ctx.request.body);
    await invitations.acceptInvitation(db, { user, invitationId: ctx.params.id, token });
    ctx.body = { message: 'Invitation accepted' };
  });

  router.post('/invitations/:id/reject', async (ctx) => {
    const user = await loadUser(db, ctx);
    const { token } = validate(schema.decideInvitationSchema, ctx.request.body);
    await invitations.rejectInvitation(db, { user, invitationId: ctx.params.id, token });
    ctx.body = { message: 'Invitation rejected' };
  });
}
