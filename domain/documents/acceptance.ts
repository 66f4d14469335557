import type { Config } from '../config';
import { AppError } from '../errors';
import { isAllowedRemoteUrl, isDataImageUrl } from '../templates/image-hosts';
import { getPath } from '../templates/interpolate';
import { childLists, isComponentType } from '../templates/components/registry';
import { bareDataPath } from '../templates/components/props';
import type { Component, PageArea, TemplateDefinition, VariableField } from '../templates/template.types';

/**
 * What can be known of a document's variables when it is asked for (docs/documents.md "Checks at
 * acceptance"), refused then with the render's own code naming the variable path and the limit,
 * instead of being accepted and failing at render (a 2 MB unbroken string held a render slot for
 * ~100 s before Chromium gave up; 12,000 rows against the 10,000 loop limit failed 2.4 s later).
 * Pure: the API runs it on generation (single and batch) and on template previews.
 */
export interface AcceptanceLimits {
  /** Longest string anywhere in the variables, in characters (`DOCUMENT_VARIABLE_MAX_CHARS`; ERR_LIMIT_017). */
  maxVariableChars: number;
  /** Largest variables object as JSON, in UTF-8 bytes (`DOCUMENT_VARIABLES_MAX_BYTES`; ERR_LIMIT_018). */
  maxVariablesBytes: number;
  /** Longest `data:` image in the variables, in characters (`DOCUMENT_IMAGE_MAX_BYTES`; ERR_OUTPUT_007). */
  maxImageChars: number;
  /** The render's loop limit (`LOOP_MAX_ITERATIONS`; ERR_LIMIT_007) and the workbook's row limit (`EXCEL_MAX_ROWS`; ERR_LIMIT_003). */
  maxLoopIterations: number;
  maxExcelRows: number;
  /** Hosts whose http(s) images a document may show (`IMAGE_HOST_ALLOWLIST`; ERR_OUTBOUND_001 for another). */
  imageAllowlist: readonly string[];
}

/** The limits from the configuration: the documents' caps and the render's own limits. */
export function acceptanceLimits(config: Pick<Config, 'documents' | 'rendering'>): AcceptanceLimits {
  const { maxLoopIterations, maxExcelRows } = config.rendering.limits;
  return { ...config.documents.variables, maxLoopIterations, maxExcelRows, imageAllowlist: config.rendering.imageHostAllowlist };
}

/** The components of a template whose data is iterated: a table's, list's, repeat's or chart's array. */
const LOOPING: Record<string, string> = { table: 'dataSource', repeat: 'dataSource', chart: 'dataSource', list: 'items' };

/**
 * Checks `variables` against the limits. `field` names the variables' place in the request for the
 * error's `relatedInfo.field` (`""` for a generation's own, `documents[3].variables.` in a batch).
 */
export function checkAcceptance(definition: Pick<TemplateDefinition, 'schema' | 'variables'>, variables: unknown, format: string, limits: AcceptanceLimits, field = ''): void {
  if (typeof variables !== 'object' || variables === null) return;
  // The one string past its cap is named first: it is what to fix, more than the total it swells.
  checkStrings(variables, '', field, limits);
  const bytes = Buffer.byteLength(JSON.stringify(variables), 'utf8');
  if (bytes > limits.maxVariablesBytes) {
    throw new AppError('ERR_LIMIT_018', `The variables are ${bytes} bytes as JSON; at most ${limits.maxVariablesBytes} are accepted`, {
      field: field ? field.replace(/\.$/, '') : 'variables',
      limit: limits.maxVariablesBytes,
      size: bytes,
    });
  }
  checkImageHosts(definition.variables ?? [], variables as Record<string, unknown>, field, limits);
  checkImageComponents(definition, variables as Record<string, unknown>, field, limits);
  checkLoops(definition, variables as Record<string, unknown>, format, limits, field);
}

/** Every string, at any depth: a `data:` image within the image cap, any other within the string cap. */
function checkStrings(value: unknown, path: string, field: string, limits: AcceptanceLimits): void {
  const walk = (v: unknown, at: string): void => {
    if (typeof v === 'string') {
      if (v.length <= limits.maxVariableChars && v.length <= limits.maxImageChars) return;
      if (isDataImageUrl(v.slice(0, 64))) {
        if (v.length > limits.maxImageChars) {
          throw new AppError('ERR_OUTPUT_007', `The image in '${field}${at}' is ${v.length} characters; at most ${limits.maxImageChars} are accepted`, { field: `${field}${at}`, limit: limits.maxImageChars, size: v.length });
        }
        return;
      }
      if (v.length > limits.maxVariableChars) {
        throw new AppError('ERR_LIMIT_017', `The value of '${field}${at}' is ${v.length} characters; at most ${limits.maxVariableChars} are accepted`, { field: `${field}${at}`, limit: limits.maxVariableChars, size: v.length });
      }
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((el, i) => walk(el, `${at}[${i}]`));
      return;
    }
    if (typeof v === 'object' && v !== null) {
      for (const [k, el] of Object.entries(v)) walk(el, at ? `${at}.${k}` : k);
    }
  };
  walk(value, path);
}

