/**
 * The designer's model mapping (docs/web.md "The designer"): a template definition as Puck's
 * document and back. Pure data, no React and no Puck at run time, so it is tested on its own
 * (tests/unit/web/designer-model.test.ts): every component type of the catalogue and every example
 * template round-trips unchanged.
 *
 * - Sections are `section` blocks in the root's `sections` slot; a component is a block of its own
 *   type whose props are the component's props plus its `id`.
 * - Containers' children are slots: `components` of `repeat` and `box`; `columns` holds `column`
 *   blocks (its width and a `components` slot).
 * - The page header and footer: `headerForm` says which form the template uses (none, three texts,
 *   or components); the texts are `headerText`, the components the `header` slot; the first-page
 *   variant stays JSON (`headerFirstPage`). Likewise for the footer.
 * - The rest of the schema (page size, orientation, margins, theme, CSS, locale, currency, format) and
 *   the variables, constants and calculated variables are the root's props, so undo covers them too.
 */

export interface Component {
  id: string;
  type: string;
  props: Record<string, unknown>;
}

export interface Definition {
  schema: Record<string, unknown>;
  variables?: unknown;
  constants?: unknown;
  calculatedVariables?: unknown;
}

/** One entry of GET /api/templates/component-types. */
export interface ComponentTypeInfo {
  type: string;
  container: boolean;
  children: 'components' | 'columns' | null;
  props: JsonSchema;
}

export interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  /** `color`: a colour picker (the designer's own hint; the API's schemas do not carry it). */
  format?: string;
}

/** A block of Puck's document: `props.id` is its id there. */
export interface Block {
  type: string;
  props: Record<string, unknown> & { id: string };
}

export interface PuckDocument {
  root: { props: Record<string, unknown> };
  content: Block[];
  zones?: Record<string, Block[]>;
}

export const SECTION = 'section';
export const COLUMN = 'column';
/** The forms of a page header or footer. */
export type AreaForm = 'none' | 'text' | 'components';

/** Schema keys carried as root props as they are. */
const SCHEMA_KEYS = ['pageSize', 'orientation', 'margins', 'theme', 'css', 'locale', 'currency', 'format'] as const;
const DEFINITION_KEYS = ['variables', 'constants', 'calculatedVariables'] as const;
const AREAS = ['header', 'footer'] as const;

/** Section ids and component ids are separate in a template, one namespace in Puck. */
const SECTION_PREFIX = 'section~';

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** The catalogue as a map from type to where its children are. */
function childrenByType(catalogue: readonly ComponentTypeInfo[]): Map<string, ComponentTypeInfo['children']> {
  return new Map(catalogue.map((c) => [c.type, c.children]));
}

function componentToBlock(component: Component, children: Map<string, ComponentTypeInfo['children']>): Block {
  const props: Block['props'] = { ...component.props, id: component.id };
  const where = children.get(component.type);
  if (where === 'components' && Array.isArray(component.props.components)) {
    props.components = componentsToBlocks(component.props.components as Component[], children);
  }
  if (where === 'columns' && Array.isArray(component.props.columns)) {
    props.columns = (component.props.columns as Record<string, unknown>[]).map((column, i) => ({
      type: COLUMN,
      props: { ...column, id: `${component.id}~column-${i + 1}`, components: componentsToBlocks((column.components as Component[] | undefined) ?? [], children) },
    }));
  }
  return { type: component.type, props };
}

function componentsToBlocks(components: readonly Component[], children: Map<string, ComponentTypeInfo['children']>): Block[] {
  return components.map((c) => componentToBlock(c, children));
}

function blockToComponent(block: Block, children: Map<string, ComponentTypeInfo['children']>): Component {
  const { id, ...props } = block.props;
  const where = children.get(block.type);
  if (where === 'components') props.components = blocksToComponents((props.components as Block[] | undefined) ?? [], children);
  if (where === 'columns') {
    props.columns = ((props.columns as Block[] | undefined) ?? []).map((column) => {
      const { id: _columnId, ...rest } = column.props;
      return { ...rest, components: blocksToComponents((rest.components as Block[] | undefined) ?? [], children) };
    });
  }
  return { id, type: block.type, props };
}

function blocksToComponents(blocks: readonly Block[], children: Map<string, ComponentTypeInfo['children']>): Component[] {
  return blocks.map((b) => blockToComponent(b, children));
}

