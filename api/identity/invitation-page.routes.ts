import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import type { WebApp } from '../web/web-app';
import { html, search } from './account-pages.routes';
import { invitationForm, messagePage } from './account-pages.html';
import { login, type SecondFactorCheck } from './auth.service';
import { pageEndpoints as routes } from './identity.endpoints';
import { acceptInvitation, invitationForPage, rejectInvitation } from './invitations.service';

const GONE = 'This invitation link is invalid, has expired, or the invitation was already answered or withdrawn.';

/**
 * `PUBLIC_URL/invitations/<id>?token=…`, the link in invitation e-mails, opens the dashboard's page
 * (docs/web.md "Links in e-mails"). The page here shows the invitation and lets the invitee sign in
 * and accept or decline it without JavaScript (the token proves the mailbox): under
 * `/no-script/invitations/<id>` (the app's `<noscript>` links there), and at the link itself when
 * the app is not built. Its form POSTs to the link's path. Declared in identity.endpoints.ts; the
 * form's fields are read here.
 */
export function invitationPageRoutes(services: Services, checkSecondFactor: SecondFactorCheck, appPage?: WebApp['page']): Router {
  const router = new Router();

  // Neither page decides anything on GET: mail scanners open links too.
  mount(router, routes.invitationLink, async (ctx) => {
    if (appPage) return appPage(ctx, { href: `/no-script/invitations/${encodeURIComponent(ctx.params.id)}${search(ctx)}`, text: 'Answer the invitation on a page that works without it.' });
    await invitationPage(ctx);
  });
  mount(router, routes.invitationPage, (ctx) => invitationPage(ctx));

  async function invitationPage(ctx: Context): Promise<void> {
    const token = field(ctx.query.token);
    const inv = token ? await invitationForPage(services.db, ctx.params.id, token) : undefined;
    if (!inv) return html(ctx, 404, messagePage('Invitation not found', GONE, 'error'));
    html(ctx, 200, invitationForm(inv, token));
  }

  mount(router, routes.answerInvitation, async (ctx) => {
    const form = (ctx.request.body ?? {}) as Record<string, unknown>;
    const token = field(form.token);
    const inv = token ? await invitationForPage(services.db, ctx.params.id, token) : undefined;
    if (!inv) return html(ctx, 404, messagePage('Invitation not found', GONE, 'error'));
    try {
      const { user } = await login(services, { email: field(form.email).toLowerCase(), password: field(form.password), code: field(form.code) || undefined }, checkSecondFactor);
      const decide = form.decision === 'reject' ? rejectInvitation : acceptInvitation;
      await decide(services.db, { user, invitationId: inv.id, token });
      html(
        ctx,
        200,
        form.decision === 'reject'
          ? messagePage('Invitation declined', `You declined the invitation to ${inv.teamName}.`, 'ok')
          : messagePage(`Welcome to ${inv.teamName}`, `You are now a ${inv.role} of ${inv.teamName}.`, 'ok'),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err.status === 429) {
        // Sign-in locked (ERR_AUTH_015): the page says so with the wait, and so does the status.
        const retryAfter = Number(err.relatedInfo?.retryAfter ?? 60);
        ctx.set('Retry-After', String(retryAfter));
        return html(ctx, 429, invitationForm(inv, token, `${err.message} (in ${retryAfter} seconds).`));
      }
      const why = err.code === 'ERR_TEAM_009' ? `This invitation is for ${inv.email}: sign in with that address.` : err.message;
      html(ctx, 400, invitationForm(inv, token, why));
    }
  });

  return router;
}

function field(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, 300) : '';
}
