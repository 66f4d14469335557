import { AppError } from '../errors';
import { FORMATS, PROPERTY_TYPES, type BusinessRule, type FreetextConfig, type GateValidationDefinition, type Property } from './gate.types';
import { compileUserRegex, jsonataProblems } from '../user-regex';

/**
 * Checks a gate's validation definition before it is saved (contract §5): a malformed schema, an
 * unsafe pattern or a rule whose expression does not parse is refused with 422
 * FLOW.GATE_VALIDATION_FAILED and every problem in `relatedInfo.details`. What passes here is what
 * the engine (compile.ts) may assume.
 */

const DEFINITION_LIMITS = {
  /** Nesting of objects and arrays below the root. */
  maxDepth: 10,
  /** Properties in the whole schema, nested ones included. */
  maxProperties: 500,
  maxEnumValues: 500,
  maxRules: 20,
  maxExpressionLength: 4096,
  maxMessageLength: 500,
  maxPatternsPerList: 20,
} as const;

export interface DefinitionProblem {
  field: string;
  message: string;
}

const RULE_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const KEYS_BY_TYPE: Record<Property['type'], string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'enum', 'format'],
  number: ['min', 'max', 'enum'],
  integer: ['min', 'max', 'enum'],
  boolean: ['enum'],
  array: ['items', 'min', 'max', 'minLength', 'maxLength'],
  object: ['properties', 'additionalProperties'],
};
const COMMON_KEYS = ['type', 'required', 'title', 'description'];

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;

class Checker {
  problems: DefinitionProblem[] = [];
  propertyCount = 0;

  add(field: string, message: string): void {
    if (this.problems.length < 100) this.problems.push({ field, message });
  }