/** A page header's or footer's form, as the template writes it. */
function areaForm(area: unknown): AreaForm {
  if (!isObject(area)) return 'none';
  return Array.isArray(area.components) ? 'components' : 'text';
}

/** The template's definition as Puck's document. */
export function toPuck(definition: Definition, catalogue: readonly ComponentTypeInfo[]): PuckDocument {
  const children = childrenByType(catalogue);
  const schema = definition.schema;
  const root: Record<string, unknown> = {};
  for (const key of SCHEMA_KEYS) if (schema[key] !== undefined) root[key] = schema[key];
  for (const key of DEFINITION_KEYS) if (definition[key] !== undefined) root[key] = definition[key];
  for (const area of AREAS) {
    const value = schema[area];
    const form = areaForm(value);
    root[`${area}Form`] = form;
    root[area] = form === 'components' && isObject(value) ? componentsToBlocks(value.components as Component[], children) : [];
    if (form === 'text' && isObject(value)) {
      const { firstPage: _firstPage, ...text } = value;
      root[`${area}Text`] = text;
    }
    if (isObject(value) && value.firstPage !== undefined) root[`${area}FirstPage`] = value.firstPage;
  }
  const sections = Array.isArray(schema.sections) ? (schema.sections as Record<string, unknown>[]) : [];
  root.sections = sections.map((section) => {
    const { id, components, ...rest } = section;
    return {
      type: SECTION,
      props: { ...rest, id: `${SECTION_PREFIX}${String(id)}`, sectionId: id, components: componentsToBlocks((components as Component[] | undefined) ?? [], children) },
    };
  });
  return { root: { props: root }, content: [], zones: {} };
}

/** A section's id: the one it was loaded with, else one made from Puck's id for a section added in the designer. */
function sectionId(props: Block['props']): string {
  if (typeof props.sectionId === 'string' && props.sectionId) return props.sectionId;
  return props.id.replace(/^section~/, '').replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 100);
}

/** Puck's document as the template's definition: what the designer saves as the draft. */
export function toDefinition(document: PuckDocument, catalogue: readonly ComponentTypeInfo[]): Definition {
  const children = childrenByType(catalogue);
  const root = document.root.props ?? {};
  const schema: Record<string, unknown> = {};
  for (const key of SCHEMA_KEYS) if (root[key] !== undefined) schema[key] = root[key];
  for (const area of AREAS) {
    const form = root[`${area}Form`] as AreaForm | undefined;
    const firstPage = root[`${area}FirstPage`];
    let value: Record<string, unknown> | undefined;
    if (form === 'text') value = { ...((root[`${area}Text`] as Record<string, unknown> | undefined) ?? {}) };
    if (form === 'components') value = { components: blocksToComponents((root[area] as Block[] | undefined) ?? [], children) };
    if (value && firstPage !== undefined) value.firstPage = firstPage;
    if (value) schema[area] = value;
  }
  schema.sections = ((root.sections as Block[] | undefined) ?? []).map((block) => {
    const { id: _id, sectionId: _sectionId, components, ...rest } = block.props;
    return { id: sectionId(block.props), ...rest, components: blocksToComponents((components as Block[] | undefined) ?? [], children) };
  });
  const definition: Definition = { schema };
  for (const key of DEFINITION_KEYS) if (root[key] !== undefined) definition[key] = root[key];
  return withoutUndefined(definition);
}

/** JSON's view of a value: keys holding `undefined` (a cleared field) are gone. */
function withoutUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Whether two definitions are the same JSON, whatever their keys' order. */
export function sameDefinition(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

/**
 * Where a problem the API reported (`schema.sections[0].components[2].props.text`, or the path
 * without `schema.`) belongs: the id of the component (or `section~<id>`) it concerns, the deepest
 * one on its path; undefined for the schema, variables and the rest.
 */
export function problemOwner(path: string, definition: Definition): string | undefined {
  const steps = path
    .replace(/^schema\./, '')
    .split(/\.|\[(\d+)\]/)
    .filter((s) => s !== undefined && s !== '');
  let node: unknown = definition.schema;
  let owner: string | undefined;
  for (const step of steps) {
    if (node === undefined || node === null) break;
    node = (node as Record<string, unknown>)[step];
    if (isObject(node) && typeof node.id === 'string') {
      // A component has a type; a section (id, title, components) has none.
      owner = typeof node.type === 'string' ? node.id : `${SECTION_PREFIX}${node.id}`;
    }
  }
  return owner;
}
