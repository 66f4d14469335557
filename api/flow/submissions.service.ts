import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { GateEntity } from '../../db/flow/gate.entity';
import { claimCircuitTrial, recordRunOutcome, releaseCircuitTrial } from '../../db/flow/gate-circuit';
import { RunEntity } from '../../db/flow/run.entity';
import { insertRun } from '../../db/flow/run-state';
import type { RunSource } from '../../domain/flow/run.types';
import type { RunStatus } from '../../domain/flow/run-status';
import { ProjectEntity } from '../../db/identity/project.entity';
import { AppError } from '../../domain/errors';
import { admission } from '../../domain/flow/circuit-breaker';
import { newRunShortId } from '../../domain/flow/flow-ids';
import { charLength } from '../../domain/flow/formats';
import type { Evaluator } from '../../domain/evaluation';
import type { ValidationOutcome } from '../../domain/flow/gate.types';
import { flowPlan, monthStart, type FlowPlan } from '../../domain/flow/plans';
import type { WorkflowOutbox } from '../../platform/workflow-outbox';
import { findGate, gateQuery } from './gates.service';
import { chargeRunAtSubmission, type RunCharge } from '../../db/flow/run-billing';
import { gateRenderSettings } from '../../domain/flow/render-output';

/**
 * Submissions to a gate: the dry-run test and the run-creating validate / POST runs. The checks
 * run cheapest first (size, gate state, circuit, per-gate rate, plan limits), then the engine;
 * the run is committed before anything is answered, and its workflow started after the commit.
 */

/** Spec, Limits §4: a submitted payload is at most 1 MB. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

export interface SubmissionDeps {
  db: DataSource;
  /** Evaluates the gate's schema, patterns and rules off the request thread, within the budget. */
  evaluator: Evaluator;
  /** The per-gate limiter for a `maxSubmissionsPerMinute` value (shared through Redis when configured). */
  gateLimiter(points: number): RateLimiterAbstract;
  /** Starts the run's workflow once its row is committed (platform/workflow-outbox.ts). */
  outbox: Pick<WorkflowOutbox, 'start'>;
  /** FREE_DOCUMENTS_PER_MONTH: a natively rendered run spends one (docs/documents.md "Quotas and the watermark on every output"). */
  freeDocumentsPerMonth: number;
}

export interface SubmissionInput {
  gateRef: string;
  payload: unknown;
  /** Size of the request body as received, for the 1 MB limit. */
  rawBytes: number;
  metadata?: Record<string, unknown>;
  source: RunSource;
  /** Runs inside the transaction that inserts the run (the Idempotency-Key's answer, docs/idempotency.md). */
  inTransaction?: (m: EntityManager, run: RunEntity) => Promise<void>;
}

function checkSize(rawBytes: number): void {
  if (rawBytes > MAX_PAYLOAD_BYTES) throw new AppError('ERR_FLOW_RUN_005', undefined, { limit: MAX_PAYLOAD_BYTES });
}

/** Plan content limit in characters: the text in freetext mode, the JSON text otherwise. */
function checkContent(plan: FlowPlan, payload: unknown, rawBytes: number): void {
  // A UTF-8 character is at least one byte: a body within the limit in bytes is within it in characters.
  if (rawBytes <= plan.contentLimitChars) return;
  const chars = typeof payload === 'string' ? charLength(payload) : charLength(JSON.stringify(payload) ?? '');
  if (chars > plan.contentLimitChars) throw new AppError('ERR_FLOW_LIMIT_003', undefined, { limit: plan.contentLimitChars, length: chars });
}

function validate(deps: SubmissionDeps, gate: GateEntity, payload: unknown): Promise<ValidationOutcome> {
  return deps.evaluator.validate({
    tenant: gate.projectId,
    gateId: gate.id,
    version: gate.schemaVersion,
    definition: { validationMode: gate.validationMode, schema: gate.schema, businessRules: gate.businessRules, freetextConfig: gate.freetextConfig },
    payload,
  });
}

/** POST /gates/:id/test: the engine alone. No run, no quota, any gate status. */
export async function testGate(deps: SubmissionDeps, projectId: string, gateRef: string, payload: unknown, rawBytes: number): Promise<ValidationOutcome> {
  checkSize(rawBytes);
  const gate = await findGate(deps.db, projectId, gateRef);
  return validate(deps, gate, payload);
}

function hasWorkAfterValidation(gate: GateEntity): boolean {
  return gate.renderMode !== 'none' || gate.approvalMode === 'manual' || gate.deliveryChannels.length > 0;
}

async function consumeGateRate(deps: SubmissionDeps, gate: GateEntity): Promise<void> {
  if (!gate.maxSubmissionsPerMinute) return;
  try {
    await deps.gateLimiter(gate.maxSubmissionsPerMinute).consume(gate.id);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw new AppError('ERR_FLOW_RUN_004', undefined, { retryAfter, limit: gate.maxSubmissionsPerMinute });
  }
}

const circuitOf = (gate: GateEntity) => ({
  enabled: gate.circuitBreakerEnabled,
  state: gate.circuitState,
  openUntil: gate.circuitOpenUntil,
  trialStartedAt: gate.circuitTrialStartedAt,
  cooldownSeconds: gate.cooldownSeconds,
});

/** Admission by the circuit breaker; true when this submission holds the half-open trial. */
async function admitThroughCircuit(deps: SubmissionDeps, gate: GateEntity, runId: string): Promise<boolean> {
  const decision = admission(circuitOf(gate), new Date());
  if (decision.kind === 'admit') return false;
  if (decision.kind === 'try_trial' && (await claimCircuitTrial(deps.db, gate.id, runId))) return true;
  const retryAfter = decision.kind === 'reject' ? decision.retryAfterSeconds : gate.cooldownSeconds;
  throw new AppError('ERR_FLOW_RUN_003', undefined, { retryAfter });
}

