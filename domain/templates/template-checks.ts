import { bareDataPath } from './components/props';
import { getPath, parsePath, placeholders } from './interpolate';
import {
  COLUMN_FORMATS,
  type Component,
  type TemplateDefinition,
  type TemplateType,
  type TemplateVariable,
  type ValidationIssue,
} from './template.types';

/**
 * Cross-references between a template's schema and its variables: data sources that must name
 * arrays (errors) and placeholders or variables that look like mistakes (warnings).
 */

export interface ComponentVisit {
  component: Component;
  path: string;
  /** Loop bindings in scope (`item`, or each repeat's `as`), innermost last. */
  aliases: string[];
}

export interface NameContext {
  variables: Map<string, TemplateVariable>;
  constants: Record<string, unknown>;
  calculated: Set<string>;
  /** The calculated expressions, to notice variables they read. */
  expressions: string[];
}

export function nameContext(def: Pick<TemplateDefinition, 'variables' | 'constants' | 'calculatedVariables'>): NameContext {
  const variables = new Map<string, TemplateVariable>();
  for (const v of Array.isArray(def.variables) ? def.variables : []) if (v && typeof v.name === 'string') variables.set(v.name, v);
  const calcs = Array.isArray(def.calculatedVariables) ? def.calculatedVariables : [];
  return {
    variables,
    constants: def.constants && typeof def.constants === 'object' ? def.constants : {},
    calculated: new Set(calcs.map((c) => c?.name).filter((n): n is string => typeof n === 'string')),
    expressions: calcs.map((c) => c?.expression).filter((e): e is string => typeof e === 'string'),
  };
}

/** The interpolated strings of a component, with their paths. */
function textProps(c: Component, path: string): Array<[string, string]> {
  const p = c.props as Record<string, unknown>;
  const at = (k: string) => `${path}.props.${k}`;
  const out: Array<[string, string]> = [];
  const add = (k: string, v: unknown) => typeof v === 'string' && out.push([at(k), v]);
  switch (c.type) {
    case 'heading':
    case 'text':
      add('text', p.text);
      break;
    case 'table':
      (p.columns as Array<{ header: string }>).forEach((col, i) => add(`columns[${i}].header`, col.header));
      break;
    case 'image':
      add('src', p.src);
      add('alt', p.alt);
      break;
    case 'list':
      if (Array.isArray(p.items)) p.items.forEach((v, i) => add(`items[${i}]`, v));
      break;
    case 'keyValue':
      (p.items as Array<{ label: string; value: unknown }>).forEach((it, i) => {
        add(`items[${i}].label`, it.label);
        add(`items[${i}].value`, it.value);
      });
      break;
    case 'qrcode':
    case 'barcode':
      add('value', p.value);
      break;
    case 'markdown':
      add('text', p.text);
      break;
    case 'html':
      add('html', p.html);
      break;
    case 'chart':
    case 'toc':
      add('title', p.title);
      break;
    default:
      break;
  }
  return out;
}

function dataSources(c: Component, path: string): Array<[string, string]> {
  const p = c.props as Record<string, unknown>;
  if ((c.type === 'table' || c.type === 'repeat' || c.type === 'chart') && typeof p.dataSource === 'string') return [[`${path}.props.dataSource`, p.dataSource]];
  if (c.type === 'list' && typeof p.items === 'string') return [[`${path}.props.items`, p.items]];
  return [];
}

/** Why a data source does not name an array, or undefined when it does (or cannot be known). */
function dataSourceProblem(source: string, aliases: string[], names: NameContext): string | undefined {
  const segments = parsePath(bareDataPath(source));
  const root = segments[0];
  if (aliases.includes(root) || names.calculated.has(root)) return undefined;
  const v = names.variables.get(root);
  if (v) {
    if (segments.length === 1 && v.type !== 'array') return `'${source}' names a ${v.type} variable, not an array`;
    if (segments.length > 1 && v.type !== 'object' && v.type !== 'array') return `'${source}' reads into a ${v.type} variable`;
    return undefined;
  }
  if (Object.prototype.hasOwnProperty.call(names.constants, root)) {
    return Array.isArray(getPath(names.constants, segments)) ? undefined : `constant '${source}' is not an array`;
  }
  return `'${source}' names no array variable`;
}

