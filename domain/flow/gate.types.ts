/**
 * Gate definition formats (contract §5). Stored as JSON on the gate and on each schema version;
 * checked by definition-check.ts before they are saved, and trusted by the engine after that.
 */

export const PROPERTY_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export const FORMATS = ['email', 'url', 'date', 'date-time', 'uuid'] as const;
export type Format = (typeof FORMATS)[number];

export interface Property {
  type: PropertyType;
  required?: boolean;
  /** number/integer: smallest value; array: fewest items. */
  min?: number;
  /** number/integer: largest value; array: most items. */
  max?: number;
  /** string: fewest characters (code points); array: fewest items. */
  minLength?: number;
  maxLength?: number;
  /** string: a regular expression the whole value must match somewhere (anchor it with ^…$). */
  pattern?: string;
  enum?: Array<string | number | boolean | null>;
  format?: Format;
  /** array: what every element must be. */
  items?: Property;
  /** object: its fields. */
  properties?: Record<string, Property>;
  /** object: false refuses fields not listed in `properties` (UNKNOWN_FIELD). Default true. */
  additionalProperties?: boolean;
  /** A person's name for the field (the reviewer's page and the approval e-mail show it). */
  title?: string;
  description?: string;
}

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, Property>;
  additionalProperties?: boolean;
}

export interface BusinessRule {
  id: string;
  name?: string;
  /** JSONata over the payload (variables mode) or `{text, length, lines, words}` (freetext mode). */
  expression: string;
  message: string;
}

export interface FreetextConfig {
  minLength?: number;
  maxLength?: number;
  requiredPatterns?: string[];
  forbiddenPatterns?: string[];
}

export type ValidationMode = 'variables' | 'freetext';

/** What one schema version validates with: the unit the engine compiles and caches. */
export interface GateValidationDefinition {
  validationMode: ValidationMode;
  schema: ObjectSchema | null;
  businessRules: BusinessRule[];
  freetextConfig: FreetextConfig | null;
}

/** Contract §5 detail codes: stable words clients can switch on. */
export type DetailCode =
  | 'REQUIRED'
  | 'TYPE'
  | 'MIN'
  | 'MAX'
  | 'MIN_LENGTH'
  | 'MAX_LENGTH'
  | 'PATTERN'
  | 'ENUM'
  | 'FORMAT'
  | 'UNKNOWN_FIELD'
  | 'RULE';

export interface ValidationDetail {
  /** Path into the payload (`items[2].price`), `text` in freetext mode, the rule id for a rule. */
  field: string;
  message: string;
  code: DetailCode;
  ruleId?: string;
}

export type StepStatus = 'pass' | 'fail' | 'error' | 'skipped';
export type LayerStatus = 'pass' | 'fail' | 'skipped';

export interface ValidationStep {
  name: string;
  status: StepStatus;
  durationMs: number;
  errors: ValidationDetail[];
  ruleId?: string;
  expression?: string;
}

export interface ValidationOutcome {
  valid: boolean;
  durationMs: number;
  steps: ValidationStep[];
  layers: { schema: LayerStatus; business_rules: LayerStatus };
  /** The first failing layer, when invalid. */
  failedLayer?: 'schema' | 'business_rules';
  /** Every problem of the failing layer, capped (MAX_DETAILS). */
  details: ValidationDetail[];
}

/** Most details one validation reports: a 100,000-item array of bad rows should not answer with 100,000 entries. */
export const MAX_DETAILS = 100;
