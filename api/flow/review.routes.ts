import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { AppError } from '../../domain/errors';
import { sha256Hex } from '../../domain/signing';
import type { Principal } from '../../domain/identity/principal';
import type { Services } from '../../platform/services';
import { cookieSession } from '../identity/browser-session';
import { createLimiterFactory, resendLimiters } from '../rate-limits';
import { sendStoredFile } from '../storage/send-file';
import { mount } from '../openapi/route';
import { reviewEndpoints as routes } from './flow.endpoints';
import { presentPage } from './gates.presenter';
import { presentApproval } from './approvals.presenter';
import { presentReviewDetail } from './review.presenter';
import { decideApproval, listPendingApprovals } from './approvals.service';
import { approvalDeps } from './approvals.routes';
import { authenticateReviewer, magicLinkStatus, resendMagicLink, resolveReviewToken, reviewApprovalDetail, reviewDocument } from './review.service';

/**
 * The reviewer's page in the dashboard keeps its review token in this cookie (docs/web.md "The
 * reviewer's page"): HttpOnly, so the page's script never holds it; SameSite=Strict and scoped to
 * the review API, so no other site's page sends it and no other route sees it.
 */
const REVIEW_COOKIE = 'formwork_review';
const REVIEW_COOKIE_PATH = '/api/flow/review';

/** The review token's holder; anything else is refused (review endpoints take no API key or JWT). */
function reviewer(ctx: Context): Principal & { kind: 'review' } {
  if (ctx.state.authError) throw ctx.state.authError;
  const p = ctx.state.principal as Principal;
  if (p.kind === 'review') return p;
  if (p.kind === 'anonymous') throw new AppError('ERR_AUTH_003');
  throw new AppError('ERR_AUTH_005', 'This endpoint needs a review token', { required: 'review', granted: p.kind });
}

/** Refuses any caller but a review token's holder before the request is validated (as the handlers did before validating). */
const reviewerOnly: Middleware = async (ctx, next) => {
  reviewer(ctx);
  await next();
};

/** Magic-link re-sends per approver e-mail: FLOW_REVIEW_RESEND_PER_10_MINUTES per 10 minutes. */
export function reviewResendLimiter(services: Services) {
  return createLimiterFactory(services.redis, services.config.temporal.taskQueuePrefix)('flow-review-resend', services.config.flowApprovals.reviewResendPer10Minutes, 600);
}

/** Spec, "Flow review": external approvers, no API key (docs/flow.md, "Review API"). */
export function reviewRoutes(services: Services): Router {
  const deps = approvalDeps(services);
  const { config } = services;
  const limiter = reviewResendLimiter(services);
  const detailDeps = { db: services.db, storage: services.storage, downloadUrlTtlSeconds: config.storage.downloadUrlTtlSeconds };
  const router = new Router({ prefix: '/api/flow/review' });

  /**
   * A browser session (X-Formwork-Session: cookie, from this service's own pages only): the review
   * token comes from the cookie when no Authorization header names a credential. The header is
   * needed on every call, so a cross-site form cannot use the cookie even if a browser sent it.
   */
  router.use(async (ctx: Context, next: Next) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal?.kind === 'anonymous' && !ctx.state.authError && !ctx.get('Authorization') && cookieSession(ctx, config.publicUrl)) {
      const token = ctx.cookies.get(REVIEW_COOKIE);
      if (token && token.length <= 200) {
        try {
          ctx.state.principal = await resolveReviewToken(services.db, token);
        } catch (err) {
          ctx.state.authError = err;
        }
      }
    }
    await next();
  });

  mount(router, routes.authenticate, async (ctx, { body: input }) => {
    // Checked before the link is used: a refused browser session must not spend it.
    const inCookie = cookieSession(ctx, config.publicUrl);
    const { reviewToken, expiresIn, approvalId } = await authenticateReviewer(services.db, config.flowApprovals.reviewTokenTtlSeconds, input);
    if (inCookie) {
      ctx.cookies.set(REVIEW_COOKIE, reviewToken, { httpOnly: true, sameSite: 'strict', path: REVIEW_COOKIE_PATH, secure: config.production, maxAge: expiresIn * 1000, overwrite: true });
      ctx.body = { expiresIn, approvalId };
      return;
    }
    ctx.body = { reviewToken, expiresIn, approvalId };
  });

  mount(router, routes.link, async (ctx, { body }) => {
    ctx.body = await magicLinkStatus(services.db, body.token);
  });

  mount(router, routes.signOut, async (ctx) => {
    // Ends the cookie's session: the token is revoked, the cookie cleared.
    const token = ctx.cookies.get(REVIEW_COOKIE);
    if (token && cookieSession(ctx, config.publicUrl)) {
      await services.db.query(`UPDATE flow_review_tokens SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL`, [sha256Hex(token)]);
    }
    ctx.cookies.set(REVIEW_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: REVIEW_COOKIE_PATH, secure: config.production, maxAge: 0, overwrite: true });
    ctx.status = 204;
  });

  mount(router, routes.resend, async (ctx, { body: input }) => {
    ctx.body = await resendMagicLink({ ...deps, limiter, limits: resendLimiters(services) }, input);
  });

  mount(router, routes.inbox, reviewerOnly, async (ctx, { query }) => {
    const { email, projectId } = reviewer(ctx);
    const { approvals, total } = await listPendingApprovals(services.db, { email, projectId }, query);
    ctx.body = presentPage(approvals, total, query.page, query.limit, presentApproval);
  });

  mount(router, routes.approval, reviewerOnly, async (ctx) => {
    const { email, projectId } = reviewer(ctx);
    const detail = await reviewApprovalDetail(detailDeps, { email, projectId }, ctx.params.id);
    ctx.body = presentReviewDetail(detail.approval, detail);
  });

  mount(router, routes.document, reviewerOnly, async (ctx) => {
    const { email, projectId } = reviewer(ctx);
    const file = await reviewDocument(detailDeps, { email, projectId }, ctx.params.id);
    sendStoredFile(ctx, file, { cacheControl: 'no-store', disposition: 'inline' });
  });

  for (const [route, decision] of [
    [routes.approve, 'approved'],
    [routes.reject, 'rejected'],
  ] as const) {
    mount(router, route, reviewerOnly, async (ctx, { body }) => {
      const { email, projectId } = reviewer(ctx);
      ctx.body = await decideApproval(deps, { email, projectId }, { approvalId: ctx.params.id, decision, comment: body.comment, approver: email });
    });
  }
  return router;
}
