import { XMLParser } from 'fast-xml-parser';
import type { ParameterDef, ParameterType } from '../parameters';
import { attention, type ExpectedColumn, boundedDescription, boundedLabel, boundedName, IMPORT_LIMITS, ImportParseError, type ImportWarning, isRecord, literalDefault, parameterName, type ParsedItem, str } from './model';

/**
 * JasperReports JRXML (docs/reporting.md "Imports"), JR ≤ 6 (`<queryString>`) and JR 7 (`<query>`): the SQL becomes a
 * query object (`$P{x}` → `{{x}}`, `$X{IN, col, p}` → `col IN ({{p}})` with `p` multiple, the
 * comparisons likewise), `<parameter>` classes become types, literal defaults are kept and
 * `<field>`s become `expectedColumns`. `$P!{x}` splices text into the SQL: never converted. The XML
 * is read with entities off and any DTD refused (no XXE, no entity expansion).
 */

const CLASSES: Record<string, ParameterType> = {
  'java.lang.String': 'string',
  'java.lang.Integer': 'integer',
  'java.lang.Long': 'integer',
  'java.lang.Short': 'integer',
  'java.math.BigInteger': 'integer',
  'java.math.BigDecimal': 'number',
  'java.lang.Double': 'number',
  'java.lang.Float': 'number',
  'java.lang.Number': 'number',
  'java.lang.Boolean': 'boolean',
  'java.util.Date': 'date',
  'java.sql.Date': 'date',
  'java.sql.Timestamp': 'datetime',
  'java.time.LocalDate': 'date',
};
const COLLECTIONS = new Set(['java.util.Collection', 'java.util.List', 'java.util.Set', 'java.util.ArrayList']);

function typeOfClass(cls: string | null): ParameterType | null {
  if (!cls) return 'string';
  if (CLASSES[cls]) return CLASSES[cls];
  if (cls.startsWith('java.time.')) return 'datetime';
  return null;
}

/** XML's five named entities and character references, decoded once (no DTD, so nothing else can be defined). */
function decodeXmlText(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (all, e: string) => {
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'amp') return '&';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    const code = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

const ARRAYS = new Set(['parameter', 'field', 'property']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: 100,
  textNodeName: '#text',
  isArray: (name) => ARRAYS.has(name),
});

/** Whether the text's root element is `jasperReport` (after a declaration, comments, whitespace). */
export function isJrxml(text: string): boolean {
  // A DTD's internal subset is skipped here so that parseJrxml can refuse it by name.
  const head = text.slice(0, 65_536).replace(/^\uFEFF/, '').replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(\[[\s\S]*?\]\s*)?>/g, '').trimStart();
  return /^<jasperReport[\s>/]/.test(head);
}

function textOf(node: unknown): string {
  if (typeof node === 'string') return decodeXmlText(node);
  if (isRecord(node) && typeof node['#text'] === 'string') return decodeXmlText(node['#text']);
  return '';
}

