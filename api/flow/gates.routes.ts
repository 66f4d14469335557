import Router from '@koa/router';
import type { Context } from 'koa';
import type { GateEntity } from '../../db/flow/gate.entity';
import type { Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { requireVerifiedSender } from '../middleware/verified-sender';
import { mount } from '../openapi/route';
import type { FlowApiDeps } from './flow-api';
import * as presenter from './gates.presenter';
import { gateEndpoints as routes } from './flow.endpoints';
import * as gates from './gates.service';
import { importGateSchema } from './gate-templates';

/**
 * Spec, "Flow gates": CRUD, schema versions and import. Workspace-scoped: an API key acts on its
 * project; a dashboard JWT on its active project (viewer reads, member writes; docs/flow.md).
 * Changing a gate needs an API key's `manage_gates` flag; reading needs any key of the workspace.
 * Each route is declared once, in flow.endpoints.ts (its body and query validated before the handler).
 */
export function gateRoutes(deps: FlowApiDeps): Router {
  const { read, manage } = deps;
  const gateDeps = { db: deps.db, evaluator: deps.submissions.evaluator, guard: deps.guard };
  const router = new Router({ prefix: '/api/flow/gates' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  // Idempotency-Key: the answer is stored in the transaction that inserts the gate (docs/idempotency.md).
  mount(router, routes.create, manage, idempotent(deps), async (ctx, { body: input }) => {
    // Approvers are e-mailed by the gate's runs: only a verified account may name them.
    if (input.approvalConfig?.approvers?.length) await requireVerifiedSender(deps.db, ctx.state.scope as Scope, 'naming approvers who will be e-mailed');
    const created = (gate: GateEntity) => ({ status: 201, headers: {}, body: presenter.presentGate(gate) });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, created(await gates.createGate(gateDeps, projectId(ctx), input, store && ((m, gate) => store(m, created(gate))))));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { gates: page, total } = await gates.listGates(gateDeps, projectId(ctx), query);
    ctx.body = presenter.presentPage(page, total, query.page, query.limit, presenter.presentGate);
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presenter.presentGate(await gates.getGate(gateDeps, projectId(ctx), ctx.params.id));
  });

  mount(router, routes.update, manage, async (ctx, { body: input }) => {
    if (input.approvalConfig?.approvers?.length) await requireVerifiedSender(deps.db, ctx.state.scope as Scope, 'naming approvers who will be e-mailed');
    ctx.body = presenter.presentGate(await gates.updateGate(gateDeps, projectId(ctx), ctx.params.id, input));
  });

  mount(router, routes.delete, manage, async (ctx) => {
    await gates.deleteGate(gateDeps, projectId(ctx), ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.putSchema, manage, async (ctx, { body }) => {
    ctx.body = presenter.presentGate(await gates.putGateSchema(gateDeps, projectId(ctx), ctx.params.id, body));
  });

  mount(router, routes.importSchema, manage, async (ctx, { body }) => {
    ctx.body = presenter.presentGate(await importGateSchema(gateDeps, projectId(ctx), ctx.params.id, body.templateId));
  });

  mount(router, routes.versions, read, async (ctx) => {
    const versions = await gates.listGateVersions(gateDeps, projectId(ctx), ctx.params.id);
    ctx.body = { data: versions.map(presenter.presentVersion) };
  });

  return router;
}
