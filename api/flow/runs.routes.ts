import Router from '@koa/router';
import type { Context } from 'koa';
import type { Scope } from '../middleware/guards';
import { validate } from '../validation';
import type { FlowApiDeps } from './flow-api';
import { presentPage } from './gates.presenter';
import { findGate } from './gates.service';
import { presentRun, presentRunSummary } from './runs.presenter';
import { listRunsSchema } from './runs.schema';
import { getRun, listRuns, runArtefactUrl } from './runs.service';

/**
 * Spec, "Flow runs": lists (whole workspace, one gate; without payloads) and the full record, whose
 * payload an API key reads only with `read_runs` (403 ERR_AUTH_005 without: the spec's answer is the
 * full record, so a key that may not see the payload gets the spec's permission error, not a part of it).
 */
export function runRoutes(deps: FlowApiDeps): Router {
  const { db, read, readRuns } = deps;
  const router = new Router({ prefix: '/api/flow' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;

  router.get('/runs', read, async (ctx) => {
    const query = validate(listRunsSchema, ctx.query);
    const { runs, total } = await listRuns(db, projectId(ctx), query);
    ctx.body = presentPage(runs, total, query.page, query.limit, presentRunSummary);
  });

  router.get('/gates/:gateId/runs', read, async (ctx) => {
    const query = validate(listRunsSchema, ctx.query);
    // Deleted gates keep their runs readable through /runs, but the gate's own list is gone with it.
    const gate = await findGate(db, projectId(ctx), ctx.params.gateId);
    const { runs, total } = await listRuns(db, projectId(ctx), query, gate.id);
    ctx.body = presentPage(runs, total, query.page, query.limit, presentRunSummary);
  });

  router.get('/runs/:id', readRuns, async (ctx) => {
    const run = await getRun(db, projectId(ctx), ctx.params.id);
    ctx.body = presentRun(run, await runArtefactUrl(deps, run));
  });

  return router;
}
