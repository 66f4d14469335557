import Router from '@koa/router';
import type { Context } from 'koa';
import { nextFireTimes } from '../../domain/reporting/cron';
import type { Services } from '../../platform/services';
import { requireProject, type Scope } from '../middleware/guards';
import { validate } from '../validation';
import { acceptedAnswer } from '../accepted';
import { applyAnswer } from '../middleware/idempotency';
import { pageMeta } from '../page-meta';
import { presentSchedule } from './schedules.presenter';
import * as schema from './schedules.schema';
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
  router.post('/validate', write, async (ctx) => {
    const input = validate(schema.validateCronSchema, ctx.request.body);
    const check = schedules.checkCron(deps, input.cron, input.timezone);
    const nextRunTimes = check.valid ? nextFireTimes(input.cron, check.timezone, new Date(), input.count).map((d) => d.toISOString()) : [];
    ctx.body = { valid: check.valid, errors: check.errors, warnings: check.warnings, description: check.description || null, timezone: check.valid ? check.timezone : null, nextRunTimes };
  });

  router.post('/', write, async (ctx) => {
    const input = validate(schema.createScheduleSchema, ctx.request.body);
    ctx.status = 201;
    ctx.body = presentSchedule(await schedules.createSchedule(deps, { projectId: scope(ctx).projectId, userId: scope(ctx).userId }, input));
  });

  router.get('/', read, async (ctx) => {
    const query = validate(schema.listSchedulesSchema, ctx.query);
    const { views, total } = await schedules.listSchedules(deps, scope(ctx).projectId, query);
    ctx.body = { data: views.map(presentSchedule), meta: pageMeta(total, query.page, query.limit) };
  });

  router.get('/:id', read, async (ctx) => {
    ctx.body = presentSchedule(await schedules.getSchedule(deps, scope(ctx).projectId, ctx.params.id));
  });

  router.patch('/:id', write, async (ctx) => {
    const patch = validate(schema.updateScheduleSchema, ctx.request.body);
    ctx.body = presentSchedule(await schedules.updateSchedule(deps, { projectId: scope(ctx).projectId, userId: scope(ctx).userId }, ctx.params.id, patch));
  });

  router.delete('/:id', write, async (ctx) => {
    await schedules.deleteSchedule(deps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  router.post('/:id/pause', write, async (ctx) => {
    const input = validate(schema.pauseScheduleSchema, ctx.request.body ?? {});
    ctx.body = presentSchedule(await schedules.setPaused(deps, scope(ctx).projectId, ctx.params.id, true, input.note));
  });

  router.post('/:id/resume', write, async (ctx) => {
    validate(schema.resumeScheduleSchema, ctx.request.body ?? {});
    ctx.body = presentSchedule(await schedules.setPaused(deps, scope(ctx).projectId, ctx.params.id, false));
  });

  router.post('/:id/trigger', run, async (ctx) => {
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
