import type { CompiledHttpRequest } from '@formwork/wire';
import { AppError } from '../errors';
import { jsonataProblems } from '../user-regex';
import { BUILT_IN_PARAMETERS, type ParameterDef, type ParameterValue } from './parameters';

/**
 * The `http` query language of `http_json` datasources (docs/reporting.md "http_json"): a request spec whose
 * `{{param}}` placeholders are substituted as values, never as URL structure: URL-encoded inside a path segment, as
 * query values, as JSON string values of the body. Pure functions: the API and the report run call them in the
 * evaluation workers (domain/checks.ts).
 */

export interface HttpRequestSpec {
  method: 'GET' | 'POST';
  /** Starts with `/`; appended to the datasource's `baseUrl`. No `?` or `#`: the query goes in `query`. */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  /** JSONata over the response body giving the rows (default: the body, when it is an array). */
  rowsPath?: string;
}

export interface HttpIssue {
  path: string;
  code: string;
  message: string;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const ANY_BRACES = /\{\{|\}\}/;
/** Header names the client sets itself, or that would change how the request is framed. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'expect', 'keep-alive', 'proxy-authorization']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const MAX_TRANSFORM = 20_000;
const MAX_PATH = 2000;

/** Names of the placeholders in a string, and whether every `{{`/`}}` belongs to one. */
function placeholders(text: string): { names: string[]; malformed: boolean } {
  const names = [...text.matchAll(PLACEHOLDER)].map((m) => m[1]);
  return { names, malformed: ANY_BRACES.test(text.replace(PLACEHOLDER, '')) };
}

/** The names of a request's placeholders (path, query, header and body values), each once, in order (POST /queries/validate). */
export function requestPlaceholderNames(request: HttpRequestSpec | null): string[] {
  if (!request) return [];
  const names: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > 20) return;
    if (typeof value === 'string') names.push(...placeholders(value).names);
    else if (Array.isArray(value)) value.forEach((v) => visit(v, depth + 1));
    else if (value && typeof value === 'object') Object.values(value).forEach((v) => visit(v, depth + 1));
  };
  visit(request.path, 0);
  visit(request.query ?? {}, 0);
  visit(request.headers ?? {}, 0);
  visit(request.body, 0);
  return [...new Set(names)];
}

function checkTemplate(text: string, at: string, known: Set<string>, issues: HttpIssue[]): void {
  const { names, malformed } = placeholders(text);
  if (malformed) issues.push({ path: at, code: 'INVALID_PLACEHOLDER', message: '`{{` must be followed by a parameter name and `}}`' });
  for (const name of names) {
    if (!known.has(name)) issues.push({ path: at, code: 'UNKNOWN_PARAMETER', message: `'{{${name}}}' names no parameter of the query and no built-in` });
  }
}

function checkBody(value: unknown, at: string, known: Set<string>, issues: HttpIssue[], depth = 0): void {
  if (depth > 20) {
    issues.push({ path: at, code: 'INVALID_REQUEST', message: 'body is nested more than 20 levels' });
    return;
  }
  if (typeof value === 'string') checkTemplate(value, at, known, issues);
  else if (Array.isArray(value)) value.forEach((v, i) => checkBody(v, `${at}[${i}]`, known, issues, depth + 1));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (ANY_BRACES.test(k)) issues.push({ path: `${at}.${k}`, code: 'PLACEHOLDER_NOT_ALLOWED', message: 'placeholders are allowed in body values only, not in keys' });
      checkBody(v, `${at}.${k}`, known, issues, depth + 1);
    }
  }
}

