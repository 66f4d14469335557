import type { TemplateDefinition } from './template.types';

/**
 * The shapes a definition may arrive in, made into the one shape stored and checked, so that
 * everything downstream (validators, renderers, automation fields, Flow's import-schema) sees one:
 *
 * - A variable's `items.properties` is a list of fields (`[{"name": "qty", "type": "number"}]`)
 *   or, as in a Flow gate's ObjectSchema, a map from field name to field
 *   (`{"qty": {"type": "number"}}`). The map becomes the list, in the map's key order; the key is
 *   the field's name (an entry has no `name` of its own). Anything else is left as it is for the
 *   validator to refuse with the entry's path.
 * - A schema without `pageSize` is printed on A4.
 */

export const DEFAULT_PAGE_SIZE = 'A4';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A map of fields becomes a list of fields. A list, or a map with an entry that is not a field
 * without a `name` of its own, is returned unchanged: the validator accepts both forms and names
 * the entry that is wrong (`items.properties.qty.name` is not allowed).
 */
function fieldList(properties: unknown): unknown {
  if (!isPlainObject(properties)) return properties;
  const entries = Object.entries(properties);
  if (!entries.every(([, field]) => isPlainObject(field) && !Object.prototype.hasOwnProperty.call(field, 'name'))) return properties;
  return entries.map(([name, field]) => ({ ...(field as Record<string, unknown>), name }));
}

/** Every variable with its `items.properties` in the list form. */
export function normalizeVariables(variables: unknown): unknown {
  if (!Array.isArray(variables)) return variables;
  return variables.map((v) => {
    if (!isPlainObject(v) || !isPlainObject(v.items) || !isPlainObject(v.items.properties)) return v;
    return { ...v, items: { ...v.items, properties: fieldList(v.items.properties) } };
  });
}

/** The schema with `pageSize` A4 when it names none. */
function withDefaultPageSize(schema: unknown): unknown {
  if (!isPlainObject(schema) || schema.pageSize !== undefined) return schema;
  return { ...schema, pageSize: DEFAULT_PAGE_SIZE };
}

export function normalizeDefinition(def: TemplateDefinition): TemplateDefinition {
  return {
    ...def,
    schema: withDefaultPageSize(def.schema) as TemplateDefinition['schema'],
    variables: normalizeVariables(def.variables) as TemplateDefinition['variables'],
  };
}
