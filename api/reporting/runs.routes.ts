import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { ReportRunEntity } from '../../db/reporting/report-run.entity';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { sendExport } from '../export-file';
import { mount } from '../openapi/route';
import { acceptedAnswer } from '../accepted';
import { pageMeta } from '../page-meta';
import { runEndpoints as routes } from './reporting.endpoints';
import * as runs from './runs.service';
import { retryDelivery } from './deliveries.service';
import { requireVerifiedForEmailChannels, requireVerifiedForEmailDeliveries } from './mail-senders';

/**
 * Report runs (docs/reporting.md "Runs", "Access"): viewers and API keys with
 * `read_reports` read runs and download outputs; members and API keys with `run_reports` start,
 * cancel and retry them.
 */
export function runRoutes(services: Services): Router {
  const router = new Router({ prefix: '/api/reporting' });
  const read = requireProject(services.db, { role: 'viewer', permission: 'read_reports' });
  const run = requireProject(services.db, { role: 'member', permission: 'run_reports' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const caller = (ctx: Context): runs.RunCaller => ({ projectId: scope(ctx).projectId, userId: scope(ctx).userId, apiKeyId: scope(ctx).apiKeyId, oauthClientId: scope(ctx).oauthClientId });
  const deps: runs.RunDeps = {
    db: services.db,
    outbox: services.outbox,
    temporal: services.temporal,
    taskQueues: services.taskQueues,
    storage: services.storage,
    downloadUrlTtlSeconds: services.config.storage.downloadUrlTtlSeconds,
    config: services.config,
    logger: services.logger,
  };
  // A run is accepted work: 201, `Location` and an absolute `statusUrl` (api/accepted.ts, docs/architecture.md "Accepted work").
  const runAccepted = (r: ReportRunEntity) => acceptedAnswer(services.config.publicUrl, `/api/reporting/runs/${r.id}`, { runId: r.id, shortId: r.shortId, status: r.status });
  const accepted = (ctx: Context, r: ReportRunEntity) => applyAnswer(ctx, runAccepted(r));

  // Idempotency-Key: the answer is stored in the transaction that inserts the run (docs/idempotency.md).
  mount(router, routes.start, run, idempotent(services), async (ctx, { body: input }) => {
    await requireVerifiedForEmailChannels(services.db, scope(ctx), input.channelIds, 'sending a report by e-mail');
    const store = answerInTransaction(ctx);
    accepted(ctx, await runs.startRun(deps, caller(ctx), ctx.params.id, input, store && ((m, r) => store(m, runAccepted(r)))));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { runs: page, total } = await runs.listRuns(deps, scope(ctx).projectId, query);
    ctx.body = { data: await runs.presentRuns(deps, page), meta: pageMeta(total, query.page, query.limit) };
  });

  // Before /runs/:id, which would take `export` for an id.
  mount(router, routes.export, read, async (ctx, { query: q }) => {
    sendExport(ctx, Readable.from(runs.exportRuns(deps, scope(ctx).projectId, q)), { format: q.format, name: 'report-runs', columns: runs.RUN_EXPORT_COLUMNS });
  });

  mount(router, routes.get, read, async (ctx) => {
    const [presented] = await runs.presentRuns(deps, [await runs.getRun(deps, scope(ctx).projectId, ctx.params.id)]);
    ctx.body = presented;
  });

  mount(router, routes.cancel, run, async (ctx) => {
    const [presented] = await runs.presentRuns(deps, [await runs.cancelRun(deps, scope(ctx).projectId, ctx.params.id)]);
    ctx.body = presented;
  });

  mount(router, routes.retry, run, async (ctx, { body: input }) => {
    const old = await runs.getRun(deps, scope(ctx).projectId, ctx.params.id);
    if (input.deliveriesOnly) await requireVerifiedForEmailDeliveries(services.db, scope(ctx), { runId: old.id }, 're-sending a report by e-mail');
    else await requireVerifiedForEmailChannels(services.db, scope(ctx), old.channelIds, 'sending a report by e-mail');
    const retried = await runs.retryRun(deps, caller(ctx), ctx.params.id, input.deliveriesOnly);
    // A new run is created (201); `deliveriesOnly` re-sends the same run's deliveries: nothing new, 200 with the same body.
    accepted(ctx, retried);
    if (input.deliveriesOnly) ctx.status = 200;
  });

  mount(router, routes.deliveries, read, async (ctx) => {
    ctx.body = { data: await runs.runDeliveries(deps, scope(ctx).projectId, ctx.params.id) };
  });

  mount(router, routes.retryDelivery, run, async (ctx) => {
    await requireVerifiedForEmailDeliveries(services.db, scope(ctx), { deliveryRef: ctx.params.deliveryId }, 're-sending a report by e-mail');
    const d = await retryDelivery(deps, scope(ctx).projectId, ctx.params.deliveryId);
    ctx.body = { success: true, deliveryId: d.id, status: d.status, message: 'Delivery retry started' };
  });

  mount(router, routes.download, read, async (ctx) => {
    ctx.redirect(await runs.downloadUrl(deps, scope(ctx).projectId, ctx.params.id, ctx.params.outputId));
  });

  return router;
}
