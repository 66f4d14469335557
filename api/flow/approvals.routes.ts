import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Services } from '../../worker/services';
import { requireProject, type Scope } from '../middleware/guards';
import { validate } from '../validation';
import { presentPage } from './gates.presenter';
import { presentApproval } from './approvals.presenter';
import { decisionSchema, listApprovalsSchema } from './approvals.schema';
import { decideApproval, listPendingApprovals, resendRunApprovals, type ApprovalDeps } from './approvals.service';

export function approvalDeps(services: Services): ApprovalDeps {
  return { db: services.db, temporal: services.temporal, mailer: services.mailer, publicUrl: services.config.publicUrl, logger: services.logger };
}

/**
 * Spec, "Flow approvals" (API key, workspace-scoped like every Flow route). "Pending approvals of
 * the authenticated user" is, for an API key, every pending approval of the key's workspace;
 * `?email=` narrows it to one approver. Deciding through the API acts for the approver on record.
 */
export function approvalRoutes(services: Services): Router {
  const deps = approvalDeps(services);
  const read = requireProject(services.db, { role: 'viewer', permission: true }) as Middleware;
  const write = requireProject(services.db, { role: 'member', permission: true }) as Middleware;
  const router = new Router({ prefix: '/api/flow/approvals' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  router.get('/', read, async (ctx) => {
    const query = validate(listApprovalsSchema, ctx.query);
    const { approvals, total } = await listPendingApprovals(deps.db, { projectId: projectId(ctx) }, query);
    ctx.body = presentPage(approvals, total, query.page, query.limit, presentApproval);
  });

  router.post('/resend/:runId', write, async (ctx) => {
    ctx.body = await resendRunApprovals(deps, projectId(ctx), ctx.params.runId);
  });

  for (const [action, decision] of [
    ['approve', 'approved'],
    ['reject', 'rejected'],
  ] as const) {
    router.post(`/:id/${action}`, write, async (ctx) => {
      const body = validate(decisionSchema, ctx.request.body);
      ctx.body = await decideApproval(deps, { projectId: projectId(ctx) }, { approvalId: ctx.params.id, decision, comment: body.comment });
    });
  }
  return router;
}
