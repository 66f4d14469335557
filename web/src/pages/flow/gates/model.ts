import type { components } from '@formwork/client';

/**
 * The gate as the editor holds it, and the plain-data steps between it and the API's bodies
 * (docs/flow.md "ObjectSchema", "Business rules", "Write-only secrets").
 */
export type Gate = components['schemas']['Gate'];
export type GateProperty = components['schemas']['GateProperty'];
export type ObjectSchema = components['schemas']['GateObjectSchema'];
export type BusinessRule = components['schemas']['BusinessRule'];
export type FreetextConfig = components['schemas']['FreetextConfig'];
export type GateVersion = components['schemas']['GateSchemaVersion'];
export type TestResult = components['schemas']['GateTestResult'];
export type PropertyType = GateProperty['type'];
export type Problem = { field: string; message: string };

export const PROPERTY_TYPES: PropertyType[] = ['string', 'number', 'integer', 'boolean', 'array', 'object'];

/** The keys each type takes beside type, required and description (the API refuses others: domain/flow/definition-check.ts). */
const KEYS_BY_TYPE: Record<PropertyType, Array<keyof GateProperty>> = {
  string: ['minLength', 'maxLength', 'pattern', 'enum', 'format'],
  number: ['min', 'max', 'enum'],
  integer: ['min', 'max', 'enum'],
  boolean: ['enum'],
  array: ['items', 'min', 'max', 'minLength', 'maxLength'],
  object: ['properties', 'additionalProperties'],
};

export const emptySchema = (): ObjectSchema => ({ type: 'object', properties: {} });

/** The property with another type: what still applies is kept, the rest dropped; arrays get string items, objects no fields. */
export function retype(prop: GateProperty, type: PropertyType): GateProperty {
  const next: GateProperty = { type };
  if (prop.required !== undefined) next.required = prop.required;
  if (prop.description !== undefined) next.description = prop.description;
  for (const key of KEYS_BY_TYPE[type]) if (prop[key] !== undefined) (next as Record<string, unknown>)[key] = prop[key];
  if (next.enum && (type === 'number' || type === 'integer' || type === 'boolean' || type === 'string')) {
    const values = next.enum.map((v) => enumValue(type, String(v))).filter((v) => v !== undefined);
    if (values.length) next.enum = values;
    else delete next.enum;
  }
  if (type === 'array' && !next.items) next.items = { type: 'string' };
  if (type === 'object' && !next.properties) next.properties = {};
  return next;
}

/** A value typed into an enumeration, as the type reads it (undefined: not one). */
export function enumValue(type: PropertyType, text: string): string | number | boolean | undefined {
  if (type === 'string') return text;
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) return undefined;
  return type === 'integer' && !Number.isInteger(n) ? undefined : n;
}

/** A copy of `prop` with `key` set, or removed when `value` is undefined, '' or an empty list. */
export function withKey<K extends keyof GateProperty>(prop: GateProperty, key: K, value: GateProperty[K] | undefined): GateProperty {
  const next = { ...prop };
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0) || value === false) delete next[key];
  else next[key] = value;
  return next;
}

/** A field name not yet taken among `taken`. */
export function freshName(taken: Record<string, unknown>, base = 'field'): string {
  for (let i = Object.keys(taken).length + 1; ; i++) if (!(`${base}${i}` in taken)) return `${base}${i}`;
}

/** The properties with one renamed, in the same order. */
export function renamed(properties: Record<string, GateProperty>, from: string, to: string): Record<string, GateProperty> {
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k === from ? to : k, v]));
}

/** The properties with the one at `index` moved by `by` places. */
export function moved(properties: Record<string, GateProperty>, index: number, by: number): Record<string, GateProperty> {
  const entries = Object.entries(properties);
  const target = index + by;
  if (target < 0 || target >= entries.length) return properties;
  const [entry] = entries.splice(index, 1);
  entries.splice(target, 0, entry);
  return Object.fromEntries(entries);
}

/** A JSON text the builder can take: an object with `type: "object"` and `properties` an object. */
export function parseSchema(text: string): { schema?: ObjectSchema; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'Not valid JSON yet: the builder keeps the last valid schema.' };
  }
  const v = value as Partial<ObjectSchema> | null;
  if (!v || typeof v !== 'object' || Array.isArray(v) || v.type !== 'object' || !v.properties || typeof v.properties !== 'object' || Array.isArray(v.properties)) {
    return { error: 'A schema is an object with "type": "object" and "properties": the builder keeps the last valid schema.' };
  }
  return { schema: v as ObjectSchema };
}

/** The field paths a rule can name (`customer`, `items`, `items.price`), for the expression editor's completion. */
export function fieldPaths(schema: ObjectSchema | null | undefined): string[] {
  const paths: string[] = [];
  const walk = (props: Record<string, GateProperty> | undefined, base: string, depth: number) => {
    if (!props || depth > 10) return;
    for (const [name, prop] of Object.entries(props)) {
      const path = base ? `${base}.${name}` : name;
      paths.push(path);
      if (prop.type === 'object') walk(prop.properties, path, depth + 1);
      if (prop.type === 'array' && prop.items?.type === 'object') walk(prop.items.properties, path, depth + 1);
    }
  };
  walk(schema?.properties, '', 0);
  return paths;
}

/** A payload that the schema's types would accept, to start the test console with. */
export function samplePayload(schema: ObjectSchema | null | undefined): Record<string, unknown> {
  const sample = (prop: GateProperty, name: string, depth: number): unknown => {
    if (prop.enum?.length) return prop.enum[0];
    switch (prop.type) {
      case 'string':
        if (prop.format === 'email') return 'ada@example.com';
        if (prop.format === 'url') return 'https://example.com';
        if (prop.format === 'date') return '2026-01-31';
        if (prop.format === 'date-time') return '2026-01-31T12:00:00Z';
        if (prop.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
        return name.length >= (prop.minLength ?? 0) ? name : name.padEnd(prop.minLength ?? 0, 'x');
      case 'number':
      case 'integer':
        return prop.min ?? (prop.max !== undefined && prop.max < 1 ? prop.max : 1);
      case 'boolean':
        return true;
      case 'array':
        return depth > 5 || !prop.items ? [] : [sample(prop.items, name, depth + 1)];
      case 'object':
        return depth > 5 ? {} : Object.fromEntries(Object.entries(prop.properties ?? {}).map(([k, p]) => [k, sample(p, k, depth + 1)]));
    }
  };
  return Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([k, p]) => [k, sample(p, k, 0)]));
}

/** The API's problems (`relatedInfo.details` of 422 FLOW.GATE_VALIDATION_FAILED, or a 400's field) from a thrown call. */
export class SaveError extends Error {
  constructor(
    message: string,
    readonly problems: Problem[],
  ) {
    super(message);
  }
}

/** The problems an error body lists (`relatedInfo.details: [{field, message}]`), if any. */
export function problemsOf(error: unknown): Problem[] {
  const info = (error as { relatedInfo?: { details?: unknown; field?: unknown } } | undefined)?.relatedInfo;
  if (Array.isArray(info?.details)) return info.details.filter((d): d is Problem => typeof d?.field === 'string' && typeof d?.message === 'string');
  return [];
}

/** Statuses in words. */
export const STATUS_WORDS: Record<Gate['status'], { word: string; colour: string }> = {
  active: { word: 'active', colour: 'green' },
  paused: { word: 'paused', colour: 'yellow' },
  archived: { word: 'archived', colour: 'gray' },
};
