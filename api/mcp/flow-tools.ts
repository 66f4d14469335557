import Joi from 'joi';
import type { RunEntity } from '../../db/flow/run.entity';
import { freetextToJsonSchema, gateSchemaToJsonSchema } from '../../domain/flow/gate-json-schema';
import type { ValidationDetail } from '../../domain/flow/gate.types';
import { RUN_STATUSES } from '../../domain/flow/run-status';
import { FLOW_ACCESS } from '../flow/flow-api';
import { presentGate, presentPage } from '../flow/gates.presenter';
import { listGatesSchema } from '../flow/gates.schema';
import { findGate, getGate, listGates } from '../flow/gates.service';
import { presentRun, presentRunSummary } from '../flow/runs.presenter';
import { listRunsSchema, submitRunSchema, type ListRunsQuery } from '../flow/runs.schema';
import { getRun, listRuns, runArtefactUrl } from '../flow/runs.service';
import { submitRun, testGate } from '../flow/submissions.service';
import { CREATES, IDEMPOTENCY_KEY_ARG, IDEMPOTENT_REPLAYED, keyedCall, PAGE_ARGS, pageSchema, READ_ONLY, type McpTool, type ToolContext } from './mcp-tool';
import { capEcho } from './tool-results';

/** Flow tools: the services and presenters of api/flow/*.routes.ts, with the same access rules. */

const ref = Joi.string().trim().min(1).max(200).required();
const gateArg = { type: 'string', description: 'Gate id (UUID), shortId or slug; list_gates shows them' };
const payloadArg = { description: 'The payload: a JSON object (variables mode) or a string (freetext mode)', type: ['object', 'string', 'array'] };

/** The first fields of the REST gate (presentGate): what a list of gates needs, without schemas and rules. */
const SUMMARY_FIELDS = ['id', 'shortId', 'slug', 'name', 'description', 'status', 'validationMode', 'schemaVersion', 'renderMode', 'approvalMode'] as const;
const gateSummary = (g: Awaited<ReturnType<typeof getGate>>) => {
  const gate = presentGate(g);
  return Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, gate[field]])) as Pick<typeof gate, (typeof SUMMARY_FIELDS)[number]>;
};

const gateSummarySchema = {
  type: 'object',
  properties: { id: { type: 'string' }, shortId: { type: 'string' }, slug: { type: 'string' }, name: { type: 'string' }, status: { type: 'string' }, validationMode: { type: 'string' } },
  required: ['id', 'shortId', 'slug', 'name', 'status', 'validationMode'],
};

const runSchema = {
  type: 'object' as const,
  properties: {
    id: { type: 'string' },
    shortId: { type: 'string' },
    gateId: { type: 'string' },
    status: { type: 'string' },
    source: { type: 'string', enum: ['rest', 'mcp'] },
    validation: { type: 'object' },
    notes: { type: 'object', additionalProperties: { type: 'string' }, description: 'Why a field was left out of this result' },
  },
  required: ['id', 'shortId', 'gateId', 'status', 'source', 'validation'],
};

