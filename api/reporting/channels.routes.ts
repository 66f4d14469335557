import Router from '@koa/router';
import type { Context } from 'koa';
import { createOutboundGuard } from '../../adapters/http/outbound';
import { channelTests } from '../../adapters/channels/channel-tests';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { resendLimiters } from '../rate-limits';
import { mount } from '../openapi/route';
import { pageMeta } from '../page-meta';
import * as presenter from './channels.presenter';
import { channelEndpoints as routes } from './reporting.endpoints';
import * as channels from './channels.service';

/**
 * Distribution channels under /api/reporting/channels (docs/reporting.md "Channels", "Access"). Viewers, and API keys
 * with `read_reports`, read them; members manage e-mail channels and admins every kind (checked by the service, which
 * knows the kind); API keys never change channels (403 ERR_AUTH_005, `relatedInfo.required: "manage_channels"`, a flag
 * no key can hold).
 */
export function channelRoutes(services: Services): Router {
  const { db, config } = services;
  const router = new Router({ prefix: '/api/reporting/channels' });
  const read = requireProject(db, { role: 'viewer', permission: 'read_reports' });
  const write = requireProject(db, { role: 'member', apiKeyRequired: 'manage_channels' });
  const deps: channels.ChannelDeps = {
    db,
    guard: createOutboundGuard(config.outbound.allowlist),
    outboundAllowlist: config.outbound.allowlist,
    runTest: channelTests(config, services.mailer),
    channelsPerProject: config.reporting.channelsPerProject,
    mailLimits: resendLimiters(services),
  };
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const caller = (ctx: Context): channels.ChannelCaller => ({ projectId: scope(ctx).projectId, userId: scope(ctx).userId, role: scope(ctx).role });

  mount(router, routes.create, write, async (ctx, { body: input }) => {
    const { channel, secret } = await channels.createChannel(deps, caller(ctx), input);
    ctx.status = 201;
    // A webhook channel's signing secret: this answer is the only one that shows it.
    ctx.body = { ...presenter.presentChannel(channel), ...(secret ? { secret } : {}) };
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { channels: page, total } = await channels.listChannels(deps, scope(ctx).projectId, query);
    ctx.body = { data: page.map(presenter.presentChannel), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presenter.presentChannel(await channels.getChannel(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, write, async (ctx, { body: patch }) => {
    ctx.body = presenter.presentChannel(await channels.updateChannel(deps, caller(ctx), ctx.params.id, patch));
  });

  mount(router, routes.delete, write, async (ctx) => {
    await channels.deleteChannel(deps, caller(ctx), ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.test, write, async (ctx) => {
    ctx.body = presenter.presentTest(await channels.testChannel(deps, caller(ctx), ctx.params.id));
  });

  return router;
}
