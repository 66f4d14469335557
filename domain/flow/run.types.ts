import type { LayerStatus, ValidationDetail, ValidationStep } from './gate.types';

/** Where a run was submitted from. */
export type RunSource = 'rest' | 'mcp';

/** The validation result kept on a run (spec: `validation_id`, `validated_payload`, `layers`). */
export interface RunValidation {
  validationId: string;
  valid: boolean;
  layers: { schema: LayerStatus; business_rules: LayerStatus };
  failedLayer?: 'schema' | 'business_rules';
  details: ValidationDetail[];
  steps: ValidationStep[];
  durationMs: number;
}