  objectSchema(schema: unknown, at: string): void {
    if (!isPlainObject(schema)) return this.add(at, 'must be an object');
    for (const key of Object.keys(schema)) {
      if (!['type', 'properties', 'additionalProperties'].includes(key)) this.add(`${at}.${key}`, 'is not an ObjectSchema key');
    }
    if (schema.type !== 'object') this.add(`${at}.type`, "must be 'object'");
    if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== 'boolean') this.add(`${at}.additionalProperties`, 'must be a boolean');
    this.properties(schema.properties, `${at}.properties`, 1);
  }

  properties(props: unknown, at: string, depth: number): void {
    if (!isPlainObject(props)) return this.add(at, 'must be an object of properties');
    for (const [name, prop] of Object.entries(props)) {
      if (name.length === 0 || name.length > 128) this.add(at, `property name '${name.slice(0, 20)}' must be 1 to 128 characters`);
      this.property(prop, `${at}.${name}`, depth);
    }
  }

  property(prop: unknown, at: string, depth: number): void {
    this.propertyCount += 1;
    if (this.propertyCount === DEFINITION_LIMITS.maxProperties + 1) this.add(at, `a schema has at most ${DEFINITION_LIMITS.maxProperties} properties`);
    if (depth > DEFINITION_LIMITS.maxDepth) return this.add(at, `nesting deeper than ${DEFINITION_LIMITS.maxDepth} levels`);
    if (!isPlainObject(prop)) return this.add(at, 'must be an object');
    const type = prop.type as Property['type'];
    if (!PROPERTY_TYPES.includes(type)) return this.add(`${at}.type`, `must be one of ${PROPERTY_TYPES.join(', ')}`);
    const allowed = [...COMMON_KEYS, ...KEYS_BY_TYPE[type]];
    for (const key of Object.keys(prop)) {
      if (!allowed.includes(key)) this.add(`${at}.${key}`, `does not apply to type '${type}'`);
    }
    if (prop.required !== undefined && typeof prop.required !== 'boolean') this.add(`${at}.required`, 'must be a boolean');
    if (prop.title !== undefined && (typeof prop.title !== 'string' || prop.title.length > 200)) {
      this.add(`${at}.title`, 'must be a string of at most 200 characters');
    }
    if (prop.description !== undefined && (typeof prop.description !== 'string' || prop.description.length > 1000)) {
      this.add(`${at}.description`, 'must be a string of at most 1000 characters');
    }
    this.bounds(prop, at, type);
    if (prop.pattern !== undefined) this.pattern(prop.pattern, `${at}.pattern`);
    if (prop.format !== undefined && !FORMATS.includes(prop.format as never)) this.add(`${at}.format`, `must be one of ${FORMATS.join(', ')}`);
    if (prop.enum !== undefined) this.enumValues(prop.enum, at, type);
    if (type === 'array') {
      if (prop.items !== undefined) this.property(prop.items, `${at}.items`, depth + 1);
    }
    if (type === 'object') {
      if (prop.additionalProperties !== undefined && typeof prop.additionalProperties !== 'boolean') this.add(`${at}.additionalProperties`, 'must be a boolean');
      if (prop.properties !== undefined) this.properties(prop.properties, `${at}.properties`, depth + 1);
    }
  }

  bounds(prop: Record<string, unknown>, at: string, type: Property['type']): void {
    const numeric = type === 'number' || type === 'integer';
    for (const [lo, hi] of [['min', 'max'], ['minLength', 'maxLength']] as const) {
      for (const key of [lo, hi]) {
        const v = prop[key];
        if (v === undefined) continue;
        // min/max bound the value of numbers but count items of arrays.
        const valueBound = numeric && (key === 'min' || key === 'max');
        const ok = valueBound ? typeof v === 'number' && Number.isFinite(v) : isCount(v);
        if (!ok) this.add(`${at}.${key}`, valueBound ? 'must be a finite number' : 'must be a non-negative integer');
      }
      if (typeof prop[lo] === 'number' && typeof prop[hi] === 'number' && (prop[lo] as number) > (prop[hi] as number)) {
        this.add(`${at}.${lo}`, `must not be greater than ${hi}`);
      }
    }
  }

  enumValues(values: unknown, at: string, type: Property['type']): void {
    if (!Array.isArray(values) || values.length === 0 || values.length > DEFINITION_LIMITS.maxEnumValues) {
      return this.add(`${at}.enum`, `must be a non-empty array of at most ${DEFINITION_LIMITS.maxEnumValues} values`);
    }
    const want = type === 'integer' ? 'number' : type;
    if (values.some((v) => v !== null && typeof v !== want)) this.add(`${at}.enum`, `values must be of type ${type} (or null)`);
  }

  pattern(pattern: unknown, at: string): void {
    if (typeof pattern !== 'string') return this.add(at, 'must be a string');
    const compiled = compileUserRegex(pattern);
    if (!compiled.ok) this.add(at, compiled.reason);
  }

  freetext(config: unknown, at: string): void {
    if (!isPlainObject(config)) return this.add(at, 'must be an object');
    for (const key of Object.keys(config)) {
      if (!['minLength', 'maxLength', 'requiredPatterns', 'forbiddenPatterns'].includes(key)) this.add(`${at}.${key}`, 'is not a freetextConfig key');
    }
    this.bounds(config, at, 'string');
    for (const key of ['requiredPatterns', 'forbiddenPatterns'] as const) {
      const list = config[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length > DEFINITION_LIMITS.maxPatternsPerList) {
        this.add(`${at}.${key}`, `must be an array of at most ${DEFINITION_LIMITS.maxPatternsPerList} patterns`);
        continue;
      }
      list.forEach((p, i) => this.pattern(p, `${at}.${key}[${i}]`));
    }
  }

  rules(rules: unknown, at: string): void {
    if (!Array.isArray(rules)) return this.add(at, 'must be an array');
    if (rules.length > DEFINITION_LIMITS.maxRules) this.add(at, `at most ${DEFINITION_LIMITS.maxRules} business rules`);
    const seen = new Set<string>();
    rules.forEach((rule: Partial<BusinessRule>, i) => {
      const here = `${at}[${i}]`;
      if (!isPlainObject(rule)) return this.add(here, 'must be an object');
      if (typeof rule.id !== 'string' || !RULE_ID.test(rule.id)) this.add(`${here}.id`, 'must be 1 to 64 letters, digits, dots, dashes or underscores');
      else if (seen.has(rule.id)) this.add(`${here}.id`, `duplicate rule id '${rule.id}'`);
      else seen.add(rule.id);
      if (typeof rule.message !== 'string' || rule.message.length === 0 || rule.message.length > DEFINITION_LIMITS.maxMessageLength) {
        this.add(`${here}.message`, `must be a string of 1 to ${DEFINITION_LIMITS.maxMessageLength} characters`);
      }
      if (rule.name !== undefined && (typeof rule.name !== 'string' || rule.name.length > 255)) this.add(`${here}.name`, 'must be a string of at most 255 characters');
      if (typeof rule.expression !== 'string' || rule.expression.trim() === '' || rule.expression.length > DEFINITION_LIMITS.maxExpressionLength) {
        return this.add(`${here}.expression`, `must be a JSONata expression of 1 to ${DEFINITION_LIMITS.maxExpressionLength} characters`);
      }
      for (const problem of jsonataProblems(rule.expression)) this.add(`${here}.expression`, problem);
    });
  }
}

/** Every problem of a definition; empty when it can be saved. */
export function definitionProblems(def: GateValidationDefinition): DefinitionProblem[] {
  const c = new Checker();
  if (def.schema !== null && def.schema !== undefined) c.objectSchema(def.schema, 'schema');
  if (def.validationMode === 'freetext') {
    if (!def.freetextConfig) c.add('freetextConfig', "is required when validationMode is 'freetext'");
    else c.freetext(def.freetextConfig, 'freetextConfig');
  } else if (def.freetextConfig) {
    c.freetext(def.freetextConfig as FreetextConfig, 'freetextConfig');
  }
  c.rules(def.businessRules ?? [], 'businessRules');
  return c.problems;
}

/** Throws 422 FLOW.GATE_VALIDATION_FAILED listing the problems (from definitionProblems), if any. */
export function assertNoProblems(details: DefinitionProblem[]): void {
  if (details.length > 0) {
    throw new AppError('FLOW.GATE_VALIDATION_FAILED', `Gate definition invalid: ${details[0].field} ${details[0].message}`, { details });
  }
}
