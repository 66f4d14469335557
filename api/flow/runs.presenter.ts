import type { RunEntity } from '../../db/flow/run.entity';
import type { ValidationOutcome } from '../../domain/flow/gate.types';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The spec's validation result: `validation_id`, `validated_payload`, `layers` (plus the details and steps). */
function presentValidation(run: RunEntity) {
  const v = run.validation;
  return {
    validation_id: v.validationId,
    valid: v.valid,
    validated_payload: v.valid ? run.inputPayload : null,
    layers: v.layers,
    ...(v.failedLayer ? { failedLayer: v.failedLayer } : {}),
    details: v.details,
    steps: v.steps,
    durationMs: v.durationMs,
  };
}

/** The full run record (GET /runs/:id, and the body of POST /gates/:gateId/runs). */
export function presentRun(run: RunEntity, artefactUrl: string | null = null) {
  return {
    id: run.id,
    runId: run.id,
    shortId: run.shortId,
    gateId: run.gateId,
    status: run.status,
    source: run.source,
    schemaVersion: run.schemaVersion,
    inputPayload: run.inputPayload,
    validation: presentValidation(run),
    metadata: run.metadata,
    artefactUrl,
    approvalStatus: run.approvalStatus,
    deliveryStatus: run.deliveryStatus,
    error: run.error,
    errorCode: run.errorCode ?? null,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    completedAt: iso(run.completedAt),
  };
}

/** A list entry: the record without the payload, which can be up to 1 MB per run. */
export function presentRunSummary(run: RunEntity) {
  const { inputPayload: _payload, validation, ...rest } = presentRun(run);
  return { ...rest, validation: { validation_id: validation.validation_id, valid: validation.valid, layers: validation.layers } };
}

/**
 * The spec's validate bodies: 200 `{success, runId, shortId, status: validated, validation_id,
 * validated_payload, layers}`, or 422 `{success: false, status: validation_failed, error: {code:
 * VALIDATION_FAILED, message, layer, details}, layers}` (plus the run ids, since a run was recorded).
 */
export function presentValidateResult(run: RunEntity): { status: number; body: Record<string, unknown> } {
  const v = run.validation;
  if (v.valid) {
    return {
      status: 200,
      body: {
        success: true,
        runId: run.id,
        shortId: run.shortId,
        status: 'validated',
        validation_id: v.validationId,
        validated_payload: run.inputPayload,
        layers: v.layers,
      },
    };
  }
  const layer = v.failedLayer ?? 'schema';
  return {
    status: 422,
    body: {
      success: false,
      runId: run.id,
      shortId: run.shortId,
      status: 'validation_failed',
      validation_id: v.validationId,
      error: {
        code: 'VALIDATION_FAILED',
        message: layer === 'schema' ? 'The payload does not match the gate schema' : 'The payload breaks a business rule',
        layer,
        details: v.details.map(({ field, message, code }) => ({ field, message, code })),
      },
      layers: v.layers,
    },
  };
}

/** A dry run (`POST /gates/:id/test`): the verdict, the two layers (which failed first) and every step. */
export function presentTestResult(outcome: ValidationOutcome) {
  return { valid: outcome.valid, durationMs: outcome.durationMs, layers: outcome.layers, failedLayer: outcome.failedLayer ?? null, steps: outcome.steps };
}