/** An http(s) image source on a host the render would not load (it would print the alt text): refused, naming the setting. */
function checkImageSource(src: unknown, at: string, field: string, limits: AcceptanceLimits): void {
  if (typeof src !== 'string' || !/^https?:/i.test(src.trim())) return;
  if (isAllowedRemoteUrl(src.trim(), limits.imageAllowlist)) return;
  let host = src;
  try {
    host = new URL(src.trim()).host;
  } catch {
    // An unparsable URL is named as it is.
  }
  throw new AppError('ERR_OUTBOUND_001', `The image of '${field}${at}' is on ${host}, which is not in IMAGE_HOST_ALLOWLIST: documents load images from the hosts listed there only`, {
    field: `${field}${at}`,
    host,
    setting: 'IMAGE_HOST_ALLOWLIST',
  });
}

/** The http(s) images of declared `image` variables (and `image` fields of array elements). */
function checkImageHosts(declared: TemplateDefinition['variables'], variables: Record<string, unknown>, field: string, limits: AcceptanceLimits): void {
  const check = (src: unknown, at: string) => checkImageSource(src, at, field, limits);
  const imageFields = (fields: VariableField[] | undefined) => (fields ?? []).filter((f) => f.type === 'image').map((f) => f.name);
  for (const def of declared ?? []) {
    const value = variables[def.name];
    if (def.type === 'image') check(value, def.name);
    if (def.type === 'array' && Array.isArray(value) && def.items) {
      const names = imageFields(def.items.properties);
      value.forEach((el, i) => {
        if (def.items?.type === 'image') check(el, `${def.name}[${i}]`);
        if (typeof el === 'object' && el !== null) for (const n of names) check((el as Record<string, unknown>)[n], `${def.name}[${i}].${n}`);
      });
    }
  }
}

/** Every component of the template's sections and page areas, depth first, with what it holds. */
function eachComponent(definition: Pick<TemplateDefinition, 'schema'>, visit: (c: Component, props: Record<string, unknown>) => boolean | void): void {
  const schema = definition.schema;
  if (!schema) return;
  const areas = [schema.header, schema.footer, schema.header?.firstPage, schema.footer?.firstPage].filter((a): a is PageArea => Boolean(a));
  const lists: unknown[][] = [...(schema.sections ?? []).map((s) => s.components), ...areas.map((a) => a.components ?? [])];
  const walk = (components: unknown[]) => {
    for (const c of components as Component[]) {
      if (!c || typeof c !== 'object' || !isComponentType(c.type)) continue;
      const props = (c.props ?? {}) as Record<string, unknown>;
      if (visit(c, props) === false) continue;
      for (const children of childLists(c.type, props)) if (Array.isArray(children)) walk(children);
    }
  };
  for (const list of lists) if (Array.isArray(list)) walk(list);
}

/**
 * An image component whose `src` is one `{{ path }}` of the variables (top level: a repeat's
 * element is only known while rendering), whether or not the variable is declared as an image:
 * its http(s) URL must be on an allowed host too. A component with `visibleIf` may not render.
 */
function checkImageComponents(definition: Pick<TemplateDefinition, 'schema'>, variables: Record<string, unknown>, field: string, limits: AcceptanceLimits): void {
  eachComponent(definition, (c, props) => {
    if (typeof props.visibleIf === 'string' && props.visibleIf.trim() !== '') return false;
    if (c.type !== 'image' || typeof props.src !== 'string' || !/^\s*\{\{[^{}]*\}\}\s*$/.test(props.src)) return;
    const path = bareDataPath(props.src);
    checkImageSource(getPath(variables, path), path, field, limits);
  });
}

/**
 * The arrays the template iterates, where the variables give them (a top-level path: an array inside
 * a repeat's element is only known while rendering), against the loop limit, and for a workbook the
 * row limit. A component hidden by `visibleIf` (and what it holds) is not counted: it may not render.
 */
function checkLoops(definition: Pick<TemplateDefinition, 'schema'>, variables: Record<string, unknown>, format: string, limits: AcceptanceLimits, field: string): void {
  eachComponent(definition, (c, props) => {
    if (typeof props.visibleIf === 'string' && props.visibleIf.trim() !== '') return false;
    const source = LOOPING[c.type] ? props[LOOPING[c.type]] : undefined;
    if (typeof source !== 'string') return;
    const path = bareDataPath(source);
    const rows = getPath(variables, path);
    if (!Array.isArray(rows)) return;
    if (rows.length > limits.maxLoopIterations) {
      throw new AppError('ERR_LIMIT_007', `'${field}${path}' has ${rows.length} elements; a document iterates at most ${limits.maxLoopIterations}`, {
        field: `${field}${path}`,
        componentId: c.id,
        limit: limits.maxLoopIterations,
        size: rows.length,
      });
    }
    if (format === 'excel' && c.type === 'table' && rows.length > limits.maxExcelRows) {
      throw new AppError('ERR_LIMIT_003', `'${field}${path}' has ${rows.length} rows; a workbook has at most ${limits.maxExcelRows}`, {
        field: `${field}${path}`,
        componentId: c.id,
        limit: limits.maxExcelRows,
        size: rows.length,
      });
    }
  });
}