/** The gate and its workspace's plan: one round trip on the hot path. */
async function loadGateAndPlan(db: DataSource, projectId: string, gateRef: string): Promise<{ gate: GateEntity; plan: FlowPlan }> {
  const { entities, raw } = await gateQuery(db, projectId, gateRef)
    .leftJoin(ProjectEntity, 'p', 'p.id = g.projectId')
    .addSelect('p.plan', 'plan')
    .getRawAndEntities<{ plan: string | null }>();
  if (!entities[0]) throw new AppError('FLOW.GATE_NOT_FOUND', undefined, { gateId: gateRef });
  return { gate: entities[0], plan: flowPlan(raw[0]?.plan) };
}

/**
 * validate and POST runs: checks, validates, records the run. A valid run with nothing left to
 * do completes here; one with render, approval or delivery to do stays `validated` and its
 * workflow is started once the row is committed (platform/workflow-outbox.ts).
 */
export async function submitRun(deps: SubmissionDeps, projectId: string, input: SubmissionInput): Promise<{ run: RunEntity; gate: GateEntity }> {
  checkSize(input.rawBytes);
  const { gate, plan } = await loadGateAndPlan(deps.db, projectId, input.gateRef);
  if (gate.status !== 'active') throw new AppError('FLOW.GATE_PAUSED', `Gate is ${gate.status}`, { status: gate.status });
  const runId = randomUUID();
  // Reject early while open; the trial itself is claimed only once the cheap checks passed.
  const early = admission(circuitOf(gate), new Date());
  if (early.kind === 'reject') throw new AppError('ERR_FLOW_RUN_003', undefined, { retryAfter: early.retryAfterSeconds });
  await consumeGateRate(deps, gate);
  checkContent(plan, input.payload, input.rawBytes);
  const isTrial = await admitThroughCircuit(deps, gate, runId);

  let run: RunEntity;
  try {
    const outcome = await validate(deps, gate, input.payload);
    const work = outcome.valid && hasWorkAfterValidation(gate);
    const status: RunStatus = !outcome.valid ? 'validation_failed' : work ? 'validated' : 'completed';
    const now = new Date();
    run = Object.assign(new RunEntity(), {
      id: runId,
      shortId: newRunShortId(),
      gateId: gate.id,
      projectId,
      schemaVersion: gate.schemaVersion,
      status,
      source: input.source,
      inputPayload: input.payload,
      validation: {
        validationId: randomUUID(),
        valid: outcome.valid,
        layers: outcome.layers,
        ...(outcome.failedLayer ? { failedLayer: outcome.failedLayer } : {}),
        details: outcome.details,
        steps: outcome.steps,
        durationMs: outcome.durationMs,
      },
      metadata: input.metadata ?? null,
      artefactKey: null,
      artefactStoredAt: null,
      artefactExpiredAt: null,
      approvalStatus: null,
      deliveryStatus: null,
      error: null,
      errorCode: null,
      workflowPending: work,
      workflowStartedAt: null,
      outcomeRecordedAt: null,
      billing: null,
      documentsCharged: 0,
      chargedAt: null,
      createdAt: now,
      updatedAt: now,
      completedAt: work ? null : now,
    } satisfies RunEntity);
    // A valid run the gate renders natively spends a document now, as a generation does when accepted.
    const charge: RunCharge | undefined =
      status === 'validated' && gate.renderMode === 'native'
        ? { projectId, useCredit: gateRenderSettings(gate.renderConfig).useCredit, freeLimit: deps.freeDocumentsPerMonth, runShortId: run.shortId }
        : undefined;
    await recordRun(deps.db, run, plan, input.inTransaction, charge);
  } catch (err) {
    if (isTrial) await releaseCircuitTrial(deps.db, gate.id, runId);
    throw err;
  }

  if (run.workflowPending) deps.outbox.start({ kind: 'flowRun', id: run.id, projectId });
  if (isTrial) {
    // A trial that failed validation proved nothing about render or delivery: free the slot.
    if (run.status === 'validation_failed') await releaseCircuitTrial(deps.db, gate.id, runId);
    else if (run.status === 'completed') await recordRunOutcome(deps.db, { runId, outcome: 'success' });
  }
  return { run, gate };
}

/** Inserts the run (plain SQL: this is the hot path); on a plan without overage, first holds the workspace's run counter. */
async function recordRun(db: DataSource, run: RunEntity, plan: FlowPlan, inTransaction?: SubmissionInput['inTransaction'], charge?: RunCharge): Promise<void> {
  if (!plan.hardRunCap && !inTransaction && !charge) return insertRun(db, run);
  await db.transaction(async (m) => {
    if (plan.hardRunCap) {
      // Serialises submissions of this workspace only while on a capped plan, so the cap is exact.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('flow-runs:' || $1))`, [run.projectId]);
      const [{ n }] = await m.query(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM flow_runs WHERE project_id = $1 AND created_at >= $2 LIMIT $3) s`,
        [run.projectId, monthStart(run.createdAt), plan.runsPerMonth],
      );
      if (n >= plan.runsPerMonth) throw new AppError('ERR_FLOW_LIMIT_002', undefined, { limit: plan.runsPerMonth });
    }
    // Past the free quota (ERR_QUOTA_008) or without a credit (ERR_QUOTA_011) nothing is recorded.
    if (charge) Object.assign(run, await chargeRunAtSubmission(m, charge));
    await insertRun(m, run);
    await inTransaction?.(m, run);
  });
}
