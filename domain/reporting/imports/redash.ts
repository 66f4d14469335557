import type { ParameterDef, ParameterType } from '../parameters';
import { attention, boundedDescription, boundedLabel, boundedName, IMPORT_LIMITS, type ImportWarning, isRecord, literalDefault, parameterName, type ParsedItem, str } from './model';

/**
 * Redash queries (docs/reporting.md "Imports"): one query, a list, or the API's `{results: […]}`. `{{ name }}`
 * becomes `{{name}}` and quotes around a placeholder go (values are bound); a `date-range`
 * parameter `r` becomes two parameters `r_start` and `r_end` (`{{ r.start }}` → `{{r_start}}`: a
 * parameter name is an identifier, so not `r.start`); a `schedule` is only suggested.
 */

const TYPES: Record<string, ParameterType> = {
  text: 'string',
  number: 'number',
  date: 'date',
  'datetime-local': 'datetime',
  'datetime-with-seconds': 'datetime',
  enum: 'string',
  query: 'string',
};
const RANGES: Record<string, ParameterType> = { 'date-range': 'date', 'datetime-range': 'datetime', 'datetime-range-with-seconds': 'datetime' };

/** Whether `doc` looks like a Redash query, list of queries or `{results}` page. */
export function isRedashDocument(doc: unknown): boolean {
  const one = (d: unknown) => isRecord(d) && typeof d.query === 'string' && 'data_source_id' in d;
  if (Array.isArray(doc)) return doc.length > 0 && doc.every(one);
  if (isRecord(doc) && Array.isArray(doc.results)) return doc.results.length > 0 && doc.results.every(one);
  return one(doc);
}

/** A Redash `{{ name }}` placeholder, optionally in single quotes: the name may hold spaces and dots. */
const PLACEHOLDER = /('?)\{\{\s*([^{}]{1,200}?)\s*\}\}('?)/g;

/** A YAML query of the JSON/URL runners (not SQL). */
const NON_SQL = /^\s*(url|fields|path|method|query|collection|aggregate|json)\s*:/m;

/** Redash `schedule` ({interval seconds, time HH:MM UTC, day_of_week} or the old seconds string) as cron. */
export function scheduleCron(schedule: unknown): string | null {
  let interval: number | null = null;
  let time: string | null = null;
  let day: string | null = null;
  if (isRecord(schedule)) {
    interval = Number(schedule.interval);
    time = str(schedule.time);
    day = str(schedule.day_of_week);
  } else if (typeof schedule === 'string' || typeof schedule === 'number') {
    interval = Number(schedule);
  }
  if (!interval || !Number.isSafeInteger(interval) || interval <= 0) return null;
  const [hh, mm] = time && /^\d{1,2}:\d{2}$/.test(time) ? time.split(':').map(Number) : [0, 0];
  if (hh > 23 || mm > 59) return null;
  if (interval < 3600) return interval % 60 === 0 ? `*/${Math.max(5, interval / 60)} * * * *` : null;
  if (interval < 86400) return interval % 3600 === 0 ? `0 */${interval / 3600} * * *` : null;
  if (interval === 604800) {
    const days = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
    const dow = day ? days.indexOf(day.toLowerCase()) : -1;
    return `${mm} ${hh} * * ${dow >= 0 ? dow : 1}`;
  }
  if (interval % 86400 === 0) return interval === 86400 ? `${mm} ${hh} * * *` : `${mm} ${hh} */${interval / 86400} * *`;
  return null;
}