/** Every problem of a request spec and transform (save time); the body's shape is Joi's (api/reporting/queries.schema.ts). */
export function checkHttpRequest(request: HttpRequestSpec | null | undefined, transform: string | null | undefined, parameters: readonly ParameterDef[]): HttpIssue[] {
  const issues: HttpIssue[] = [];
  if (!request) return [{ path: 'request', code: 'REQUEST_REQUIRED', message: "language 'http' needs a request" }];
  const known = new Set([...parameters.map((p) => p.name), ...BUILT_IN_PARAMETERS]);
  if (request.method !== 'GET' && request.method !== 'POST') issues.push({ path: 'request.method', code: 'INVALID_REQUEST', message: 'method must be GET or POST' });
  const path = request.path ?? '';
  if (!path.startsWith('/') || path.length > MAX_PATH) issues.push({ path: 'request.path', code: 'INVALID_REQUEST', message: `path must start with / (at most ${MAX_PATH} characters)` });
  if (/[?#\\\s]/.test(path.replace(PLACEHOLDER, ''))) issues.push({ path: 'request.path', code: 'INVALID_REQUEST', message: 'path may not hold ?, #, \\ or spaces: put query values in request.query' });
  checkTemplate(path, 'request.path', known, issues);
  for (const [k, v] of Object.entries(request.query ?? {})) {
    if (ANY_BRACES.test(k)) issues.push({ path: `request.query.${k}`, code: 'PLACEHOLDER_NOT_ALLOWED', message: 'placeholders are allowed in query values only, not in names' });
    checkTemplate(String(v), `request.query.${k}`, known, issues);
  }
  for (const [k, v] of Object.entries(request.headers ?? {})) {
    if (!HEADER_NAME.test(k) || RESERVED_HEADERS.has(k.toLowerCase())) issues.push({ path: `request.headers.${k}`, code: 'INVALID_REQUEST', message: `header '${k}' may not be set` });
    if (ANY_BRACES.test(String(v))) issues.push({ path: `request.headers.${k}`, code: 'PLACEHOLDER_NOT_ALLOWED', message: 'placeholders are allowed in the path, query values and body only' });
    if (/[\r\n\0]/.test(String(v))) issues.push({ path: `request.headers.${k}`, code: 'INVALID_REQUEST', message: 'header values may not hold line breaks' });
  }
  if (request.body !== undefined && request.method === 'GET') issues.push({ path: 'request.body', code: 'INVALID_REQUEST', message: 'a GET request has no body' });
  if (request.body !== undefined) checkBody(request.body, 'request.body', known, issues);
  if (request.rowsPath !== undefined) {
    for (const p of jsonataProblems(request.rowsPath)) issues.push({ path: 'request.rowsPath', code: 'INVALID_EXPRESSION', message: `JSONata ${p}` });
  }
  issues.push(...checkTransform(transform));
  return issues;
}

/** An optional `transform` (http and table): JSONata over `{rows, params}`. */
export function checkTransform(transform: string | null | undefined): HttpIssue[] {
  if (transform === undefined || transform === null) return [];
  if (transform.length > MAX_TRANSFORM) return [{ path: 'transform', code: 'TEXT_TOO_LONG', message: `transform is longer than ${MAX_TRANSFORM} characters` }];
  return jsonataProblems(transform).map((p) => ({ path: 'transform', code: 'INVALID_EXPRESSION', message: `JSONata ${p}` }));
}

type Values = Readonly<Record<string, ParameterValue | undefined>>;

const isoOf = (v: Date) => (Number.isNaN(v.getTime()) ? '' : v.toISOString());

/** The values as a transform sees them (`params`): JSON, instants as ISO 8601. */
export function jsonParams(values: Values): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) params[k] = jsonOf(v);
  return params;
}

/** A value as JSON: instants become ISO 8601. */
function jsonOf(value: ParameterValue | undefined): unknown {
  if (value === undefined) return null;
  if (value instanceof Date) return isoOf(value);
  if (Array.isArray(value)) return value.map((v) => jsonOf(v));
  return value;
}

/** A value as text: lists joined with `,`, null as the empty string. */
function textOf(value: ParameterValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map((v) => textOf(v)).join(',');
  if (value instanceof Date) return isoOf(value);
  return String(value);
}

const valueOf = (values: Values, name: string) => (Object.prototype.hasOwnProperty.call(values, name) ? values[name] : undefined);

function substitute(text: string, values: Values, encode: (s: string) => string): string {
  return text.replace(PLACEHOLDER, (_m, name: string) => encode(textOf(valueOf(values, name))));
}

/** A body string that is exactly one placeholder takes the value as JSON (a number stays a number); others are text. */
function substituteBody(value: unknown, values: Values): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(value);
    if (whole) return jsonOf(valueOf(values, whole[1]));
    return substitute(value, values, (s) => s);
  }
  if (Array.isArray(value)) return value.map((v) => substituteBody(v, values));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteBody(v, values)]));
  return value;
}

/**
 * The request to send: placeholders replaced by the values (coerceParameters' output). In the path
 * each value is URL-encoded (`/`, `?`, `#`, `%` included), and a segment that would become `.` or `..`
 * is refused (ERR_RPT_007), so a value never moves the request to another path. A query value that
 * is exactly one `multiple` placeholder repeats the name once per value.
 */
export function compileHttpRequest(request: HttpRequestSpec, transform: string | null | undefined, parameters: readonly ParameterDef[], values: Values): CompiledHttpRequest {
  const issues = checkHttpRequest(request, transform, parameters);
  if (issues.length > 0) throw new AppError('ERR_QRY_002', undefined, { errors: issues });
  const encodeSegment = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const segments = request.path.split('/').map((segment) => {
    if (!placeholders(segment).names.length) return segment;
    const out = substitute(segment, values, encodeSegment);
    if (/^(\.|%2e){1,2}$/i.test(out)) {
      const name = placeholders(segment).names[0];
      throw new AppError('ERR_RPT_007', `Parameter '${name}' would make the path segment '${out}'`, { field: name });
    }
    return out;
  });
  const query: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(request.query ?? {})) {
    const whole = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(v);
    const value = whole ? valueOf(values, whole[1]) : undefined;
    if (whole && Array.isArray(value)) for (const item of value) query.push([k, textOf(item)]);
    else query.push([k, substitute(v, values, (s) => s)]);
  }
  const params = jsonParams(values);
  return {
    method: request.method,
    path: segments.join('/'),
    query,
    headers: { ...request.headers },
    ...(request.body !== undefined ? { body: substituteBody(request.body, values) } : {}),
    ...(request.rowsPath !== undefined ? { rowsPath: request.rowsPath } : {}),
    ...(transform ? { transform } : {}),
    params,
  };
}

export type { CompiledHttpRequest };
