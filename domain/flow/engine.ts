import { compileObjectSchema } from './compile-schema';
import { compileFreetext, freetextFacts } from './freetext';
import { MAX_DETAILS, type GateValidationDefinition, type ValidationDetail, type ValidationOutcome, type ValidationStep } from './gate.types';
import { compileRule, runRule, skippedRule, type CompiledRule } from './rules';

/**
 * The validation engine shared by test, validate and runs: the schema layer (ObjectSchema or the
 * freetext checks), then the business rules, which run only when the schema layer passed (a rule
 * over a payload of the wrong shape would only report noise). Pure: no I/O, no clock but timing.
 */

export interface CompiledGate {
  mode: GateValidationDefinition['validationMode'];
  checkShape(payload: unknown): ValidationDetail[];
  rules: CompiledRule[];
}

/** Compiles a definition that definition-check.ts accepted. */
export function compileGate(def: GateValidationDefinition): CompiledGate {
  return {
    mode: def.validationMode,
    checkShape: def.validationMode === 'freetext' ? compileFreetext(def.freetextConfig) : compileObjectSchema(def.schema),
    rules: (def.businessRules ?? []).map(compileRule),
  };
}

const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

export async function validatePayload(gate: CompiledGate, payload: unknown): Promise<ValidationOutcome> {
  const start = performance.now();
  const shapeErrors = gate.checkShape(payload);
  const schemaStep: ValidationStep = {
    name: gate.mode === 'freetext' ? 'freetext' : 'schema',
    status: shapeErrors.length === 0 ? 'pass' : 'fail',
    durationMs: elapsed(start),
    errors: shapeErrors,
  };
  const steps: ValidationStep[] = [schemaStep];
  if (shapeErrors.length > 0) {
    steps.push(...gate.rules.map(skippedRule));
    return {
      valid: false,
      durationMs: elapsed(start),
      steps,
      layers: { schema: 'fail', business_rules: 'skipped' },
      failedLayer: 'schema',
      details: shapeErrors,
    };
  }
  const input = gate.mode === 'freetext' ? freetextFacts(payload as string) : payload;
  const details: ValidationDetail[] = [];
  for (const rule of gate.rules) {
    const step = await runRule(rule, input);
    steps.push(step);
    if (details.length < MAX_DETAILS) details.push(...step.errors);
  }
  const valid = details.length === 0;
  return {
    valid,
    durationMs: elapsed(start),
    steps,
    layers: { schema: 'pass', business_rules: valid ? 'pass' : 'fail' },
    ...(valid ? {} : { failedLayer: 'business_rules' as const }),
    details: details.slice(0, MAX_DETAILS),
  };
}
