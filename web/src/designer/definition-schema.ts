import type { ComponentTypeInfo, JsonSchema } from './model';

/**
 * The JSON Schema of a template definition as the code view needs it (docs/web.md "The code view"):
 * the definition's own shape (docs/templates.md "The definition") with each component's props taken
 * from the catalogue by the component's `type`, so completion offers exactly what the API accepts.
 * `schemaAt` walks a path through the document and the schema together: a component's props schema
 * depends on the `type` written beside them.
 */

export type Step = string | number;

const str: JsonSchema = { type: 'string' };
const length: JsonSchema = { anyOf: [{ type: 'number' }, { type: 'string' }] };
/** A list of components: its items are resolved by their `type`. */
const COMPONENTS: JsonSchema = { type: 'array', items: { type: 'object', properties: { id: str, type: str, props: { type: 'object' } }, required: ['id', 'type', 'props'] } };
const AREA_TEXTS = { left: str, center: str, right: str };
const AREA: JsonSchema = { type: 'object', properties: { ...AREA_TEXTS, components: COMPONENTS, firstPage: { type: 'object', properties: { ...AREA_TEXTS, components: COMPONENTS } } } };
const VARIABLE_TYPES = ['string', 'number', 'integer', 'boolean', 'date', 'array', 'object', 'image'];
const FIELD: JsonSchema = { type: 'object', properties: { name: str, type: { type: 'string', enum: VARIABLE_TYPES }, required: { type: 'boolean' }, description: str }, required: ['name', 'type'] };

const DEFINITION: JsonSchema = {
  type: 'object',
  required: ['schema'],
  properties: {
    schema: {
      type: 'object',
      required: ['sections'],
      properties: {
        pageSize: { type: 'string', enum: ['A4', 'Letter', 'Legal', 'A3', 'A5'] },
        orientation: { type: 'string', enum: ['portrait', 'landscape'] },
        margins: { type: 'object', properties: { top: length, right: length, bottom: length, left: length } },
        theme: {
          type: 'object',
          properties: {
            fontFamily: str,
            fontSize: { type: 'number' },
            colors: { type: 'object', properties: Object.fromEntries(['primary', 'text', 'muted', 'border', 'background'].map((c) => [c, str])) },
          },
        },
        css: str,
        header: AREA,
        footer: AREA,
        locale: str,
        currency: str,
        format: str,
        sections: { type: 'array', items: { type: 'object', required: ['id', 'components'], properties: { id: str, title: str, components: COMPONENTS } } },
      },
    },
    variables: { type: 'array', items: { ...FIELD, properties: { ...FIELD.properties, defaultValue: {}, items: { type: 'object', properties: { type: { type: 'string', enum: VARIABLE_TYPES }, properties: { type: 'array', items: FIELD } } } } } },
    constants: { type: 'object' },
    calculatedVariables: { type: 'array', items: { type: 'object', required: ['name', 'expression'], properties: { name: str, expression: str } } },
  },
};

function child(node: unknown, step: Step): unknown {
  if (node && typeof node === 'object') return (node as Record<string | number, unknown>)[step];
  return undefined;
}

/** The schema of what sits at `path` in `document`, or undefined where the definition has nothing to say. */
export function schemaAt(path: readonly Step[], document: unknown, catalogue: readonly ComponentTypeInfo[]): JsonSchema | undefined {
  let schema: JsonSchema | undefined = DEFINITION;
  let node: unknown = document;
  // The component whose props the walk is in (its type decides them), and where its children are.
  for (const step of path) {
    if (!schema) return undefined;
    const parent = node;
    node = child(node, step);
    if (schema === COMPONENTS.items && step === 'type') {
      schema = { type: 'string', enum: catalogue.map((c) => c.type) };
      continue;
    }
    if (schema === COMPONENTS.items && step === 'props') {
      const info = catalogue.find((c) => c.type === child(parent, 'type'));
      schema = info ? withChildren(info) : { type: 'object' };
      continue;
    }
    if (typeof step === 'number') schema = schema.items ?? schema.anyOf?.find((a) => a.items)?.items;
    else schema = schema.properties?.[step] ?? schema.anyOf?.find((a) => a.properties?.[step])?.properties?.[step];
  }
  return schema;
}

/** A container's props schema with its children as component lists (the catalogue says only "objects"). */
function withChildren(info: ComponentTypeInfo): JsonSchema {
  const props = info.props;
  if (info.children === 'components') return { ...props, properties: { ...props.properties, components: COMPONENTS } };
  if (info.children === 'columns') {
    const columns = props.properties?.columns;
    const column = columns?.items ?? {};
    return { ...props, properties: { ...props.properties, columns: { ...columns, items: { ...column, properties: { ...column.properties, components: COMPONENTS } } } } };
  }
  return props;
}
