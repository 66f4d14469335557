import { COLUMN_FORMATS, type ColumnFormat } from './template.types';
import { DEFAULT_FORMAT_OPTIONS, formatValue, type FormatOptions } from './format';

/**
 * `{{dotted.path}}` placeholders in text props. A placeholder may name a format after a pipe,
 * `{{total | currency}}`. Lookups follow own properties only, so `{{constructor}}` and friends
 * read nothing from prototypes.
 *
 * Placeholders are found by a small scanner, not a regular expression: text props are tenant
 * input, and the pattern this replaces (`\{\{\s*([^{}|]+?)\s*(?:\|\s*([A-Za-z]+)\s*)?\}\}`)
 * backtracked polynomially (`{{` and 8,000 spaces took minutes). The scanner reads each character
 * a bounded number of times and accepts exactly what that pattern accepted:
 *
 *   `{{` body `}}` or `{{` body `|` ws* format ws* `}}`
 *
 * where body is one or more characters other than `{`, `}` and `|`, the path is the body with
 * surrounding whitespace (`\s`) trimmed (a body of whitespace only gives its last character), and
 * format is ASCII letters. Matches do not overlap and are found left to right.
 */

export interface PlaceholderMatch {
  /** Index of the opening `{{`. */
  start: number;
  /** Index just past the closing `}}`. */
  end: number;
  path: string;
  format?: string;
}

const OPEN = '{{';

/** Exactly the characters of the regular-expression class `\s` (ECMAScript WhiteSpace and LineTerminator). */
export function isRegexSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

const isAsciiLetter = (code: number) => (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);

function skipSpaces(text: string, i: number): number {
  while (i < text.length && isRegexSpace(text.charCodeAt(i))) i += 1;
  return i;
}

/** The placeholder whose `{{` is at `start`, or undefined when none starts there. */
function placeholderAt(text: string, start: number): PlaceholderMatch | undefined {
  if (!text.startsWith(OPEN, start)) return undefined;
  const from = start + OPEN.length;
  // The body runs to the first `{`, `}` or `|`: none of them may appear in it.
  let stop = from;
  while (stop < text.length) {
    const c = text.charCodeAt(stop);
    if (c === 0x7b || c === 0x7d || c === 0x7c) break;
    stop += 1;
  }
  if (stop === from) return undefined;
  const body = text.slice(from, stop);
  const trimmed = body.trim();
  const path = trimmed.length > 0 ? trimmed : body[body.length - 1];
  if (text.startsWith('}}', stop)) return { start, end: stop + 2, path };
  if (text.charCodeAt(stop) !== 0x7c) return undefined;
  const letters = skipSpaces(text, stop + 1);
  let i = letters;
  while (i < text.length && isAsciiLetter(text.charCodeAt(i))) i += 1;
  if (i === letters) return undefined;
  const format = text.slice(letters, i);
  i = skipSpaces(text, i);
  return text.startsWith('}}', i) ? { start, end: i + 2, path, format } : undefined;
}

/** Every placeholder of a text, left to right, not overlapping (what a global match of the old pattern found). */
export function scanPlaceholders(text: string): PlaceholderMatch[] {
  const found: PlaceholderMatch[] = [];
  let at = text.indexOf(OPEN);
  while (at >= 0) {
    const m = placeholderAt(text, at);
    if (m) found.push(m);
    at = text.indexOf(OPEN, m ? m.end : at + 1);
  }
  return found;
}

/** The placeholder when `text` is exactly one, with optional whitespace around it. */
export function singlePlaceholder(text: string): PlaceholderMatch | undefined {
  const m = placeholderAt(text, skipSpaces(text, 0));
  return m && skipSpaces(text, m.end) === text.length ? m : undefined;
}

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

/**
 * `items[0].name` and `items.0.name` both give ['items', '0', 'name']. The index pattern is
 * linear: `[`, spaces, digits, spaces, `]` are disjoint classes, so no two repetitions compete.
 */
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
  return scanPlaceholders(text).map(({ path, format }) => ({ path, format }));
}

/**
 * Interpolated plain text (Excel cells, PDF metadata). `escapeValue` treats each substituted value
 * (not the template's text): a markdown or HTML component's data prints as text, never as markup.
 */
export function interpolateText(text: string, scope: unknown, o: FormatOptions = DEFAULT_FORMAT_OPTIONS, escapeValue?: (value: string) => string): string {
  let out = '';
  let copied = 0;
  for (const m of scanPlaceholders(text)) {
    const value = formatValue(getPath(scope, m.path), asFormat(m.format), o);
    out += text.slice(copied, m.start) + (escapeValue ? escapeValue(value) : value);
    copied = m.end;
  }
  return copied === 0 ? text : out + text.slice(copied);
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
  const single = singlePlaceholder(value);
  if (single) return { value: getPath(scope, single.path), format: asFormat(single.format) };
  return { value: interpolateText(value, scope, o) };
}
