import Router from '@koa/router';
import type { Context } from 'koa';
import { nextFireTimes } from '../../domain/reporting/cron';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import { acceptedAnswer } from '../accepted';
import { applyAnswer } from '../middleware/idempotency';
import { pageMeta } from '../page-meta';
import { presentSchedule } from './schedules.presenter';
import { scheduleEndpoints as routes } from './reporting.endpoints';
import * as schedules from './schedules.service';
import { requireVerifiedForEmailChannels } from './mail-senders';

/**
 * Report schedules under /api/reporting/schedules (docs/reporting.md "Scheduling", "Access"). Viewers and API keys with
 * `read_reports` read; members create, edit, pause, resume and delete (API keys never manage schedules: 403
 * ERR_AUTH_005); members and API keys with `run_reports` trigger an occurrence now.
 */
export function scheduleRoutes(services: Services): Router {
  const { db, config } = services;
  const router = new Router({ prefix: '/api/reporting/schedules' });
  const read = requireProject(db, { role: 'viewer', permission: 'read_reports' });
  const write = requireProject(db, { role: 'member' });
  const run = requireProject(db, { role: 'member', permission: 'run_reports' });
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  const deps: schedules.ScheduleDeps = {
    db,
    temporal: services.temporal,
    taskQueues: services.taskQueues,
    logger: services.logger,
    limits: { minIntervalMinutes: config.reporting.scheduleMinIntervalMinutes, schedulesPerProject: config.reporting.schedulesPerProject },
  };

  // Before /:id, which would take `validate` for an id.
  mount(router, routes.validate, write, async (ctx, { body: input }) => {
    const check = schedules.checkCron(deps, input.cron, input.timezone);
    const nextRunTimes = check.valid ? nextFireTimes(input.cron, check.timezone, new Date(), input.count).map((d) => d.toISOString()) : [];
    ctx.body = { valid: check.valid, errors: check.errors, warnings: check.warnings, description: check.description || null, timezone: check.valid ? check.timezone : null, nextRunTimes };
  });

  mount(router, routes.create, write, async (ctx, { body: input }) => {
    ctx.status = 201;
    ctx.body = presentSchedule(await schedules.createSchedule(deps, { projectId: scope(ctx).projectId, userId: scope(ctx).userId }, input));
  });

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { views, total } = await schedules.listSchedules(deps, scope(ctx).projectId, query);
    ctx.body = { data: views.map(presentSchedule), meta: pageMeta(total, query.page, query.limit) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = presentSchedule(await schedules.getSchedule(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.update, write, async (ctx, { body: patch }) => {
    ctx.body = presentSchedule(await schedules.updateSchedule(deps, { projectId: scope(ctx).projectId, userId: scope(ctx).userId }, ctx.params.id, patch));
  });

  mount(router, routes.delete, write, async (ctx) => {
    await schedules.deleteSchedule(deps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  mount(router, routes.pause, write, async (ctx, { body: input }) => {
    ctx.body = presentSchedule(await schedules.setPaused(deps, scope(ctx).projectId, ctx.params.id, true, input.note));
  });

  mount(router, routes.resume, write, async (ctx) => {
    ctx.body = presentSchedule(await schedules.setPaused(deps, scope(ctx).projectId, ctx.params.id, false));
  });

  mount(router, routes.trigger, run, async (ctx) => {
    const { schedule } = await schedules.getSchedule(deps, scope(ctx).projectId, ctx.params.id);
    // A job target without channels of its own delivers through the job's channels.
    const [job]: Array<{ channel_ids: string[] }> = schedule.targetType === 'job' ? await services.db.query(`SELECT channel_ids FROM reporting_jobs WHERE id = $1 AND project_id = $2`, [schedule.targetId, schedule.projectId]) : [];
    await requireVerifiedForEmailChannels(services.db, scope(ctx), [...schedule.channelIds, ...(job?.channel_ids ?? [])], 'sending a report by e-mail');
    const answer = await schedules.triggerSchedule(deps, scope(ctx).projectId, ctx.params.id);
    if (answer.statusUrl) {
      // The run it started is accepted work: 201, `Location` and an absolute `statusUrl` (docs/architecture.md "Accepted work").
      applyAnswer(ctx, acceptedAnswer(services.config.publicUrl, answer.statusUrl, answer));
    } else {
      // Skipped (overlap): nothing was started, the answer is final. Not recorded within the wait: accepted, nothing to point at yet.
      ctx.status = answer.skipped ? 200 : 202;
      ctx.body = answer;
    }
  });

  return router;
}
