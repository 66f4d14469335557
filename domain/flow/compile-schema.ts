import { FORMAT_CHECKS, FORMAT_LABELS, charLength } from './formats';
import { MAX_DETAILS, type ObjectSchema, type Property, type ValidationDetail } from './gate.types';
import { compileUserRegex } from '../user-regex';

/**
 * Compiles an ObjectSchema (already accepted by definition-check.ts) into one closure tree, so a
 * submission walks plain functions instead of re-reading the schema: patterns are compiled once,
 * enums become Sets. Every problem is reported with its path (`items[2].price`), up to MAX_DETAILS.
 */

export type Sink = ValidationDetail[];
type Check = (value: unknown, path: string, out: Sink) => void;

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const push = (out: Sink, field: string, code: ValidationDetail['code'], message: string) => {
  if (out.length < MAX_DETAILS) out.push({ field, code, message });
};

function typeCheck(type: Property['type']): (v: unknown) => boolean {
  switch (type) {
    case 'string':
      return (v) => typeof v === 'string';
    case 'number':
      return (v) => typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return (v) => typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'array':
      return Array.isArray;
    case 'object':
      return (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

/** Checks a value that is present: absent and null are handled by the caller (compileFields). */
function compileProperty(prop: Property): Check {
  const isType = typeCheck(prop.type);
  const extra: Check[] = [];
  const { min, max, minLength, maxLength } = prop;

  if (prop.type === 'number' || prop.type === 'integer') {
    if (min !== undefined) extra.push((v, p, out) => (v as number) < min && push(out, p, 'MIN', `must be at least ${min}`));
    if (max !== undefined) extra.push((v, p, out) => (v as number) > max && push(out, p, 'MAX', `must be at most ${max}`));
  }
  if (prop.type === 'string') {
    if (minLength !== undefined || maxLength !== undefined) {
      extra.push((v, p, out) => {
        const s = v as string;
        // Code points lie between half the UTF-16 length and the length: count them only when that range straddles a bound.
        if ((maxLength === undefined || s.length <= maxLength) && (minLength === undefined || s.length >= 2 * minLength)) return;
        const n = charLength(s);
        if (minLength !== undefined && n < minLength) push(out, p, 'MIN_LENGTH', `must be at least ${minLength} characters long`);
        if (maxLength !== undefined && n > maxLength) push(out, p, 'MAX_LENGTH', `must be at most ${maxLength} characters long`);
      });
    }
    if (prop.pattern !== undefined) {
      const compiled = compileUserRegex(prop.pattern);
      if (compiled.ok) {
        const re = compiled.regex;
        extra.push((v, p, out) => !re.test(v as string) && push(out, p, 'PATTERN', `must match the pattern ${prop.pattern}`));
      }
    }
    if (prop.format !== undefined) {
      const ok = FORMAT_CHECKS[prop.format];
      const label = FORMAT_LABELS[prop.format];
      extra.push((v, p, out) => !ok(v as string) && push(out, p, 'FORMAT', `must be ${label}`));
    }
  }
  if (prop.type === 'array') {
    const fewest = Math.max(min ?? 0, minLength ?? 0);
    const most = Math.min(max ?? Infinity, maxLength ?? Infinity);
    const lowCode = minLength !== undefined && (min === undefined || minLength >= min) ? 'MIN_LENGTH' : 'MIN';
    const highCode = maxLength !== undefined && (max === undefined || maxLength <= max) ? 'MAX_LENGTH' : 'MAX';
    if (fewest > 0) extra.push((v, p, out) => (v as unknown[]).length < fewest && push(out, p, lowCode, `must have at least ${fewest} items`));
    if (most < Infinity) extra.push((v, p, out) => (v as unknown[]).length > most && push(out, p, highCode, `must have at most ${most} items`));
    if (prop.items) {
      const item = compileProperty(prop.items);
      extra.push((v, p, out) => {
        const arr = v as unknown[];
        for (let i = 0; i < arr.length && out.length < MAX_DETAILS; i += 1) item(arr[i], `${p}[${i}]`, out);
      });
    }
  }
  if (prop.type === 'object' && prop.properties) {
    extra.push(compileFields(prop.properties, prop.additionalProperties !== false));
  }
  if (prop.enum !== undefined) {
    const allowed = new Set(prop.enum);
    const shown = prop.enum.map((e) => JSON.stringify(e)).join(', ');
    extra.push((v, p, out) => !allowed.has(v as never) && push(out, p, 'ENUM', `must be one of ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}`));
  }

  const n = extra.length;
  return (value, path, out) => {
    if (!isType(value)) return push(out, path, 'TYPE', `must be ${article(prop.type)}, not ${typeName(value)}`);
    for (let i = 0; i < n; i += 1) extra[i](value, path, out);
  };
}

const join = (base: string, name: string) => (base ? `${base}.${name}` : name);

function compileFields(properties: Record<string, Property>, additional: boolean): Check {
  // Each field keeps the path it was last checked under (`parent`) and its own (`at`): a field outside
  // an array has one path, so a validation builds no path strings for it.
  const fields = Object.entries(properties).map(([name, prop]) => ({ name, required: prop.required === true, check: compileProperty(prop), parent: '', at: name }));
  const known = new Set(Object.keys(properties));
  return (value, path, out) => {
    const obj = value as Record<string, unknown>;
    for (let i = 0; i < fields.length; i += 1) {
      const f = fields[i];
      const v = Object.prototype.hasOwnProperty.call(obj, f.name) ? obj[f.name] : undefined;
      if (path !== f.parent) {
        f.parent = path;
        f.at = join(path, f.name);
      }
      const at = f.at;
      // Absent and null are the same to a form: a required field must have a value, an optional one may be empty.
      if (v === undefined || v === null) {
        if (f.required) push(out, at, 'REQUIRED', `${at} is required`);
        continue;
      }
      f.check(v, at, out);
    }
    if (!additional) {
      for (const key of Object.keys(obj)) if (!known.has(key)) push(out, join(path, key), 'UNKNOWN_FIELD', 'is not a field of this schema');
    }
  };
}

/** The payload check of a variables-mode gate; no schema accepts any JSON object. */
export function compileObjectSchema(schema: ObjectSchema | null): (payload: unknown) => ValidationDetail[] {
  const fields = schema ? compileFields(schema.properties, schema.additionalProperties !== false) : () => undefined;
  return (payload) => {
    const out: Sink = [];
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      push(out, '$', 'TYPE', `the payload must be a JSON object, not ${typeName(payload)}`);
      return out;
    }
    fields(payload, '', out);
    return out;
  };
}