/** A literal Java default (`"text"`, `12`, `12L`, `1.5`, `true`, `Boolean.TRUE`), else undefined: expressions are never evaluated. */
function javaLiteral(expr: string): unknown {
  const e = expr.trim();
  const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(e);
  if (quoted) return quoted[1].replace(/\\(.)/g, '$1');
  const wrapped = /^(?:new\s+[\w.]+\(|[\w.]+\.valueOf\()\s*("?[^()]*"?)\s*\)$/.exec(e);
  if (wrapped) return javaLiteral(wrapped[1]);
  if (/^[+-]?\d+(\.\d+)?[LlDdFf]?$/.test(e)) return e.replace(/[LlDdFf]$/, '');
  if (e === 'true' || e === 'Boolean.TRUE') return true;
  if (e === 'false' || e === 'Boolean.FALSE') return false;
  return undefined;
}

const OPERATORS: Record<string, string> = { EQUAL: '=', NOTEQUAL: '<>', LESS: '<', 'LESS]': '<=', GREATER: '>', '[GREATER': '>=' };

/** Parses a JRXML document; throws ImportParseError when it is not well-formed or has a DTD. */
export function parseJrxml(text: string, path = '$'): ParsedItem[] {
  if (/<!ENTITY|<!DOCTYPE[^>]*\[/i.test(text)) throw new ImportParseError([{ path, message: 'a DTD with declarations is not read (entities are refused)' }]);
  let doc: unknown;
  try {
    doc = parser.parse(text, true);
  } catch (err) {
    throw new ImportParseError([{ path, message: `not well-formed XML: ${String((err as Error).message).slice(0, 200)}` }]);
  }
  const report = isRecord(doc) ? doc.jasperReport : null;
  if (!isRecord(report)) throw new ImportParseError([{ path, message: 'the root element is not jasperReport' }]);
  const warnings: ImportWarning[] = [];
  const name = boundedName(report['@_name'], 'JasperReports report', warnings, `${path}.name`);
  const item = (outcome: ParsedItem['outcome'], extra: Partial<ParsedItem> = {}): ParsedItem => ({ source: { type: 'jrxml', name, ref: str(report['@_uuid']) }, outcome, datasourceRef: null, warnings, ...extra });

  const queryNode = report.queryString ?? report.query;
  if (queryNode === undefined) {
    warnings.push(attention('NO_QUERY', 'the report has no queryString or query', path));
    return [item('unsupported')];
  }
  const language = (isRecord(queryNode) ? str(queryNode['@_language']) : null) ?? 'SQL';
  if (language.toLowerCase() !== 'sql') {
    warnings.push(attention('QUERY_LANGUAGE', `query language '${language.slice(0, 50)}' is not converted: only SQL is`, `${path}.query`));
    return [item('unsupported')];
  }
  const sql = textOf(queryNode).trim();
  if (sql.length > IMPORT_LIMITS.text) {
    warnings.push(attention('TEXT_TOO_LONG', `the query is longer than ${IMPORT_LIMITS.text} characters`, `${path}.query`));
    return [item('needs_attention')];
  }

  const paramNodes = Array.isArray(report.parameter) ? report.parameter : [];
  if (paramNodes.length > IMPORT_LIMITS.parameters) {
    warnings.push(attention('TOO_MANY_PARAMETERS', `more than ${IMPORT_LIMITS.parameters} parameters`, `${path}.parameter`));
    return [item('needs_attention')];
  }
  let blocked = false;
  const defs = new Map<string, ParameterDef>();
  paramNodes.forEach((p: unknown, i: number) => {
    if (!isRecord(p) || !str(p['@_name'])) return;
    const at = `${path}.parameter[${i}]`;
    const source = str(p['@_name'])!;
    const cls = str(p['@_class']);
    const collection = cls !== null && COLLECTIONS.has(cls);
    const type = collection ? typeOfClass(str(p['@_nestedType'])) ?? 'string' : typeOfClass(cls);
    if (!type) {
      warnings.push(attention('PARAMETER_CLASS', `'${source.slice(0, 100)}' has class '${(cls ?? '').slice(0, 100)}', which no parameter type fits`, at));
      return;
    }
    const def: ParameterDef = { name: parameterName(source), type };
    if (def.name !== source) warnings.push(attention('PARAMETER_RENAMED', `'${source.slice(0, 100)}' became '${def.name}'`, at));
    if (collection) def.multiple = true;
    const label = boundedLabel(textOf(p.parameterDescription)) ?? boundedLabel(p['@_description']);
    if (label) def.label = label;
    const expr = textOf(p.defaultValueExpression);
    if (expr) {
      const dflt = collection ? undefined : literalDefault(type, javaLiteral(expr));
      if (dflt !== undefined) def.default = dflt;
      else warnings.push(attention('DEFAULT_NOT_LITERAL', `the default of '${def.name}' is an expression and was dropped`, at));
    }
    defs.set(source, def);
  });

  const used = new Set<string>();
  const ref = (source: string, at: string): string | null => {
    const def = defs.get(source);
    if (!def) {
      warnings.push(attention('UNDEFINED_PARAMETER', `'${source.slice(0, 100)}' is used in the query but not defined`, at));
      blocked = true;
      return null;
    }
    used.add(source);
    return `{{${def.name}}}`;
  };
  if (/\$P!\{/.test(sql)) {
    const spliced = [...sql.matchAll(/\$P!\{([^}]{0,200})\}/g)].map((m) => m[1]);
    warnings.push(attention('TEXT_SPLICING', `$P!{${spliced[0] ?? ''}} splices text into the SQL: rewrite it with bound parameters (it is never converted)`, `${path}.query`));
    blocked = true;
  }
  let converted = sql.replace(/\$X\{\s*([A-Z\][]+)\s*,\s*([^,}]{1,200}?)\s*,\s*([^,}]{1,200}?)\s*(?:,\s*([^,}]{1,200}?)\s*)?\}/g, (all, fn: string, column: string, p1: string, p2: string | undefined) => {
    const at = `${path}.query`;
    if (fn === 'IN' || fn === 'NOTIN') {
      const r = ref(p1, at);
      const def = defs.get(p1);
      if (def) def.multiple = true;
      return r ? `${column} ${fn === 'IN' ? 'IN' : 'NOT IN'} (${r})` : all;
    }
    if (OPERATORS[fn]) {
      const r = ref(p1, at);
      return r ? `${column} ${OPERATORS[fn]} ${r}` : all;
    }
    const between = /^(\[?)BETWEEN(\]?)$/.exec(fn);
    if (between && p2) {
      const a = ref(p1, at);
      const b = ref(p2, at);
      return a && b ? `(${column} ${between[1] ? '>=' : '>'} ${a} AND ${column} ${between[2] ? '<=' : '<'} ${b})` : all;
    }
    warnings.push(attention('X_FUNCTION', `$X{${fn.slice(0, 20)}, …} is not converted`, at));
    blocked = true;
    return all;
  });
  if (/\$X\{/.test(converted)) {
    warnings.push(attention('X_FUNCTION', 'a $X{…} clause is not converted', `${path}.query`));
    blocked = true;
  }
  if (converted !== sql) warnings.push(attention('X_CLAUSE', 'JasperReports drops a $X{} condition when its parameter is empty; here its parameter is required', `${path}.query`));
  converted = converted.replace(/\$P\{([^}]{1,200})\}/g, (all, source: string) => ref(source, `${path}.query`) ?? all);

  const fieldNodes = Array.isArray(report.field) ? report.field : [];
  const expectedColumns: ExpectedColumn[] = [];
  for (const f of fieldNodes.slice(0, IMPORT_LIMITS.columns)) {
    const fieldName = isRecord(f) ? str(f['@_name'])?.slice(0, 200).trim() : null;
    if (!fieldName || !isRecord(f)) continue;
    const type = typeOfClass(str(f['@_class']));
    expectedColumns.push(type ? { name: fieldName, type } : { name: fieldName });
  }
  if (fieldNodes.length > IMPORT_LIMITS.columns) warnings.push(attention('TOO_MANY_FIELDS', `only the first ${IMPORT_LIMITS.columns} fields became expected columns`, `${path}.field`));

  if (blocked) return [item('needs_attention')];
  // Only the parameters the query uses: the others feed the layout, which is not converted.
  const parameters = [...defs.entries()].filter(([source]) => used.has(source)).map(([, def]) => ({ ...def, required: def.default === undefined }));
  return [
    item('ok', {
      query: { name, description: boundedDescription(textOf(report.description) || null, warnings, `${path}.description`), text: converted, parameters, expectedColumns: expectedColumns.length ? expectedColumns : null },
    }),
  ];
}
