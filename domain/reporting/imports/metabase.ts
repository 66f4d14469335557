import type { ParameterDef, ParameterType } from '../parameters';
import { attention, boundedDescription, boundedLabel, boundedName, IMPORT_LIMITS, type ImportWarning, isRecord, literalDefault, parameterName, type ParsedItem, str } from './model';

/**
 * Metabase cards (docs/reporting.md "Imports"): serialization YAML or API JSON, in the legacy shape
 * (`dataset_query: {type: native, native: {query, template-tags}}`) and the MBQL 5 shape
 * (`dataset_query.stages[0]` with `lib/type: mbql.stage/native`). Native questions become query
 * objects; field filters, card and snippet references need attention; GUI questions and dashboards
 * are unsupported.
 */

const TAG_TYPES: Record<string, ParameterType> = { text: 'string', number: 'number', date: 'date', boolean: 'boolean' };

/** Whether `doc` looks like a Metabase card or dashboard. */
export function isMetabaseDocument(doc: unknown): boolean {
  if (Array.isArray(doc)) return doc.length > 0 && doc.every((d) => isRecord(d) && ('dataset_query' in d || 'dashcards' in d));
  return isRecord(doc) && ('dataset_query' in doc || 'dashcards' in doc || 'ordered_cards' in doc);
}

interface NativeQuery {
  sql: string;
  tags: unknown;
}

function nativeOf(dq: Record<string, unknown>): NativeQuery | 'mbql' | null {
  // MBQL 5: {lib/type: mbql/query, stages: [{lib/type: mbql.stage/native, native: "SELECT", template-tags}]}
  if (Array.isArray(dq.stages)) {
    const stage = dq.stages[0];
    if (!isRecord(stage)) return null;
    if (stage['lib/type'] === 'mbql.stage/native' && typeof stage.native === 'string') return { sql: stage.native, tags: stage['template-tags'] };
    return 'mbql';
  }
  if (dq.type === 'native' && isRecord(dq.native) && typeof dq.native.query === 'string') return { sql: dq.native.query, tags: dq.native['template-tags'] };
  if (dq.type === 'query' || isRecord(dq.query)) return 'mbql';
  return null;
}

/** `template-tags` as a map `{name: tag}` or (some exports) a list of tags. */
function tagList(tags: unknown): Array<[string, Record<string, unknown>]> | null {
  if (tags === undefined || tags === null) return [];
  if (Array.isArray(tags)) return tags.filter(isRecord).map((t) => [str(t.name) ?? '', t]);
  if (isRecord(tags)) return Object.entries(tags).map(([k, t]) => [k, isRecord(t) ? t : {}]);
  return null;
}

function card(doc: Record<string, unknown>, path: string): ParsedItem {
  const warnings: ImportWarning[] = [];
  const name = boundedName(doc.name, 'Metabase question', warnings, `${path}.name`);
  const ref = str(doc.entity_id) ?? str(doc.id);
  const item = (outcome: ParsedItem['outcome'], extra: Partial<ParsedItem> = {}): ParsedItem => ({ source: { type: 'card', name, ref }, outcome, datasourceRef: null, warnings, ...extra });
  const dq = doc.dataset_query;
  if (!isRecord(dq)) {
    warnings.push(attention('NOT_A_QUESTION', 'the card has no dataset_query', `${path}.dataset_query`));
    return item('unsupported');
  }
  const datasourceRef = str(dq.database);
  const native = nativeOf(dq);
  if (native === 'mbql' || native === null) {
    warnings.push(attention('GUI_QUESTION', 'a question built with the query builder (MBQL) is not converted: only native SQL questions are', `${path}.dataset_query`));
    return item('unsupported', { datasourceRef });
  }
  if (native.sql.length > IMPORT_LIMITS.text) {
    warnings.push(attention('TEXT_TOO_LONG', `the SQL is longer than ${IMPORT_LIMITS.text} characters`, `${path}.dataset_query`));
    return item('needs_attention', { datasourceRef });
  }
  const tags = tagList(native.tags);
  if (!tags) {
    warnings.push(attention('INVALID_TAGS', 'template-tags is neither a map nor a list', `${path}.dataset_query`));
    return item('needs_attention', { datasourceRef });
  }
  if (tags.length > IMPORT_LIMITS.parameters) {
    warnings.push(attention('TOO_MANY_PARAMETERS', `more than ${IMPORT_LIMITS.parameters} template tags`, `${path}.template-tags`));
    return item('needs_attention', { datasourceRef });
  }
  const parameters: ParameterDef[] = [];
  let blocked = false;
  for (const [key, tag] of tags) {
    const tagName = str(tag.name) ?? key;
    const at = `${path}.template-tags.${tagName.slice(0, 100)}`;
    const tagType = str(tag.type) ?? 'text';
    if (tagType === 'dimension' || tagType === 'temporal-unit') {
      warnings.push(attention('FIELD_FILTER', `'${tagName}' is a field filter (Metabase writes the condition itself): rewrite it as a condition on a plain parameter, e.g. [[AND column = {{${parameterName(tagName)}}}]]`, at));
      blocked = true;
      continue;
    }
    if (tagType === 'card' || tagType === 'snippet') {
      warnings.push(attention(tagType === 'card' ? 'CARD_REFERENCE' : 'SNIPPET_REFERENCE', `'${tagName}' refers to another ${tagType === 'card' ? 'question' : 'snippet'}: paste its SQL in`, at));
      blocked = true;
      continue;
    }
    const type = TAG_TYPES[tagType];
    if (!type) {
      warnings.push(attention('UNKNOWN_TAG_TYPE', `'${tagName}' has type '${tagType.slice(0, 50)}'`, at));
      blocked = true;
      continue;
    }
    if (parameterName(tagName) !== tagName) {
      warnings.push(attention('PARAMETER_NAME', `'${tagName}' is not a parameter name (letters, digits, _)`, at));
      blocked = true;
      continue;
    }
    const def: ParameterDef = { name: tagName, type };
    const label = boundedLabel(tag['display-name']);
    if (label) def.label = label;
    if (tag.required === true) def.required = true;
    const dflt = literalDefault(type, Array.isArray(tag.default) ? tag.default[0] : tag.default);
    if (dflt !== undefined) def.default = dflt;
    parameters.push(def);
  }
  if (blocked) return item('needs_attention', { datasourceRef });
  return item('ok', {
    datasourceRef,
    query: { name, description: boundedDescription(doc.description, warnings, `${path}.description`), text: native.sql, parameters, expectedColumns: null },
  });
}

/** Items of a Metabase document: a card, a list of cards, or a dashboard (unsupported in v1). */
export function parseMetabase(doc: unknown, path = '$'): ParsedItem[] {
  const docs = Array.isArray(doc) ? doc : [doc];
  return docs.slice(0, IMPORT_LIMITS.items).map((d, i) => {
    const at = Array.isArray(doc) ? `${path}[${i}]` : path;
    if (!isRecord(d)) return { source: { type: 'card', name: 'Metabase item', ref: null }, outcome: 'unsupported', datasourceRef: null, warnings: [attention('NOT_A_QUESTION', 'not a card', at)] };
    if (!('dataset_query' in d)) {
      const warnings: ImportWarning[] = [];
      const name = boundedName(d.name, 'Metabase dashboard', warnings, `${at}.name`);
      warnings.push(attention('DASHBOARD', 'dashboards are not converted: import their native questions', at));
      return { source: { type: 'card', name, ref: str(d.entity_id) ?? str(d.id) }, outcome: 'unsupported', datasourceRef: null, warnings };
    }
    return card(d, at);
  });
}