const detailsSchema = { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' }, code: { type: 'string' } }, required: ['field', 'message', 'code'] } };

/** The full run as GET /api/flow/runs/:id presents it, with the payload echoes capped. */
async function presentRunForTool(ctx: ToolContext, run: RunEntity): Promise<Record<string, unknown>> {
  const full = presentRun(run, await runArtefactUrl(ctx.flow, run));
  const notes: Record<string, string> = {};
  const readWhole = `GET /api/flow/runs/${run.id}`;
  const inputPayload = capEcho(full.inputPayload, 'inputPayload', readWhole, notes);
  const validatedPayload = capEcho(full.validation.validated_payload, 'validation.validated_payload', readWhole, notes);
  return { ...full, inputPayload, validation: { ...full.validation, validated_payload: validatedPayload }, ...(Object.keys(notes).length ? { notes } : {}) };
}

/** What a failed validation tells the model to change: one line per problem. */
function howToFix(details: ValidationDetail[]): string {
  return `Change the payload and try again: ${details.map((d) => `${d.field}: ${d.message} (${d.code})`).join('; ')}`;
}

const payloadBytes = (payload: unknown) => Buffer.byteLength(typeof payload === 'string' ? payload : (JSON.stringify(payload) ?? ''));

export const flowTools: McpTool[] = [
  {
    name: 'list_gates',
    title: 'List Flow gates',
    description: 'Lists the gates of this project (a page at a time, like GET /api/flow/gates). Use a gate id with get_gate_schema before submitting.',
    inputSchema: {
      type: 'object',
      properties: {
        ...PAGE_ARGS,
        search: { type: 'string', description: 'Part of the name or slug' },
        status: { type: 'string', enum: ['active', 'paused', 'archived'] },
      },
    },
    outputSchema: pageSchema(gateSummarySchema),
    annotations: READ_ONLY,
    access: FLOW_ACCESS.read,
    args: listGatesSchema,
    async run(ctx, query) {
      const { gates, total } = await listGates({ db: ctx.flow.db, evaluator: ctx.flow.submissions.evaluator }, ctx.scope.projectId, query);
      return presentPage(gates, total, query.page, query.limit, gateSummary);
    },
  },
  {
    name: 'get_gate_schema',
    title: 'Get a gate schema',
    description:
      "The gate's payload schema as JSON Schema, its business rules and mode. Build a payload from it, then check it with validate_payload.",
    inputSchema: { type: 'object', properties: { gateId: gateArg }, required: ['gateId'] },
    outputSchema: {
      type: 'object',
      properties: {
        gate: gateSummarySchema,
        jsonSchema: { type: 'object' },
        businessRules: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, message: { type: 'string' } } } },
        freetextConfig: { type: ['object', 'null'] },
      },
      required: ['gate', 'jsonSchema', 'businessRules'],
    },
    annotations: READ_ONLY,
    access: FLOW_ACCESS.read,
    args: Joi.object({ gateId: ref }),
    async run(ctx, { gateId }: { gateId: string }) {
      const gate = await getGate({ db: ctx.flow.db, evaluator: ctx.flow.submissions.evaluator }, ctx.scope.projectId, gateId);
      return {
        gate: gateSummary(gate),
        jsonSchema: gate.validationMode === 'freetext' ? freetextToJsonSchema(gate.freetextConfig) : gateSchemaToJsonSchema(gate.schema),
        businessRules: gate.businessRules.map((r) => ({ id: r.id, name: r.name, message: r.message, expression: r.expression })),
        freetextConfig: gate.freetextConfig,
      };
    },
  },
  {
    name: 'validate_payload',
    title: 'Check a payload (dry run)',
    description:
      'Checks a payload against a gate without recording a run (POST /api/flow/gates/:id/test). An invalid payload is a normal answer: `valid: false` and `errors` saying what to change.',
    inputSchema: { type: 'object', properties: { gateId: gateArg, payload: payloadArg }, required: ['gateId', 'payload'] },
    outputSchema: {
      type: 'object',
      properties: { valid: { type: 'boolean' }, layers: { type: 'object' }, failedLayer: { type: 'string' }, errors: detailsSchema, howToFix: { type: 'string' } },
      required: ['valid', 'layers', 'errors'],
    },
    annotations: READ_ONLY,
    access: FLOW_ACCESS.write,
    args: Joi.object({ gateId: ref, payload: Joi.alternatives(Joi.object().unknown(true), Joi.string().allow(''), Joi.array()).required() }),
    async run(ctx, { gateId, payload }: { gateId: string; payload: unknown }) {
      const outcome = await testGate(ctx.flow.submissions, ctx.scope.projectId, gateId, payload, payloadBytes(payload));
      return {
        valid: outcome.valid,
        layers: outcome.layers,
        ...(outcome.failedLayer ? { failedLayer: outcome.failedLayer } : {}),
        errors: outcome.details.map(({ field, message, code }) => ({ field, message, code })),
        ...(outcome.valid ? {} : { howToFix: howToFix(outcome.details) }),
      };
    },
  },
  {
    name: 'submit_run',
    title: 'Submit a payload to a gate',
    description:
      'Records a Flow run (source "mcp") as POST /api/flow/gates/:gateId/runs does; render, approval and delivery go on in the background (follow with get_run). ' +
      'A payload that fails validation is recorded as a validation_failed run and answered normally with what to fix.',
    inputSchema: {
      type: 'object',
      properties: {
        gateId: gateArg,
        payload: payloadArg,
        metadata: { type: 'object', description: 'Flat metadata (string, number, boolean or null values; at most 10 KB)', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
        idempotencyKey: IDEMPOTENCY_KEY_ARG,
      },
      required: ['gateId', 'payload'],
    },
    outputSchema: { ...runSchema, properties: { ...runSchema.properties, howToFix: { type: 'string' }, idempotentReplayed: IDEMPOTENT_REPLAYED } },
    annotations: CREATES,
    access: FLOW_ACCESS.write,
    args: (submitRunSchema as Joi.ObjectSchema).keys({ gateId: ref, idempotencyKey: Joi.string().min(1).max(255) }),
    async run(ctx, { idempotencyKey, ...input }: { gateId: string; payload: unknown; metadata?: Record<string, string | number | boolean | null>; idempotencyKey?: string }) {
      // With a key the run's id is stored in the transaction that records the run; a repeat answers
      // with that run as it is now (its state moves on), not a copy of the first answer.
      let created: RunEntity | undefined;
      const { answer, replayed } = await keyedCall<{ runId: string }>(ctx, 'submit_run', idempotencyKey, input, async (store) => {
        ({ run: created } = await submitRun(ctx.flow.submissions, ctx.scope.projectId, {
          gateRef: input.gateId,
          payload: input.payload,
          metadata: input.metadata,
          rawBytes: payloadBytes(input.payload),
          source: 'mcp',
          inTransaction: store && ((m, r) => store(m, { runId: r.id })),
        }));
        return { runId: created.id };
      });
      const run = created ?? (await getRun(ctx.flow.db, ctx.scope.projectId, answer.runId));
      const presented = await presentRunForTool(ctx, run);
      const result = run.validation.valid ? presented : { ...presented, howToFix: howToFix(run.validation.details) };
      return replayed ? { ...result, idempotentReplayed: true } : result;
    },
  },
  {
    name: 'get_run',
    title: 'Get a Flow run',
    description: 'One run with its validation, approval and delivery state (GET /api/flow/runs/:id; needs read_runs). Payloads above 16 KB are left out with a note.',
    inputSchema: { type: 'object', properties: { runId: { type: 'string', description: 'Run id (UUID) or shortId (frun_…)' } }, required: ['runId'] },
    outputSchema: runSchema,
    annotations: READ_ONLY,
    access: FLOW_ACCESS.readRuns,
    args: Joi.object({ runId: ref }),
    async run(ctx, { runId }: { runId: string }) {
      return presentRunForTool(ctx, await getRun(ctx.flow.db, ctx.scope.projectId, runId));
    },
  },
  {
    name: 'list_runs',
    title: 'List Flow runs',
    description: 'Runs of this project, newest first, a page at a time (GET /api/flow/runs); filter by gate, status or source.',
    inputSchema: {
      type: 'object',
      properties: {
        ...PAGE_ARGS,
        gateId: gateArg,
        status: { type: 'string', enum: [...RUN_STATUSES] },
        source: { type: 'string', enum: ['rest', 'mcp'] },
        sortBy: { type: 'string', enum: ['createdAt', 'status'] },
        sortOrder: { type: 'string', enum: ['asc', 'desc'] },
      },
    },
    outputSchema: pageSchema(runSchema),
    annotations: READ_ONLY,
    access: FLOW_ACCESS.read,
    args: (listRunsSchema as Joi.ObjectSchema<ListRunsQuery & { gateId?: string }>).keys({ gateId: Joi.string().trim().min(1).max(200) }),
    async run(ctx, { gateId, ...query }: ListRunsQuery & { gateId?: string }) {
      // As GET /api/flow/gates/:gateId/runs: a deleted gate's own list is gone with it.
      const gate = gateId ? await findGate(ctx.flow.db, ctx.scope.projectId, gateId) : undefined;
      const { runs, total } = await listRuns(ctx.flow.db, ctx.scope.projectId, query, gate?.id);
      return presentPage(runs, total, query.page, query.limit, presentRunSummary);
    },
  },
];
