import Router from '@koa/router';
import type { Context } from 'koa';
import type { Scope } from '../middleware/guards';
import { answerInTransaction, applyAnswer, idempotent } from '../middleware/idempotency';
import { mount } from '../openapi/route';
import { gateEndpoints as routes } from './flow.endpoints';
import type { FlowApiDeps } from './flow-api';
import type { RunEntity } from '../../db/flow/run.entity';
import { presentRun, presentTestResult, presentValidateResult } from './runs.presenter';
import { readSubmissionBody, submissionBytes } from './submission-body';
import { submitRun, testGate } from './submissions.service';

/**
 * Submissions: POST /gates/:id/test (dry run), /gates/:id/validate (records a run, the spec's
 * 200/422 bodies) and /gates/:gateId/runs (records a run, answers 201 with it and `Location` at
 * its GET /api/flow/runs/:id: render, approval and delivery continue in the background;
 * docs/flow.md). Each reads its body only after the guard, with the 1 MB limit counted on the
 * decoded bytes as they arrive (submission-body.ts).
 */

/**
 * The raw payload of test and validate: a JSON object (variables mode) or, in freetext mode, a
 * `text/plain` body or a JSON string (koa-body parses JSON non-strictly, so `"text"` arrives as
 * a string). A payload of the wrong kind for the gate is a validation failure the engine reports.
 */
function payloadOf(ctx: Context): unknown {
  const body = ctx.request.body as unknown;
  if (ctx.is('text/*') && typeof body !== 'string') return (ctx.request as unknown as { rawBody?: string }).rawBody ?? '';
  return body;
}

export function submissionRoutes(deps: FlowApiDeps): Router {
  const { write } = deps;
  const router = new Router({ prefix: '/api/flow/gates' });
  const projectId = (ctx: Context) => (ctx.state.scope as Scope).projectId;
  // Idempotency-Key (docs/idempotency.md): validate and runs store their answer in the transaction that inserts the run.
  const idem = idempotent(deps);
  const validated = (run: RunEntity) => ({ ...presentValidateResult(run), headers: {} });
  const recorded = (run: RunEntity) => ({ status: 201, headers: { location: `${deps.publicUrl}/api/flow/runs/${run.id}` }, body: presentRun(run) });

  mount(router, routes.test, write, readSubmissionBody, async (ctx) => {
    ctx.body = presentTestResult(await testGate(deps.submissions, projectId(ctx), ctx.params.id, payloadOf(ctx), submissionBytes(ctx)));
  });

  mount(router, routes.validate, write, readSubmissionBody, idem, async (ctx) => {
    const store = answerInTransaction(ctx);
    const { run } = await submitRun(deps.submissions, projectId(ctx), {
      gateRef: ctx.params.id,
      payload: payloadOf(ctx),
      rawBytes: submissionBytes(ctx),
      source: 'rest',
      inTransaction: store && ((m, r) => store(m, validated(r))),
    });
    applyAnswer(ctx, validated(run));
  });

  // The body is read by readSubmissionBody (its size limit answered while reading, before the body's
  // shape: a 2 MB body gets 413, not a field error), then validated by mount with the declaration's codes.
  mount(router, routes.submitRun, write, readSubmissionBody, idem, async (ctx, { body: input }) => {
    const bytes = submissionBytes(ctx);
    const store = answerInTransaction(ctx);
    const { run } = await submitRun(deps.submissions, projectId(ctx), {
      gateRef: ctx.params.gateId,
      payload: input.payload,
      metadata: input.metadata,
      rawBytes: bytes,
      source: 'rest',
      inTransaction: store && ((m, r) => store(m, recorded(r))),
    });
    applyAnswer(ctx, recorded(run));
  });

  return router;
}
