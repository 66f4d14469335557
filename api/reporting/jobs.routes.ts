import Router from '@koa/router';
import type { Context } from 'koa';
import type { ReportJobRunEntity } from '../../db/reporting/job-run.entity';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { mount } from '../openapi/route';
import { acceptedAnswer } from '../accepted';
import { presentReportDelivery } from '../deliveries/delivery.presenter';
import { deliveriesOf, deliverySummary, retryFailedDeliveries } from './deliveries.service';
import { pageMeta } from '../page-meta';
import { presentJob, presentJobRun } from './jobs.presenter';
import { jobEndpoints as routes } from './reporting.endpoints';
import * as jobs from './jobs.service';
import { requireVerifiedForEmailChannels, requireVerifiedForEmailDeliveries } from './mail-senders';

/**
 * Report jobs and job runs (docs/reporting.md "Jobs"): viewers and API keys with
 * `read_reports` read; members write jobs; members and API keys with `run_reports` run and cancel.
 */
export function jobRoutes(services: Services): Router {
  const { db } = services;
  const router = new Router({ prefix: '/api/reporting' });
  const read = requireProject(db, { role: 'viewer', permission: 'read_reports' });
  const write = requireProject(db, { role: 'member' });
  const run = requireProject(db, { role: 'member', permission: 'run_reports' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const caller = (ctx: Context): jobs.JobCaller => ({ projectId: scope(ctx).projectId, userId: scope(ctx).userId, apiKeyId: scope(ctx).apiKeyId, oauthClientId: scope(ctx).oauthClientId });
  const deps: jobs.JobDeps = { db, temporal: services.temporal, taskQueues: services.taskQueues, config: services.config, logger: services.logger, outbox: services.outbox };
  const presentRuns = async (runs: Awaited<ReturnType<typeof jobs.getJobRun>>[]) => {
    const deliveries = await deliveriesOf(db, 'jobRunId', runs.map((r) => r.id));
    return runs.map((r) => presentJobRun(r, (deliveries.get(r.id) ?? []).map(deliverySummary)));
  };

  mount(router, routes.create, write, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presentJob(await jobs.createJob(deps, caller(ctx), input));
  });

  mount(router, routes.list, read, async (ctx, { query: q }) => {
    const { jobs: page, total } = await jobs.listJobs(deps, scope(ctx).projectId, q);
    ctx.body = { data: page.map(presentJob), meta: pageMeta(total, q.page, q.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presentJob(await jobs.getJob(deps, scope(ctx).projectId, ctx.params.id));
  });

  for (const route of [routes.put, routes.patch]) {
    mount(router, route, write, async (ctx, { body: patch }) => {
      ctx.body = presentJob(await jobs.updateJob(deps, scope(ctx).projectId, ctx.params.id, patch));
    });
  }

  mount(router, routes.delete, write, async (ctx) => {
    await jobs.deleteJob(deps, scope(ctx).projectId, ctx.params.id);
    ctx.body = { success: true, message: 'Job deleted' };
  });

  // Idempotency-Key: the answer is stored in the transaction that inserts the job run (docs/idempotency.md).
  mount(router, routes.startRun, run, idempotent(services), async (ctx, { body: input }) => {
    const channels = input.channelIds ?? (await jobs.getJob(deps, scope(ctx).projectId, ctx.params.id)).channelIds;
    await requireVerifiedForEmailChannels(db, scope(ctx), channels, 'sending a report by e-mail');
    // Accepted work: 201, `Location` and an absolute `statusUrl` (api/accepted.ts, docs/architecture.md "Accepted work").
    const accepted = (r: ReportJobRunEntity) => acceptedAnswer(services.config.publicUrl, `/api/reporting/job-runs/${r.id}`, { jobRunId: r.id, shortId: r.shortId, status: r.status });
    const store = answerInTransaction(ctx);
    applyAnswer(ctx, accepted(await jobs.startJobRun(deps, caller(ctx), ctx.params.id, input, store && ((m, r) => store(m, accepted(r))))));
  });

  mount(router, routes.listRuns, read, async (ctx, { query: q }) => {
    const { jobRuns, total } = await jobs.listJobRuns(deps, scope(ctx).projectId, q);
    ctx.body = { data: await presentRuns(jobRuns), meta: pageMeta(total, q.page, q.limit) };
  });

  mount(router, routes.getRun, read, async (ctx) => {
    ctx.body = (await presentRuns([await jobs.getJobRun(deps, scope(ctx).projectId, ctx.params.id)]))[0];
  });

  mount(router, routes.runDeliveries, read, async (ctx) => {
    const r = await jobs.getJobRun(deps, scope(ctx).projectId, ctx.params.id);
    ctx.body = { data: ((await deliveriesOf(db, 'jobRunId', [r.id])).get(r.id) ?? []).map(presentReportDelivery) };
  });

  mount(router, routes.cancelRun, run, async (ctx) => {
    ctx.body = (await presentRuns([await jobs.cancelJobRun(deps, scope(ctx).projectId, ctx.params.id)]))[0];
  });

  mount(router, routes.retryDeliveries, run, async (ctx) => {
    const r = await jobs.getJobRun(deps, scope(ctx).projectId, ctx.params.id);
    await requireVerifiedForEmailDeliveries(db, scope(ctx), { jobRunId: r.id }, 're-sending a report by e-mail');
    const retried = await retryFailedDeliveries(deps, scope(ctx).projectId, { jobRunId: r.id });
    ctx.status = 202;
    ctx.body = { success: true, jobRunId: r.id, retried, message: `${retried} deliveries re-sent` };
  });

  return router;
}
