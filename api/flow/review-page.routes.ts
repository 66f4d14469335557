import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { AppError } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import { validate } from '../validation';
import { decisionSchema, magicLinkSchema } from './approvals.schema';
import { decideApproval, listPendingApprovals } from './approvals.service';
import { approvalDeps } from './approvals.routes';
import { reviewPageEndpoints as routes } from './flow.endpoints';
import { approvalPage, confirmEmailPage, inboxPage, resultPage } from './review-page.html';
import { authenticateReviewer, resendMagicLink, resolveReviewToken, reviewApprovalDetail } from './review.service';
import { reviewResendLimiter } from './review.routes';
import { resendLimiters } from '../rate-limits';
import type { WebApp } from '../web/web-app';

const COOKIE = 'fm_review';

/**
 * PUBLIC_URL/review (docs/flow.md, "Review page"). Step 1 posts the link's token with the typed
 * e-mail; the review token then lives in an HttpOnly, SameSite=Strict cookie scoped to /review,
 * so forms need no JavaScript and no other site can post decisions with it.
 */
export function reviewPageRoutes(services: Services, appPage?: WebApp['page']): Router {
  const deps = approvalDeps(services);
  const { config, db } = services;
  const limiter = reviewResendLimiter(services);
  const detailDeps = { db, storage: services.storage, downloadUrlTtlSeconds: config.storage.downloadUrlTtlSeconds };
  const router = new Router();
  router.use(['/review', '/no-script/review'], securityHeaders);

  const session = async (ctx: Context) => {
    const token = ctx.cookies.get(COOKIE);
    if (!token) throw new AppError('FLOW.REVIEW_TOKEN_INVALID');
    return resolveReviewToken(db, token);
  };

  // The e-mailed link opens the dashboard's reviewer's page (docs/web.md "The reviewer's page"), whose
  // <noscript> names this page without script; opening either changes nothing (mail scanners follow links).
  mount(router, routes.page, async (ctx) => {
    if (appPage) {
      const search = ctx.querystring ? `?${ctx.querystring}` : '';
      return appPage(ctx, { href: `/no-script/review${search}`, text: 'Review on a page that works without it.' });
    }
    await serverPage(ctx);
  });
  mount(router, routes.noScriptPage, (ctx) => serverPage(ctx));

  async function serverPage(ctx: Context): Promise<void> {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    if (token) return void (ctx.body = confirmEmailPage(token));
    const { email, projectId } = await session(ctx);
    ctx.body = inboxPage((await listPendingApprovals(db, { email, projectId }, { page: 1, limit: 100 })).approvals);
  }

  mount(router, routes.signIn, async (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    try {
      const input = validate(magicLinkSchema, { token: body.token, email: body.email });
      const auth = await authenticateReviewer(db, config.flowApprovals.reviewTokenTtlSeconds, input);
      ctx.cookies.set(COOKIE, auth.reviewToken, { httpOnly: true, sameSite: 'strict', path: '/review', secure: config.production, maxAge: auth.expiresIn * 1000, overwrite: true });
      ctx.redirect(`/review/approvals/${auth.approvalId}`);
      ctx.status = 303;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.status = err.status;
      ctx.body = confirmEmailPage(typeof body.token === 'string' ? body.token : '', 'That link and e-mail address do not match a pending review.');
    }
  });

  mount(router, routes.resend, async (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    const input = validate(magicLinkSchema, { token: body.token, email: body.email });
    await resendMagicLink({ ...deps, limiter, limits: resendLimiters(services) }, input);
    ctx.body = resultPage('New link sent', 'A new review link is on its way; the previous one no longer works.', 'ok');
  });

  mount(router, routes.approval, async (ctx) => {
    const { email, projectId } = await session(ctx);
    const { approval, payload, artefactUrl } = await reviewApprovalDetail(detailDeps, { email, projectId }, ctx.params.id);
    ctx.body = approvalPage(approval, payload, artefactUrl);
  });

  mount(router, routes.decision, async (ctx) => {
    const { email, projectId } = await session(ctx);
    const body = ctx.request.body as Record<string, unknown>;
    const decision = body.decision === 'approve' ? 'approved' : body.decision === 'reject' ? 'rejected' : null;
    if (!decision) throw new AppError('ERR_VALID_001', "decision must be 'approve' or 'reject'", { field: 'decision' });
    const { comment } = validate(decisionSchema, { comment: body.comment || undefined });
    await decideApproval(deps, { email, projectId }, { approvalId: ctx.params.id, decision, comment, approver: email });
    ctx.body = resultPage(decision === 'approved' ? 'Approved' : 'Rejected', `Thank you. Your decision (${decision}) is recorded.`, 'ok');
  });
  return router;
}

/** Strict headers, and errors as a page instead of the JSON body (the page is for people). */
async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  try {
    await next();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    ctx.status = err.status;
    ctx.body = resultPage('Review', pageMessage(err), 'error');
  }
}

function pageMessage(err: AppError): string {
  if (err.code === 'FLOW.REVIEW_TOKEN_INVALID') return 'Your review session has ended. Open the link from your e-mail again.';
  if (err.code === 'FLOW.APPROVAL_ALREADY_DECIDED') {
    return err.relatedInfo?.status === 'expired' ? 'The time to decide this approval has run out; your decision was not recorded.' : 'This approval was already decided.';
  }
  return err.message;
}
