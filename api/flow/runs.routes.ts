import Router from '@koa/router';
import type { Context } from 'koa';
import type { Scope } from '../middleware/guards';
import { mount } from '../openapi/route';
import type { FlowApiDeps } from './flow-api';
import { presentApproval } from './approvals.presenter';
import { listRunApprovals } from './approvals.service';
import { presentPage } from './gates.presenter';
import { findGate } from './gates.service';
import { presentRun, presentRunSummary } from './runs.presenter';
import { runEndpoints as routes } from './flow.endpoints';
import { getRun, listRuns, readRunArtefact, runArtefactUrl } from './runs.service';
import { sendStoredFile } from '../storage/send-file';

/**
 * Spec, "Flow runs": lists (whole workspace, one gate; without payloads) and the full record, whose
 * payload an API key reads only with `read_runs` (403 ERR_AUTH_005 without: the spec's answer is the
 * full record, so a key that may not see the payload gets the spec's permission error, not a part of it).
 */
export function runRoutes(deps: FlowApiDeps): Router {
  const { db, read, readRuns } = deps;
  const router = new Router({ prefix: '/api/flow' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  mount(router, routes.list, read, async (ctx, { query }) => {
    const { runs, total } = await listRuns(db, projectId(ctx), query);
    ctx.body = presentPage(runs, total, query.page, query.limit, presentRunSummary);
  });

  mount(router, routes.listOfGate, read, async (ctx, { query }) => {
    // Deleted gates keep their runs readable through /runs, but the gate's own list is gone with it.
    const gate = await findGate(db, projectId(ctx), ctx.params.gateId);
    const { runs, total } = await listRuns(db, projectId(ctx), query, gate.id);
    ctx.body = presentPage(runs, total, query.page, query.limit, presentRunSummary);
  });

  mount(router, routes.get, readRuns, async (ctx) => {
    const run = await getRun(db, projectId(ctx), ctx.params.id);
    ctx.body = presentRun(run, await runArtefactUrl(deps, run));
  });

  // Who was asked to approve the run, and who decided what and when (with their comments): the run's record of its review.
  mount(router, routes.approvals, read, async (ctx) => {
    const run = await getRun(db, projectId(ctx), ctx.params.id);
    ctx.body = { data: (await listRunApprovals(db, run.projectId, run.id)).map(presentApproval) };
  });

  // The artefact's bytes from this origin, for a page whose policy allows no other (the signed link may be a
  // bucket's): the payload's document, so `read_runs` like the record. A file to show or save, never run.
  mount(router, routes.artefact, readRuns, async (ctx) => {
    const run = await getRun(db, projectId(ctx), ctx.params.id);
    const file = await readRunArtefact(deps, run);
    sendStoredFile(ctx, file, { cacheControl: 'private, no-store', disposition: `inline; filename="${run.shortId}.${file.extension}"` });
  });

  return router;
}
