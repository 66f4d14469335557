import { AppError } from '../errors';
import { FORMAT_CHECKS } from '../flow/formats';
import { normalizeTimeZone } from '../identity/time-zones';

/**
 * Query and report parameters (docs/reporting.md "Query text"): their definitions and
 * the coercion of a run's input into typed values. Pure: the run's clock and zone come in as options.
 */

export type ParameterType = 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'datetime';

export interface ParameterDef {
  /** An identifier: `{{ name }}` in the query text. */
  name: string;
  type: ParameterType;
  label?: string;
  required?: boolean;
  default?: unknown;
  /** The value is a list; `{{ name }}` expands to one bind parameter per item. */
  multiple?: boolean;
  /** The only values allowed. */
  options?: unknown[];
}

/** A coerced value: `date` stays `YYYY-MM-DD`, `datetime` becomes a Date; null when absent. */
export type ParameterScalar = string | number | boolean | Date;
export type ParameterValue = ParameterScalar | ParameterScalar[] | null;

export interface ParameterIssue {
  path: string;
  code: 'INVALID_PARAMETER';
  message: string;
}

const PARAMETER_TYPES: readonly ParameterType[] = ['string', 'number', 'integer', 'boolean', 'date', 'datetime'];
const MAX_PARAMETERS = 50;
/** Items of one `multiple` value: each is one bind parameter. */
const MAX_LIST_VALUES = 1000;
/** Names every query and report knows without defining them, valued from the run. */
export const BUILT_IN_PARAMETERS: readonly string[] = ['now', 'today', 'scheduledFor'];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function isParameterName(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** Why `raw` is not a value of `type`, or the coerced value. */
function coerceScalar(type: ParameterType, raw: unknown): { value: ParameterScalar } | { expected: string } {
  switch (type) {
    case 'string':
      return typeof raw === 'string' ? { value: raw } : { expected: 'a string' };
    case 'number':
    case 'integer': {
      let n: number | undefined;
      if (typeof raw === 'number') n = raw;
      else if (typeof raw === 'string' && raw.length <= 100 && DECIMAL.test(raw.trim())) n = Number(raw.trim());
      if (n === undefined || !Number.isFinite(n)) return { expected: type === 'integer' ? 'an integer' : 'a number' };
      if (type === 'integer' && !Number.isSafeInteger(n)) return { expected: 'an integer' };
      return { value: n };
    }
    case 'boolean':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
      return { expected: 'a boolean' };
    case 'date':
      return typeof raw === 'string' && FORMAT_CHECKS.date(raw) ? { value: raw } : { expected: 'a date (YYYY-MM-DD)' };
    case 'datetime': {
      if (typeof raw !== 'string' || !FORMAT_CHECKS['date-time'](raw)) return { expected: 'a date-time with a time zone (RFC 3339)' };
      const d = new Date(raw);
      return Number.isNaN(d.getTime()) ? { expected: 'a date-time with a time zone (RFC 3339)' } : { value: d };
    }
  }
}

/** What two values compare by when checking `options`. */
function sameValue(a: ParameterScalar, b: ParameterScalar): boolean {
  return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
}

function badValue(field: string, message: string, expected?: string): AppError {
  return new AppError('ERR_RPT_007', message, expected ? { field, expected } : { field });
}

/** One value of a definition (not the list of a `multiple`), checked against its options. */
function coerceOne(def: ParameterDef, raw: unknown, field: string): ParameterScalar {
  const r = coerceScalar(def.type, raw);
  if ('expected' in r) throw badValue(field, `Parameter '${field}' must be ${r.expected}`, r.expected);
  if (def.options) {
    const allowed = def.options.map((o) => coerceScalar(def.type, o));
    if (!allowed.some((o) => 'value' in o && sameValue(o.value, r.value))) {
      throw badValue(field, `Parameter '${field}' must be one of its options`);
    }
  }
  return r.value;
}

function coerceDefined(def: ParameterDef, raw: unknown): ParameterValue {
  if (!def.multiple) return coerceOne(def, raw, def.name);
  if (!Array.isArray(raw)) throw badValue(def.name, `Parameter '${def.name}' must be a list`, 'a list');
  if (raw.length > MAX_LIST_VALUES) throw badValue(def.name, `Parameter '${def.name}' has more than ${MAX_LIST_VALUES} values`);
  return raw.map((item, i) => coerceOne(def, item, `${def.name}[${i}]`));
}

/**
 * Problems of a list of parameter definitions (for ERR_QRY_002 / ERR_RPT_005 at save time): at most 50,
 * names unique identifiers other than the built-ins, a known type, options and default of that type.
 */
export function checkParameterDefs(defs: readonly ParameterDef[], path = 'parameters'): ParameterIssue[] {
  const issues: ParameterIssue[] = [];
  const issue = (p: string, message: string) => issues.push({ path: p, code: 'INVALID_PARAMETER', message });
  if (defs.length > MAX_PARAMETERS) issue(path, `At most ${MAX_PARAMETERS} parameters`);
  const seen = new Set<string>();
  defs.forEach((def, i) => {
    const at = `${path}[${i}]`;
    if (typeof def.name !== 'string' || !isParameterName(def.name)) {
      issue(`${at}.name`, 'A parameter name is an identifier (letters, digits, _; not starting with a digit)');
    } else if (BUILT_IN_PARAMETERS.includes(def.name)) {
      issue(`${at}.name`, `'${def.name}' is a built-in parameter`);
    } else if (seen.has(def.name)) {
      issue(`${at}.name`, `Parameter '${def.name}' is defined twice`);
    }
    seen.add(def.name);
    if (!PARAMETER_TYPES.includes(def.type)) {
      issue(`${at}.type`, `A parameter type is one of ${PARAMETER_TYPES.join(', ')}`);
      return;
    }
    def.options?.forEach((o, j) => {
      const r = coerceScalar(def.type, o);
      if ('expected' in r) issue(`${at}.options[${j}]`, `An option must be ${r.expected}`);
    });
    if (def.default !== undefined && def.default !== null) {
      try {
        coerceDefined(def, def.default);
      } catch (err) {
        issue(`${at}.default`, err instanceof Error ? err.message : String(err));
      }
    }
  });
  return issues;
}

export interface CoerceOptions {
  /** The run's clock: `now`, and `today` in `timezone`. */
  now: Date;
  /** IANA zone of the run (the report's or schedule's). */
  timezone: string;
  /** The occurrence a scheduled run stands for; `now` otherwise. */
  scheduledFor?: Date;
}

/** `YYYY-MM-DD` of an instant in a zone. */
function calendarDate(at: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/**
 * A run's input as typed values, keyed by name, with the built-ins `now`, `today` and `scheduledFor`
 * added. Absent or null values take the default, then fail when required, else stay null. Unknown
 * names, built-in names and bad values: ERR_RPT_007 with `relatedInfo.field`.
 */
export function coerceParameters(
  defs: readonly ParameterDef[],
  input: Readonly<Record<string, unknown>>,
  options: CoerceOptions,
): Record<string, ParameterValue> {
  const zone = normalizeTimeZone(options.timezone);
  if (!zone) throw badValue('timezone', `Unknown time zone '${options.timezone}'`);
  const known = new Set(defs.map((d) => d.name));
  for (const key of Object.keys(input)) {
    if (!known.has(key)) throw badValue(key, `Unknown parameter '${key}'`);
  }
  const values: Record<string, ParameterValue> = {};
  for (const def of defs) {
    let raw = Object.prototype.hasOwnProperty.call(input, def.name) ? input[def.name] : undefined;
    if (raw === undefined || raw === null) raw = def.default ?? null;
    if (raw === null || (def.multiple && Array.isArray(raw) && raw.length === 0)) {
      if (def.required) throw badValue(def.name, `Parameter '${def.name}' is required`);
      values[def.name] = def.multiple && raw !== null ? [] : null;
      continue;
    }
    values[def.name] = coerceDefined(def, raw);
  }
  values.now = options.now;
  values.today = calendarDate(options.now, zone);
  values.scheduledFor = options.scheduledFor ?? options.now;
  return values;
}

const REPORT_PARAMETER_REF = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

/**
 * A report dataset's query input: each mapped query parameter takes the report's value when it is
 * written `"{{reportParam}}"` (built-ins included), else the literal; instants as ISO 8601 text, for
 * the query's own coerceParameters.
 */
export function datasetQueryInput(mapping: Readonly<Record<string, unknown>>, reportValues: Readonly<Record<string, ParameterValue>>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(mapping)) {
    const ref = typeof given === 'string' ? REPORT_PARAMETER_REF.exec(given) : null;
    const value = ref ? reportValues[ref[1]] : given;
    input[name] = value instanceof Date ? value.toISOString() : value;
  }
  return input;
}
