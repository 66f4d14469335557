import { COLUMN_FORMATS, type ColumnFormat } from './template.types';
import { DEFAULT_FORMAT_OPTIONS, formatValue, type FormatOptions } from './format';

/**
 * `{{dotted.path}}` placeholders in text props. A placeholder may name a format after a pipe,
 * `{{total | currency}}`. Lookups follow own properties only, so `{{constructor}}` and friends
 * read nothing from prototypes.
 */

const PLACEHOLDER = /\{\{\s*([^{}|]+?)\s*(?:\|\s*([A-Za-z]+)\s*)?\}\}/g;
const SINGLE_PLACEHOLDER = /^\s*\{\{\s*([^{}|]+?)\s*(?:\|\s*([A-Za-z]+)\s*)?\}\}\s*$/;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** `items[0].name` and `items.0.name` both give ['items', '0', 'name']. */
export function parsePath(path: string): string[] {
  return path
    .replace(/\[\s*(\d+)\s*\]/g, '.$1')
    .split('.')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function getPath(scope: unknown, path: string | string[]): unknown {
  const segments = Array.isArray(path) ? path : parsePath(path);
  let current: unknown = scope;
  for (const segment of segments) {
    if (current === null || current === undefined || typeof current !== 'object') return undefined;
    if (Array.isArray(current) && segment === 'length') {
      current = current.length;
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function asFormat(name: string | undefined): ColumnFormat | undefined {
  return name && (COLUMN_FORMATS as readonly string[]).includes(name) ? (name as ColumnFormat) : undefined;
}

/** Placeholders in a text, for validation: `[{path, format}]`. */
export function placeholders(text: string): Array<{ path: string; format?: string }> {
  const found: Array<{ path: string; format?: string }> = [];
  for (const m of text.matchAll(PLACEHOLDER)) found.push({ path: m[1], format: m[2] });
  return found;
}

/** Interpolated plain text (Excel cells, PDF metadata). */
export function interpolateText(text: string, scope: unknown, o: FormatOptions = DEFAULT_FORMAT_OPTIONS): string {
  return text.replace(PLACEHOLDER, (_m, path: string, fmt?: string) => formatValue(getPath(scope, path), asFormat(fmt), o));
}

/**
 * Interpolated HTML: the template's own text and every substituted value are escaped, so markup
 * in either one is shown as text, never parsed.
 */
export function interpolateHtml(text: string, scope: unknown, o: FormatOptions = DEFAULT_FORMAT_OPTIONS): string {
  return escapeHtml(interpolateText(text, scope, o));
}

/**
 * A prop that is exactly one placeholder keeps the value's type and its format (a number stays a
 * number in Excel); anything else becomes interpolated text. Non-string props are returned as is.
 */
export function resolveTyped(
  value: unknown,
  scope: unknown,
  o: FormatOptions = DEFAULT_FORMAT_OPTIONS,
): { value: unknown; format?: ColumnFormat } {
  if (typeof value !== 'string') return { value };
  const single = SINGLE_PLACEHOLDER.exec(value);
  if (single) return { value: getPath(scope, single[1]), format: asFormat(single[2]) };
  return { value: interpolateText(value, scope, o) };
}
