import type { ParameterDef, ParameterType } from '../parameters';

/**
 * What the import parsers (Metabase, Redash, JRXML; docs/reporting.md "Imports") make of a model file: one item per
 * question, query or report, each with the query object it becomes or the reason it cannot. Pure
 * data: the service (api/reporting/imports.service.ts) resolves datasources and creates the drafts.
 */

export type ImportFormat = 'metabase' | 'redash' | 'jrxml';
export type ImportSourceType = 'card' | 'query' | 'jrxml';

export interface ImportWarning {
  code: string;
  message: string;
  path: string;
}

/** A column a run's result must have (the query entity's ExpectedColumn). */
export interface ExpectedColumn {
  name: string;
  type?: string;
}

export interface ImportedQuery {
  name: string;
  description: string | null;
  text: string;
  parameters: ParameterDef[];
  expectedColumns: ExpectedColumn[] | null;
}

export interface ParsedItem {
  source: { type: ImportSourceType; name: string; ref: string | null };
  /** `ok`: `query` is ready for the query service; otherwise `warnings` say why not. */
  outcome: 'ok' | 'needs_attention' | 'unsupported';
  query?: ImportedQuery;
  /** The source's database (Metabase database name or id, Redash data_source_id), looked up in `datasourceMap`. */
  datasourceRef: string | null;
  suggestedSchedule?: { cron: string; timezone: 'UTC' };
  warnings: ImportWarning[];
}

/**
 * The bounds every parser keeps (docs/reporting.md "Limits"): beyond them an item needs attention instead of growing.
 */
export const IMPORT_LIMITS = {
  items: 500,
  /** More than the 50 a query may have, so the query checks name the problem. */
  parameters: 100,
  name: 100,
  description: 1000,
  text: 100_000,
  label: 200,
  options: 1000,
  columns: 500,
} as const;

export class ImportParseError extends Error {
  constructor(readonly errors: Array<{ path: string; message: string }>) {
    super(errors.map((e) => `${e.path}: ${e.message}`).join('; '));
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

/** A name within its bound (a longer one is cut, with a warning). */
export function boundedName(raw: unknown, fallback: string, warnings: ImportWarning[], path: string): string {
  const name = (str(raw) ?? '').trim() || fallback;
  if (name.length <= IMPORT_LIMITS.name) return name;
  warnings.push({ code: 'NAME_SHORTENED', message: `the name was cut to ${IMPORT_LIMITS.name} characters`, path });
  return name.slice(0, IMPORT_LIMITS.name).trim();
}

export function boundedDescription(raw: unknown, warnings: ImportWarning[], path: string): string | null {
  const d = (str(raw) ?? '').trim();
  if (!d) return null;
  if (d.length <= IMPORT_LIMITS.description) return d;
  warnings.push({ code: 'DESCRIPTION_SHORTENED', message: `the description was cut to ${IMPORT_LIMITS.description} characters`, path });
  return d.slice(0, IMPORT_LIMITS.description);
}

export function boundedLabel(raw: unknown): string | undefined {
  const l = str(raw)?.trim();
  return l ? l.slice(0, IMPORT_LIMITS.label) : undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A legal parameter name for `raw` (letters, digits, `_`; not starting with a digit; ≤ 63). */
export function parameterName(raw: string): string {
  if (IDENTIFIER.test(raw)) return raw;
  let name = raw.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 63);
  if (!/^[A-Za-z_]/.test(name)) name = `p_${name}`.slice(0, 63);
  return name;
}

/** A literal default of the parameter's type, or undefined (never evaluated). */
export function literalDefault(type: ParameterType, raw: unknown): unknown {
  if (raw === null || raw === undefined || raw === '') return undefined;
  switch (type) {
    case 'string':
      return typeof raw === 'string' && raw.length <= 1000 ? raw : undefined;
    case 'number':
    case 'integer': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.length <= 50 && /^[+-]?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isFinite(n) || (type === 'integer' && !Number.isSafeInteger(n))) return undefined;
      return n;
    }
    case 'boolean':
      return typeof raw === 'boolean' ? raw : raw === 'true' ? true : raw === 'false' ? false : undefined;
    case 'date':
      return typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(raw) ? raw : undefined;
    case 'datetime':
      return typeof raw === 'string' && raw.length <= 40 && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw) ? raw : undefined;
  }
}

export function attention(code: string, message: string, path: string): ImportWarning {
  return { code, message, path };
}
