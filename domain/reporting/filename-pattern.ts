/**
 * A report's `filenamePattern` (docs/reporting.md "Reports"): the name its output files
 * get, without the extension. Tokens: `{slug}`, `{name}`, `{runShortId}`,
 * `{scheduledFor:<yyyy, MM, dd, HH, mm and the separators - _ .>}` (in the run's zone) and
 * `{param.<name>}` (a report parameter). The result keeps only `[A-Za-z0-9._-]`, at most 120
 * characters. Pure: the run's time, zone and values come in.
 */

export const DEFAULT_FILENAME_PATTERN = '{slug}-{scheduledFor:yyyy-MM-dd}';
const MAX_PATTERN_LENGTH = 200;
const MAX_FILENAME_LENGTH = 120;

export type PatternPart =
  | { kind: 'text'; text: string }
  | { kind: 'slug' | 'name' | 'runShortId' }
  | { kind: 'scheduledFor'; format: string }
  | { kind: 'param'; name: string };

export interface PatternIssue {
  path: string;
  message: string;
}

const DATE_FORMAT = /^(?:yyyy|MM|dd|HH|mm|[-_.])+$/;
const DATE_FIELD = /yyyy|MM|dd|HH|mm/g;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The parts of a pattern, or the first thing wrong with it. */
export function parseFilenamePattern(pattern: string): { parts: PatternPart[] } | { error: string } {
  if (pattern.length === 0) return { error: 'The pattern is empty' };
  if (pattern.length > MAX_PATTERN_LENGTH) return { error: `At most ${MAX_PATTERN_LENGTH} characters` };
  const parts: PatternPart[] = [];
  let i = 0;
  while (i < pattern.length) {
    const open = pattern.indexOf('{', i);
    const close = pattern.indexOf('}', i);
    if (close !== -1 && (open === -1 || close < open)) return { error: `'}' at ${close + 1} closes no token` };
    if (open === -1) {
      parts.push({ kind: 'text', text: pattern.slice(i) });
      break;
    }
    if (open > i) parts.push({ kind: 'text', text: pattern.slice(i, open) });
    const end = pattern.indexOf('}', open);
    if (end === -1) return { error: `'{' at ${open + 1} is not closed` };
    const token = pattern.slice(open + 1, end);
    if (token.includes('{')) return { error: `'{' at ${open + 1} is not closed` };
    const part = tokenPart(token);
    if ('error' in part) return part;
    parts.push(part);
    i = end + 1;
  }
  return { parts };
}

function tokenPart(token: string): PatternPart | { error: string } {
  if (token === 'slug' || token === 'name' || token === 'runShortId') return { kind: token };
  if (token.startsWith('scheduledFor:')) {
    const format = token.slice('scheduledFor:'.length);
    if (!DATE_FORMAT.test(format)) return { error: `{${token}}: a date pattern is made of yyyy, MM, dd, HH, mm and the separators - _ .` };
    return { kind: 'scheduledFor', format };
  }
  if (token === 'scheduledFor') return { error: '{scheduledFor} needs a date pattern, e.g. {scheduledFor:yyyy-MM-dd}' };
  if (token.startsWith('param.')) {
    const name = token.slice('param.'.length);
    if (!PARAM_NAME.test(name)) return { error: `{${token.slice(0, 80)}}: a parameter name is an identifier` };
    return { kind: 'param', name };
  }
  return { error: `Unknown token {${token.slice(0, 80)}}: use {slug}, {name}, {runShortId}, {scheduledFor:yyyy-MM-dd} or {param.<name>}` };
}

/** Problems of a pattern for a report whose parameters are `parameterNames` (ERR_RPT_005 items). */
export function checkFilenamePattern(pattern: string, parameterNames: readonly string[], path = 'filenamePattern'): PatternIssue[] {
  const parsed = parseFilenamePattern(pattern);
  if ('error' in parsed) return [{ path, message: parsed.error }];
  return parsed.parts.flatMap((p) => (p.kind === 'param' && !parameterNames.includes(p.name) ? [{ path, message: `{param.${p.name}} names no parameter of the report` }] : []));
}

export interface FilenameValues {
  slug: string;
  name: string;
  runShortId: string;
  scheduledFor: Date;
  /** IANA zone `{scheduledFor:…}` is written in. */
  timezone: string;
  params: Record<string, unknown>;
}

/** `yyyy`, `MM`, `dd`, `HH`, `mm` of `at` in `timezone`. */
function dateFields(at: Date, timezone: string): Record<string, string> {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return { yyyy: get('year').padStart(4, '0'), MM: get('month'), dd: get('day'), HH: get('hour'), mm: get('minute') };
}

function paramText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(paramText).join(',');
  if (typeof value === 'object') return '';
  return String(value);
}

/**
 * Keeps `[A-Za-z0-9._-]`: accents are dropped from their letters, every other run of characters
 * becomes one `-`; no leading dot or dash (no hidden files, no option-like names); at most 120
 * characters; `report` when nothing is left.
 */
export function sanitizeFilename(raw: string): string {
  const ascii = raw.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const cleaned = ascii
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, MAX_FILENAME_LENGTH)
    .replace(/[.-]+$/, '');
  return cleaned.length > 0 ? cleaned : 'report';
}

/** The file name (without extension) a pattern gives for one run. Throws on a pattern that does not parse. */
export function renderFilename(pattern: string, values: FilenameValues): string {
  const parsed = parseFilenamePattern(pattern);
  if ('error' in parsed) throw new Error(`Invalid filename pattern: ${parsed.error}`);
  let fields: Record<string, string> | undefined;
  const out = parsed.parts.map((p) => {
    switch (p.kind) {
      case 'text':
        return p.text;
      case 'slug':
      case 'name':
      case 'runShortId':
        return values[p.kind];
      case 'scheduledFor': {
        fields ??= dateFields(values.scheduledFor, values.timezone);
        const f = fields;
        return p.format.replace(DATE_FIELD, (k) => f[k] ?? '');
      }
      case 'param':
        return paramText(values.params[p.name]);
    }
  });
  return sanitizeFilename(out.join(''));
}
