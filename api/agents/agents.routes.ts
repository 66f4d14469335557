import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { requireVerifiedSender } from '../middleware/verified-sender';
import { mount } from '../openapi/route';
import { agentEndpoints as routes } from './agents.endpoints';
import { agentProtocolRoutes } from './agent-protocol.routes';
import { createAgentHooks } from './agent-completion';
import type { AgentHooks } from './agent-protocol.service';
import * as presenter from './agents.presenter';
import * as agents from './agents.service';
import { pageMeta } from '../page-meta';

/**
 * /api/agents (docs/reporting.md "Agents", "Access", "The agent protocol"): the agent protocol under /me first
 * (so `me` is never taken for an agent id), then management. Management is for user sessions
 * only: viewers read, members see tasks, admins and owners manage (agents hold tokens). API keys
 * and agent tokens are refused (403 ERR_AUTH_005). Creating an agent needs a verified e-mail address
 * (403 ERR_AUTH_006, issue 29): an agent reaches databases inside someone's network. Each route is
 * declared once, in agents.endpoints.ts (api/openapi/route.ts).
 */
export function agentRouters(services: Services, hooks: AgentHooks = createAgentHooks(services)): Router[] {
  return [agentProtocolRoutes(services, hooks), agentRoutes(services)];
}

function agentRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/agents' });
  const read = requireProject(db, { role: 'viewer', apiKeyRequired: 'manage_agents' });
  const tasks = requireProject(db, { role: 'member', apiKeyRequired: 'manage_agents' });
  const manage = requireProject(db, { role: 'admin', apiKeyRequired: 'manage_agents' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const present = async (projectId: string, agent: Awaited<ReturnType<typeof agents.getAgent>>) =>
    presenter.presentAgent(agent, (await agents.datasourceCounts(db, projectId, [agent.id])).get(agent.id) ?? 0);

  // Before the body is validated, as the guards: an unverified caller is 403 whatever it sends.
  const verifiedSender = async (ctx: Context, next: Next) => {
    await requireVerifiedSender(db, scope(ctx), 'creating an agent');
    await next();
  };

  mount(router, routes.create, manage, verifiedSender, async (ctx, { body: input }) => {
    const { projectId, userId } = scope(ctx);
    const { agent, token } = await agents.createAgent(db, projectId, userId, input);
    ctx.status = 201;
    ctx.body = { ...presenter.presentAgent(agent, 0), token };
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { projectId } = scope(ctx);
    const { agents: page, total } = await agents.listAgents(db, projectId, query);
    const counts = await agents.datasourceCounts(db, projectId, page.map((a) => a.id));
    ctx.body = { data: page.map((a) => presenter.presentAgent(a, counts.get(a.id) ?? 0)), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    const { projectId } = scope(ctx);
    ctx.body = await present(projectId, await agents.getAgent(db, projectId, ctx.params.id));
  });

  mount(router, routes.update, manage, async (ctx, { body: patch }) => {
    const { projectId } = scope(ctx);
    ctx.body = await present(projectId, await agents.updateAgent(db, projectId, ctx.params.id, patch));
  });

  mount(router, routes.delete, manage, async (ctx) => {
    await agents.deleteAgent(db, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.rotateToken, manage, async (ctx) => {
    ctx.body = await agents.rotateToken(db, scope(ctx).projectId, ctx.params.id);
  });

  // Confirming or clearing the key that a first session sent (docs/agent.md "Confirming the key").
  mount(router, routes.confirmKey, manage, async (ctx, { body: { fingerprint } }) => {
    const { projectId, userId } = scope(ctx);
    ctx.body = await present(projectId, await agents.confirmKey(db, projectId, ctx.params.id, userId, fingerprint));
  });

  mount(router, routes.clearKey, manage, async (ctx) => {
    const { projectId } = scope(ctx);
    ctx.body = await present(projectId, await agents.clearKey(db, projectId, ctx.params.id));
  });

  mount(router, routes.health, read, async (ctx) => {
    ctx.body = presenter.presentHealth(await agents.getAgent(db, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.tasks, tasks, async (ctx, { query }) => {
    const { projectId } = scope(ctx);
    const agent = await agents.getAgent(db, projectId, ctx.params.id);
    const { tasks: page, total } = await agents.listTasks(db, projectId, agent.id, query);
    ctx.body = { data: page.map((t) => presenter.presentTask(t, agent.shortId)), meta: pageMeta(total, query.page, query.limit) };
  });

  return router;
}
