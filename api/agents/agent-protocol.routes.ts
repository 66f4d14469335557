import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import type { Services } from '../../platform/services';
import { describedOnly, mount } from '../openapi/route';
import { validate } from '../validation';
import { agentProtocolEndpoints as routes } from './agents.endpoints';
import * as protocol from './agent-protocol.service';
import * as schema from './agents.schema';

/**
 * The agent protocol under /api/agents/me (docs/reporting.md "Agents", "Why agents speak HTTPS, not Temporal",
 * "The agent protocol"). Only an agent token (`fmag_…`, resolved by api/middleware/authenticate.ts) opens these routes;
 * user sessions and API keys are 403 ERR_AUTH_005, and every other route refuses an agent token the same
 * way (its guards know no `agent` principal). An unknown or rotated token is 401 ERR_AGENT_002, a
 * deactivated agent 401 ERR_AGENT_003, both on the very next request. The rate limiter counts 120
 * requests a minute per agent (api/middleware/rate-limit.ts). Each route is declared once, in
 * agents.endpoints.ts (api/openapi/route.ts).
 */
export function agentProtocolRoutes(services: Services, hooks: protocol.AgentHooks): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/agents/me' });
  const deps: protocol.ProtocolDeps = {
    db,
    storage: services.storage,
    maxResultBytes: services.config.reporting.resultMaxBytes,
    heartbeatTimeoutSeconds: services.config.reporting.agentHeartbeatTimeoutSeconds,
    hooks,
  };
  const agentId = (ctx: Context) => (ctx.state.principal as Principal & { kind: 'agent' }).agentId;

  async function agentOnly(ctx: Context, next: Next): Promise<void> {
    if (ctx.state.authError) throw ctx.state.authError;
    const p = ctx.state.principal as Principal;
    if (p.kind === 'anonymous') throw new AppError('ERR_AUTH_003');
    if (p.kind !== 'agent') throw new AppError('ERR_AUTH_005', 'This endpoint needs an agent token (fmag_…)', { required: 'agent', granted: p.kind });
    await next();
  }
  router.use(agentOnly);

  mount(router, routes.openSession, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = await protocol.openSession(deps, agentId(ctx), input);
  });

  mount(router, routes.nextTask, async (ctx, { query }) => {
    // 'close' may have fired before this handler ran: the socket's own state says so too.
    let closed = false;
    ctx.res.once('close', () => {
      closed = true;
    });
    const gone = () => closed || ctx.res.destroyed || ctx.req.socket.destroyed;
    const task = await protocol.nextTask(deps, agentId(ctx), query.sessionId, query.wait, gone);
    if (task) ctx.body = task;
    else ctx.status = 204;
  });

  mount(router, routes.heartbeat, async (ctx, { body: input }) => {
    ctx.body = await protocol.heartbeat(deps, agentId(ctx), input);
  });

  // The body is JSON or NDJSON by the task's kind (known once the task is found): validated here, not by mount.
  mount(router, describedOnly(routes.result), async (ctx, { query }) => {
    const { task, session } = await protocol.taskForUpload(deps, agentId(ctx), ctx.params.taskId, query.sessionId);
    if (task.kind === 'query' || task.kind === 'preview') {
      if (!ctx.is('application/x-ndjson')) throw new AppError('ERR_AGENT_008', 'A query or preview result is Content-Type application/x-ndjson');
      const declared = Number(ctx.get('Content-Length') || 0);
      const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
      if (!encoding && declared > deps.maxResultBytes) throw new AppError('ERR_AGENT_007', `A result may have at most ${deps.maxResultBytes} bytes (uncompressed)`, { maxBytes: deps.maxResultBytes });
      try {
        await protocol.acceptNdjsonResult(deps, task, session, ctx.req, encoding);
      } catch (err) {
        // The rest of a refused body is read and dropped, so the answer reaches an agent still sending.
        ctx.req.unpipe();
        ctx.req.resume();
        throw err;
      }
    } else {
      if (!ctx.is('application/json')) throw new AppError('ERR_AGENT_008', 'A test or schema result is Content-Type application/json');
      const body = validate(schema.taskJsonResultSchema, ctx.request.body, { 'object.base': 'ERR_AGENT_008' }) as Record<string, unknown>;
      await protocol.acceptJsonResult(deps, task, session, body);
    }
    ctx.body = { accepted: true };
  });

  mount(router, routes.failure, async (ctx, { body: input }) => {
    await protocol.failTask(deps, agentId(ctx), ctx.params.taskId, input);
    ctx.body = { accepted: true };
  });

  return router;
}
