import type { FreetextConfig, ObjectSchema, Property } from './gate.types';

/**
 * A gate's definition as JSON Schema (draft 2020-12), for clients that build payloads from a
 * schema (the MCP tool get_gate_schema). It describes what the engine checks field by field:
 * `required` flags become `required` lists, min/max become minimum/maximum on numbers and
 * minItems/maxItems on arrays. Business rules are JSONata and have no JSON Schema form: they are
 * listed beside the schema, not in it.
 */
export type JsonSchema = Record<string, unknown>;

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

function propertySchema(p: Property): JsonSchema {
  const out: JsonSchema = { type: p.type };
  if (p.title) out.title = p.title;
  if (p.description) out.description = p.description;
  if (p.enum) out.enum = p.enum;
  if (p.format) out.format = p.format;
  if (p.type === 'string') {
    if (p.minLength !== undefined) out.minLength = p.minLength;
    if (p.maxLength !== undefined) out.maxLength = p.maxLength;
    if (p.pattern !== undefined) out.pattern = p.pattern;
  }
  if (p.type === 'number' || p.type === 'integer') {
    if (p.min !== undefined) out.minimum = p.min;
    if (p.max !== undefined) out.maximum = p.max;
  }
  if (p.type === 'array') {
    // The engine reads both min and minLength as the fewest items; the larger bound is the one that holds.
    const fewest = Math.max(p.min ?? 0, p.minLength ?? 0);
    const most = [p.max, p.maxLength].filter((n): n is number => n !== undefined);
    if (fewest > 0) out.minItems = fewest;
    if (most.length) out.maxItems = Math.min(...most);
    if (p.items) out.items = propertySchema(p.items);
  }
  if (p.type === 'object') Object.assign(out, objectSchema(p.properties ?? {}, p.additionalProperties));
  return out;
}

function objectSchema(properties: Record<string, Property>, additional: boolean | undefined): JsonSchema {
  const required = Object.keys(properties).filter((k) => properties[k].required === true);
  return {
    properties: Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, propertySchema(p)])),
    ...(required.length ? { required } : {}),
    ...(additional === false ? { additionalProperties: false } : {}),
  };
}

/** Variables mode: the payload object. */
export function gateSchemaToJsonSchema(schema: ObjectSchema | null): JsonSchema {
  return { $schema: DRAFT, type: 'object', ...objectSchema(schema?.properties ?? {}, schema?.additionalProperties) };
}

/** Freetext mode: the payload is one string; required and forbidden patterns stay with the engine. */
export function freetextToJsonSchema(config: FreetextConfig | null): JsonSchema {
  return {
    $schema: DRAFT,
    type: 'string',
    ...(config?.minLength !== undefined ? { minLength: config.minLength } : {}),
    ...(config?.maxLength !== undefined ? { maxLength: config.maxLength } : {}),
  };
}
