import Router from '@koa/router';
import type { Context } from 'koa';
import type { Principal } from '../../domain/identity/principal';
import { keyPermits, type Scope } from '../middleware/guards';
import { presentWebhookDelivery } from '../deliveries/delivery.presenter';
import { FLOW_RETRY_CODES, listRunDeliveries, retryWebhookDelivery, type DeliveryDeps } from '../webhooks/webhook-deliveries.service';
import { mount } from '../openapi/route';
import { FLOW_ACCESS, type FlowApiDeps } from './flow-api';
import { runEndpoints as routes } from './flow.endpoints';
import { getRun } from './runs.service';

/**
 * Spec, "Flow deliveries": a run's delivery records (with attempts) and the manual retry of a
 * failed one. Workspace-scoped like every Flow route: another workspace's run or delivery ids
 * answer 404 like unknown ones. The retry starts the delivery's workflow again; when it succeeds
 * and every delivery of a `failed` run has then completed, the run becomes `completed`
 * (activities/webhooks/attempt-delivery.activity.ts, db/flow/run-state.ts).
 *
 * A delivery's `payload` is the body sent, the run's input payload with it: an API key (or OAuth
 * token) without `read_runs` gets the records without it (the contract's delivery record does not
 * name it), so a key can follow its deliveries without reading what was submitted.
 */
export function deliveryRoutes(deps: FlowApiDeps, deliveries: DeliveryDeps): Router {
  const router = new Router({ prefix: '/api/flow' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  mount(router, routes.deliveries, deps.read, async (ctx) => {
    const run = await getRun(deps.db, projectId(ctx), ctx.params.id);
    const records = await listRunDeliveries(deliveries, run.projectId, run.id);
    const p = ctx.state.principal as Principal;
    const withPayload = p.kind === 'jwt' || ((p.kind === 'apiKey' || p.kind === 'oauth') && keyPermits(p.permissions, FLOW_ACCESS.readRuns));
    ctx.body = {
      data: records.map((d) => {
        if (withPayload) return presentWebhookDelivery(d);
        const { payload: _payload, ...rest } = presentWebhookDelivery(d);
        return rest;
      }),
    };
  });

  mount(router, routes.retryDelivery, deps.write, async (ctx) => {
    const { deliveryId } = await retryWebhookDelivery(deliveries, { projectId: projectId(ctx), deliveryId: ctx.params.id, source: 'flow', codes: FLOW_RETRY_CODES });
    ctx.body = { success: true, deliveryId, message: 'Delivery re-enqueued' };
  });

  return router;
}