function query(doc: Record<string, unknown>, path: string): ParsedItem {
  const warnings: ImportWarning[] = [];
  const name = boundedName(doc.name, 'Redash query', warnings, `${path}.name`);
  const datasourceRef = str(doc.data_source_id);
  const item = (outcome: ParsedItem['outcome'], extra: Partial<ParsedItem> = {}): ParsedItem => ({ source: { type: 'query', name, ref: str(doc.id) }, outcome, datasourceRef, warnings, ...extra });
  const sql = typeof doc.query === 'string' ? doc.query : '';
  if (sql.length > IMPORT_LIMITS.text) {
    warnings.push(attention('TEXT_TOO_LONG', `the query is longer than ${IMPORT_LIMITS.text} characters`, `${path}.query`));
    return item('needs_attention');
  }
  if (NON_SQL.test(sql.split('\n', 1)[0] ?? '')) {
    warnings.push(attention('NOT_SQL', 'a YAML query of a JSON or URL data source is not converted', `${path}.query`));
    return item('unsupported');
  }
  const options = isRecord(doc.options) ? doc.options : {};
  const given = Array.isArray(options.parameters) ? options.parameters : [];
  if (given.length > IMPORT_LIMITS.parameters) {
    warnings.push(attention('TOO_MANY_PARAMETERS', `more than ${IMPORT_LIMITS.parameters} parameters`, `${path}.options.parameters`));
    return item('needs_attention');
  }
  const parameters: ParameterDef[] = [];
  /** Redash placeholder name → ours. */
  const renamed = new Map<string, string>();
  given.forEach((p, i) => {
    const at = `${path}.options.parameters[${i}]`;
    if (!isRecord(p) || !str(p.name)) return;
    const source = str(p.name)!.slice(0, 200);
    const type = str(p.type) ?? 'text';
    const label = boundedLabel(p.title);
    const base = parameterName(source);
    if (base !== source) warnings.push(attention('PARAMETER_RENAMED', `'${source}' became '${base}' (a parameter name is an identifier)`, at));
    const range = RANGES[type];
    if (range) {
      const value = isRecord(p.value) ? p.value : {};
      for (const end of ['start', 'end'] as const) {
        const def: ParameterDef = { name: `${base}_${end}`.slice(0, 63), type: range, required: true };
        if (label) def.label = `${label} (${end})`.slice(0, IMPORT_LIMITS.label);
        const dflt = literalDefault(range, value[end]);
        if (dflt !== undefined) def.default = dflt;
        renamed.set(`${source}.${end}`, def.name);
        parameters.push(def);
      }
      if (typeof p.value === 'string') warnings.push(attention('DYNAMIC_DEFAULT', `the relative default '${p.value.slice(0, 50)}' was dropped`, at));
      return;
    }
    const ours = TYPES[type];
    if (!ours) {
      warnings.push(attention('UNKNOWN_PARAMETER_TYPE', `'${source}' has type '${type.slice(0, 50)}': made a string`, at));
    }
    const def: ParameterDef = { name: base, type: ours ?? 'string', required: true };
    if (label) def.label = label;
    if (type === 'query') warnings.push(attention('QUERY_PARAMETER', `'${source}' took its values from another query: it is a plain string now`, at));
    if (type === 'enum') {
      const opts = (str(p.enumOptions) ?? '').split('\n').map((o) => o.trim()).filter(Boolean);
      if (opts.length > IMPORT_LIMITS.options) warnings.push(attention('TOO_MANY_OPTIONS', `only the first ${IMPORT_LIMITS.options} options were kept`, at));
      if (opts.length > 0) def.options = opts.slice(0, IMPORT_LIMITS.options);
    }
    if ((type === 'enum' || type === 'query') && isRecord(p.multiValuesOptions)) def.multiple = true;
    const dflt = def.multiple ? undefined : literalDefault(def.type, Array.isArray(p.value) ? p.value[0] : p.value);
    if (dflt !== undefined) def.default = dflt;
    renamed.set(source, base);
    parameters.push(def);
  });
  let unknown: string | null = null;
  const text = sql.replace(PLACEHOLDER, (_all, open: string, inner: string, close: string) => {
    const ours = renamed.get(inner.trim());
    if (!ours) {
      unknown ??= inner.trim().slice(0, 100);
      return _all;
    }
    // '{{ x }}' → {{x}}: the value is bound, so its quotes go; a lone quote stays.
    const quoted = open === "'" && close === "'";
    return `${quoted ? '' : open}{{${ours}}}${quoted ? '' : close}`;
  });
  if (unknown) {
    warnings.push(attention('UNDEFINED_PARAMETER', `'{{ ${unknown} }}' has no parameter definition`, `${path}.query`));
    return item('needs_attention');
  }
  const cron = doc.schedule ? scheduleCron(doc.schedule) : null;
  if (doc.schedule && !cron) warnings.push(attention('SCHEDULE', 'the schedule could not be expressed as cron', `${path}.schedule`));
  return item('ok', {
    query: { name, description: boundedDescription(doc.description, warnings, `${path}.description`), text, parameters, expectedColumns: null },
    ...(cron ? { suggestedSchedule: { cron, timezone: 'UTC' as const } } : {}),
  });
}

export function parseRedash(doc: unknown, path = '$'): ParsedItem[] {
  const list = Array.isArray(doc) ? doc : isRecord(doc) && Array.isArray(doc.results) ? doc.results : [doc];
  const base = Array.isArray(doc) ? path : isRecord(doc) && Array.isArray(doc.results) ? `${path}.results` : null;
  return list.slice(0, IMPORT_LIMITS.items).map((d, i) => {
    const at = base === null ? path : `${base}[${i}]`;
    if (!isRecord(d)) return { source: { type: 'query', name: 'Redash item', ref: null }, outcome: 'unsupported', datasourceRef: null, warnings: [attention('NOT_A_QUERY', 'not a query', at)] };
    return query(d, at);
  });
}
