import Router from '@koa/router';
import type { Context } from 'koa';
import { consumableEmailToken } from '../../db/identity/email-tokens';
import { AppError } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import type { WebApp } from '../web/web-app';
import { resetPassword, verifyEmail } from './auth.service';
import { messagePage, resetPasswordForm, verifyEmailForm } from './account-pages.html';
import { pageEndpoints as routes } from './identity.endpoints';

const EXPIRED_LINK = 'This link is invalid, has already been used or has expired.';

/**
 * The links in account e-mails (`PUBLIC_URL/verify-email?token=…`, `/reset-password?token=…`) open
 * the dashboard's pages (docs/web.md "Links in e-mails"), which call the JSON endpoints; the pages
 * here work without script: under `/no-script/…` (the app's `<noscript>` links there), and at the
 * links themselves when the app is not built. Their forms POST to the links' paths. They call the
 * same service functions as the JSON endpoints. Declared in identity.endpoints.ts; the forms' fields
 * are read here.
 */
export function accountPageRoutes(services: Services, appPage?: WebApp['page']): Router {
  const router = new Router();
  const { db } = services;

  // Neither opening the app's page nor the one without script uses the token: mail scanners follow links too.
  mount(router, routes.verifyEmailLink, async (ctx) => {
    if (appPage) return appPage(ctx, { href: `/no-script/verify-email${search(ctx)}`, text: 'Confirm your address on a page that works without it.' });
    await verifyEmailPage(ctx);
  });
  mount(router, routes.verifyEmailPage, (ctx) => verifyEmailPage(ctx));
  mount(router, routes.resetPasswordLink, async (ctx) => {
    if (appPage) return appPage(ctx, { href: `/no-script/reset-password${search(ctx)}`, text: 'Choose a new password on a page that works without it.' });
    await resetPasswordPage(ctx);
  });
  mount(router, routes.resetPasswordPage, (ctx) => resetPasswordPage(ctx));

  // Looked at, not used up: only the page's button (a POST) confirms.
  async function verifyEmailPage(ctx: Context): Promise<void> {
    const token = queryToken(ctx);
    if (!token || !(await consumableEmailToken(db, token, 'verify_email'))) {
      html(ctx, 400, messagePage('Could not confirm your e-mail address', `${EXPIRED_LINK} Sign in and ask for a new confirmation e-mail.`, 'error'));
      return;
    }
    html(ctx, 200, verifyEmailForm(token));
  }

  mount(router, routes.verifyEmail, async (ctx) => {
    const form = (ctx.request.body ?? {}) as Record<string, unknown>;
    const token = typeof form.token === 'string' && form.token.length > 0 && form.token.length <= 200 ? form.token : undefined;
    try {
      if (!token) throw new AppError('ERR_AUTH_007');
      await verifyEmail(db, token);
      html(ctx, 200, messagePage('E-mail address confirmed', 'Thank you: your e-mail address is confirmed. You can close this page.', 'ok'));
    } catch (err) {
      if (!isTokenError(err)) throw err;
      html(ctx, 400, messagePage('Could not confirm your e-mail address', `${EXPIRED_LINK} Sign in and ask for a new confirmation e-mail.`, 'error'));
    }
  });

  async function resetPasswordPage(ctx: Context): Promise<void> {
    const token = queryToken(ctx);
    // Looked at, not used up: the token is spent only when the form is sent.
    if (!token || !(await consumableEmailToken(db, token, 'reset_password'))) {
      html(ctx, 400, messagePage('Could not reset your password', `${EXPIRED_LINK} Ask for a new password-reset e-mail.`, 'error'));
      return;
    }
    html(ctx, 200, resetPasswordForm(token));
  }

  mount(router, routes.resetPassword, async (ctx) => {
    const form = (ctx.request.body ?? {}) as Record<string, unknown>;
    const token = typeof form.token === 'string' ? form.token.slice(0, 200) : '';
    const newPassword = typeof form.newPassword === 'string' ? form.newPassword : '';
    const confirm = typeof form.confirmPassword === 'string' ? form.confirmPassword : newPassword;
    const problem =
      newPassword.length < 8 ? 'The password must have at least 8 characters.'
      : newPassword.length > 200 ? 'The password must have at most 200 characters.'
      : newPassword !== confirm ? 'The two passwords do not match.'
      : undefined;
    if (problem) {
      html(ctx, 400, resetPasswordForm(token, problem));
      return;
    }
    try {
      if (!token) throw new AppError('ERR_AUTH_007');
      await resetPassword(db, token, newPassword);
      html(ctx, 200, messagePage('Password changed', 'Your password has been changed and every session signed out. You can now sign in with the new password.', 'ok'));
    } catch (err) {
      if (!isTokenError(err)) throw err;
      html(ctx, 400, messagePage('Could not reset your password', `${EXPIRED_LINK} Ask for a new password-reset e-mail.`, 'error'));
    }
  });

  return router;
}

/** The link's token again, for the page without script. */
export function search(ctx: Context): string {
  const token = queryToken(ctx);
  return token ? `?token=${encodeURIComponent(token)}` : '';
}

function queryToken(ctx: Context): string | undefined {
  const token = ctx.query.token;
  return typeof token === 'string' && token.length > 0 && token.length <= 200 ? token : undefined;
}

function isTokenError(err: unknown): boolean {
  return err instanceof AppError && err.code === 'ERR_AUTH_007';
}

/** No scripts, no framing, no referrer (the token is in the URL), never cached. */
export function html(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.body = body;
}
