import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { requireVerifiedSender } from '../middleware/verified-sender';
import { resendLimiters } from '../rate-limits';
import { mount } from '../openapi/route';
import { approvalEndpoints as routes } from './flow.endpoints';
import { presentPage } from './gates.presenter';
import { presentApproval } from './approvals.presenter';
import { decideApproval, listPendingApprovals, resendRunApprovals, type ApprovalDeps } from './approvals.service';

export function approvalDeps(services: Services): ApprovalDeps {
  return { db: services.db, mailer: services.mailer, publicUrl: services.config.publicUrl, logger: services.logger, outbox: services.outbox };
}

/**
 * The person behind the call (spec: "pending approvals of the authenticated user"): the signed-in
 * user for a JWT, the user who created the key for an API key. Their current e-mail is the
 * approver address they list and decide for; an unverified address decides nothing.
 */
async function caller(db: DataSource, ctx: Context): Promise<{ email: string; verified: boolean }> {
  const scope = ctx.state.scope as Scope;
  // A program's credential (API key, OAuth client) acts for the person who created it.
  const [row]: Array<{ email: string; verified: boolean }> = scope.apiKeyId
    ? await db.query(`SELECT u.email, u.email_verified_at IS NOT NULL AS verified FROM api_keys k JOIN users u ON u.id = k.created_by WHERE k.id = $1`, [scope.apiKeyId])
    : scope.oauthClientId
      ? await db.query(`SELECT u.email, u.email_verified_at IS NOT NULL AS verified FROM oauth_clients c JOIN users u ON u.id = c.created_by WHERE c.id = $1`, [scope.oauthClientId])
      : await db.query(`SELECT email, email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1`, [scope.userId]);
  if (!row) throw new AppError('ERR_AUTH_004');
  return { email: row.email.toLowerCase(), verified: row.verified };
}

/**
 * Spec, "Flow approvals" (API key, workspace-scoped like every Flow route). Approvals are decided
 * by people (docs/security.md, "Approvals"): the list holds the pending approvals of the caller's
 * e-mail in the workspace, and a decision is accepted only from the approver on record.
 */
export function approvalRoutes(services: Services): Router {
  const deps = approvalDeps(services);
  const read = requireProject(services.db, { role: 'viewer', permission: true }) as Middleware;
  const write = requireProject(services.db, { role: 'member', permission: true }) as Middleware;
  const router = new Router({ prefix: '/api/flow/approvals' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { email } = await caller(deps.db, ctx);
    const { approvals, total } = await listPendingApprovals(deps.db, { projectId: projectId(ctx), email }, query);
    ctx.body = presentPage(approvals, total, query.page, query.limit, presentApproval);
  });

  const resendLimits = resendLimiters(services);
  mount(router, routes.resend, write, async (ctx) => {
    await requireVerifiedSender(deps.db, ctx.state.scope as Scope, 're-sending approval e-mails');
    ctx.body = await resendRunApprovals({ ...deps, limits: resendLimits }, projectId(ctx), ctx.params.runId);
  });

  for (const [route, decision] of [
    [routes.approve, 'approved'],
    [routes.reject, 'rejected'],
  ] as const) {
    mount(router, route, write, async (ctx, { body }) => {
      const me = await caller(deps.db, ctx);
      if (!me.verified) throw new AppError('ERR_AUTH_006', 'Verify your e-mail address before deciding approvals');
      ctx.body = await decideApproval(deps, { projectId: projectId(ctx) }, { approvalId: ctx.params.id, decision, comment: body.comment, approver: me.email });
    });
  }
  return router;
}
