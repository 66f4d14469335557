import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import type { Services } from '../../platform/services';
import { createLimiterFactory, resendLimiters } from '../rate-limits';
import { validate } from '../validation';
import { presentPage } from './gates.presenter';
import { presentApproval, presentReviewApproval } from './approvals.presenter';
import { decisionSchema, listApprovalsSchema, magicLinkSchema } from './approvals.schema';
import { decideApproval, listPendingApprovals } from './approvals.service';
import { approvalDeps } from './approvals.routes';
import { authenticateReviewer, resendMagicLink, reviewApprovalDetail } from './review.service';

/** The review token's holder; anything else is refused (review endpoints take no API key or JWT). */
function reviewer(ctx: Context): Principal & { kind: 'review' } {
  if (ctx.state.authError) throw ctx.state.authError;
  const p = ctx.state.principal as Principal;
  if (p.kind === 'review') return p;
  if (p.kind === 'anonymous') throw new AppError('ERR_AUTH_003');
  throw new AppError('ERR_AUTH_005', 'This endpoint needs a review token', { required: 'review', granted: p.kind });
}

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

  router.post('/authenticate', async (ctx) => {
    const input = validate(magicLinkSchema, ctx.request.body);
    const { reviewToken, expiresIn } = await authenticateReviewer(services.db, config.flowApprovals.reviewTokenTtlSeconds, input);
    ctx.body = { reviewToken, expiresIn };
  });

  router.post('/resend', async (ctx) => {
    const input = validate(magicLinkSchema, ctx.request.body);
    ctx.body = await resendMagicLink({ ...deps, limiter, limits: resendLimiters(services) }, input);
  });

  router.get('/inbox', async (ctx) => {
    const { email, projectId } = reviewer(ctx);
    const query = validate(listApprovalsSchema, ctx.query);
    const { approvals, total } = await listPendingApprovals(services.db, { email, projectId }, query);
    ctx.body = presentPage(approvals, total, query.page, query.limit, presentApproval);
  });

  router.get('/approvals/:id', async (ctx) => {
    const { email, projectId } = reviewer(ctx);
    const { approval, payload, artefactUrl } = await reviewApprovalDetail(detailDeps, { email, projectId }, ctx.params.id);
    ctx.body = presentReviewApproval(approval, { payload, artefactUrl });
  });

  for (const [action, decision] of [
    ['approve', 'approved'],
    ['reject', 'rejected'],
  ] as const) {
    router.post(`/approvals/:id/${action}`, async (ctx) => {
      const { email, projectId } = reviewer(ctx);
      const body = validate(decisionSchema, ctx.request.body);
      ctx.body = await decideApproval(deps, { email, projectId }, { approvalId: ctx.params.id, decision, comment: body.comment, approver: email });
    });
  }
  return router;
}