export function crossCheckTemplate(
  schema: unknown,
  visits: ComponentVisit[],
  templateType: TemplateType,
  names: NameContext | undefined,
  errors: ValidationIssue[],
  warnings: ValidationIssue[],
): void {
  const used = new Set<string>();
  const checkText = (path: string, text: string, aliases: string[]) => {
    for (const ph of placeholders(text)) {
      const root = parsePath(ph.path)[0] ?? '';
      used.add(root);
      if (ph.format && !(COLUMN_FORMATS as readonly string[]).includes(ph.format)) {
        warnings.push({ path, message: `unknown format '${ph.format}' in {{${ph.path} | ${ph.format}}}; shown unformatted` });
      }
      const known = aliases.includes(root) || (aliases.length > 0 && root === 'loop');
      if (names && !known && !names.variables.has(root) && !names.calculated.has(root) && !(root in names.constants)) {
        warnings.push({ path, message: `{{${ph.path}}} refers to an unknown variable '${root}'` });
      }
    }
  };

  const s = (schema ?? {}) as Record<string, unknown>;
  for (const part of ['header', 'footer'] as const) {
    const hf = s[part] as Record<string, unknown> | undefined;
    const first = hf?.firstPage as Record<string, unknown> | undefined;
    for (const slot of ['left', 'center', 'right']) {
      if (typeof hf?.[slot] === 'string') checkText(`${part}.${slot}`, hf[slot] as string, []);
      if (typeof first?.[slot] === 'string') checkText(`${part}.firstPage.${slot}`, first[slot] as string, []);
    }
  }
  const sections = Array.isArray(s.sections) ? (s.sections as Array<{ title?: unknown }>) : [];
  sections.forEach((sec, i) => typeof sec?.title === 'string' && checkText(`sections[${i}].title`, sec.title, []));

  for (const { component: c, path, aliases } of visits) {
    for (const [at, text] of textProps(c, path)) checkText(at, text, aliases);
    for (const [at, source] of dataSources(c, path)) {
      used.add(parsePath(bareDataPath(source))[0] ?? '');
      const problem = names && dataSourceProblem(source, aliases, names);
      if (problem) errors.push({ path: at, message: problem });
    }
    if (c.type === 'table' && names) checkColumns(c, path, names, warnings);
    if (c.type === 'image' && templateType === 'excel' && /^https?:/i.test(String(c.props.src))) {
      warnings.push({ path: `${path}.props.src`, message: 'remote images are not embedded in Excel workbooks; use a data: URL' });
    }
  }

  if (!names) return;
  const read = identifiersRead(names.expressions);
  const inExpressions = (name: string) => (isWordRun(name) ? read.has(name) : names.expressions.some((e) => mentions(e, name)));
  for (const [name, v] of names.variables) {
    if (!used.has(name) && !inExpressions(name)) {
      warnings.push({ path: `variables[${[...names.variables.keys()].indexOf(name)}]`, message: `variable '${v.name}' is never used` });
    }
  }
}

const isWordChar = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;

/**
 * The names the calculated expressions mention: every maximal run of word characters (`\w`) not
 * right after a `$` (`$name` is a JSONata variable, not a template variable). One pass over the
 * expressions however many variables there are; it replaces one regular expression per variable,
 * `(^|[^$\w])name(?!\w)`, and gives the same answer for every variable name (names are `\w` runs).
 */
function identifiersRead(expressions: string[]): Set<string> {
  const found = new Set<string>();
  for (const e of expressions) {
    let i = 0;
    while (i < e.length) {
      if (!isWordChar(e.charCodeAt(i))) {
        i += 1;
        continue;
      }
      const start = i;
      while (i < e.length && isWordChar(e.charCodeAt(i))) i += 1;
      if (start === 0 || e.charCodeAt(start - 1) !== 0x24) found.add(e.slice(start, i));
    }
  }
  return found;
}

function isWordRun(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i += 1) if (!isWordChar(name.charCodeAt(i))) return false;
  return true;
}

/**
 * The same test for a name that is not a `\w` run (never a valid variable name, so only reached
 * when the names were not validated): an occurrence not preceded by `$` or a word character and
 * not followed by a word character.
 */
function mentions(expression: string, name: string): boolean {
  for (let at = expression.indexOf(name); at >= 0; at = at < expression.length ? expression.indexOf(name, at + 1) : -1) {
    const before = at === 0 ? -1 : expression.charCodeAt(at - 1);
    const after = at + name.length < expression.length ? expression.charCodeAt(at + name.length) : -1;
    if (before !== 0x24 && !(before >= 0 && isWordChar(before)) && !(after >= 0 && isWordChar(after))) return true;
  }
  return false;
}

/** Columns that read a field the variable's items do not declare. */
function checkColumns(c: Component, path: string, names: NameContext, warnings: ValidationIssue[]): void {
  const source = bareDataPath(String(c.props.dataSource));
  const properties = names.variables.get(source)?.items?.properties;
  if (!properties) return;
  const declared = new Set(properties.map((p) => p.name));
  (c.props.columns as Array<{ field: string }>).forEach((col, i) => {
    const root = parsePath(col.field)[0];
    if (root && col.field !== '.' && !declared.has(root)) {
      warnings.push({ path: `${path}.props.columns[${i}].field`, message: `'${col.field}' is not among the items of '${source}'` });
    }
  });
}
