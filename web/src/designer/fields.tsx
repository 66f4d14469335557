import { Button, Checkbox, ColorInput, Fieldset, FileButton, Group, NumberInput, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { api, errorText } from '../api';
import type { Field, Fields } from '@puckeditor/core';
import { useContext, useState } from 'react';
import { JsonField } from '../JsonField';
import type { JsonSchema } from './model';
import { DesignerHostContext } from './host';

/**
 * The properties panel's fields, generated from a component's JSON Schema (GET
 * /api/templates/component-types, converted from the Joi schema the API validates with): the designer
 * offers exactly what the API accepts. Each is a Puck custom field drawing Mantine inputs with their
 * labels: objects as groups, lists of objects with add, remove and move up or down (buttons named for
 * the item, which Puck's own list field does not give its add button). A cleared optional value is
 * `undefined`, so it leaves the definition instead of being saved empty.
 */

/** Props whose text is long: a text area. */
const LONG_TEXT = new Set(['text', 'html', 'css', 'visibleIf', 'expression', 'description']);

/** A readable label for a prop name: `valueAlign` → "Value align". */
export function labelOf(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

type Kind = 'color' | 'enum' | 'text' | 'longText' | 'number' | 'boolean' | 'length' | 'object' | 'list' | 'json';

/** A schema's scalar alternatives: `anyOf` flattened. */
function alternatives(schema: JsonSchema): JsonSchema[] {
  return schema.anyOf ? schema.anyOf.flatMap(alternatives) : [schema];
}

function kindOf(name: string, schema: JsonSchema): Kind {
  if (schema.format === 'color') return 'color';
  const alts = alternatives(schema);
  const types = new Set(alts.map((a) => a.type));
  if (alts.length > 1) {
    if (alts.every((a) => a.enum)) return 'enum';
    if ([...types].every((t) => t === 'string')) return 'text';
    if (types.size === 2 && types.has('number') && types.has('string')) return 'length';
    return 'json';
  }
  if (schema.enum) return 'enum';
  if (schema.type === 'string') return LONG_TEXT.has(name) || (schema.maxLength ?? 0) > 5000 ? 'longText' : 'text';
  if (schema.type === 'number' || schema.type === 'integer') return 'number';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'object' && schema.properties && Object.keys(schema.properties).length > 0) return 'object';
  if (schema.type === 'array' && schema.items?.type === 'object' && schema.items.properties) return 'list';
  return 'json';
}

/** A length or size: a plain number is millimetres (the API's reading), anything else the text as typed. */
function lengthValue(text: string): string | number | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  return /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}


function customField(label: string, render: (props: { value: unknown; onChange: (v: unknown) => void; readOnly?: boolean }) => React.ReactElement): Field {
  return { type: 'custom', label, render: ({ value, onChange, readOnly }) => render({ value, onChange, readOnly }) };
}

interface InputProps {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  onChange: (value: unknown) => void;
  readOnly?: boolean;
}

/** One prop's input, by the kind of its schema; objects and lists hold inputs of their own. */
function SchemaInput({ name, schema, required, value, onChange, readOnly }: InputProps) {
  const label = labelOf(name);
  const kind = kindOf(name, schema);
  switch (kind) {
    case 'color':
      return <ColorInput label={label} withAsterisk={required} value={typeof value === 'string' ? value : ''} readOnly={readOnly} format="hex" withEyeDropper={false} onChange={(v) => onChange(v === '' ? undefined : v)} />;
    case 'enum': {
      const options = alternatives(schema).flatMap((a) => a.enum ?? []);
      return (
        <Select
          label={label}
          withAsterisk={required}
          data={options.map(String)}
          value={value === undefined ? null : String(value)}
          clearable={!required}
          readOnly={readOnly}
          allowDeselect={!required}
          onChange={(v) => onChange(v === null ? undefined : options.find((o) => String(o) === v))}
        />
      );
    }
    case 'text':
    case 'longText': {
      const text = typeof value === 'string' ? value : '';
      const change = (next: string) => onChange(next === '' && !required ? undefined : next);
      return kind === 'longText' ? (
        <Textarea label={label} withAsterisk={required} value={text} readOnly={readOnly} autosize minRows={2} maxRows={10} onChange={(e) => change(e.currentTarget.value)} />
      ) : (
        <TextInput label={label} withAsterisk={required} value={text} readOnly={readOnly} onChange={(e) => change(e.currentTarget.value)} />
      );
    }
    case 'number':
      return (
        <NumberInput
          label={label}
          withAsterisk={required}
          value={typeof value === 'number' ? value : ''}
          readOnly={readOnly}
          min={schema.minimum}
          max={schema.maximum}
          allowDecimal={schema.type !== 'integer'}
          onChange={(v) => onChange(v === '' ? undefined : Number(v))}
        />
      );
    case 'boolean':
      return <Checkbox label={labelOf(name)} checked={value === true} disabled={readOnly} onChange={(e) => onChange(e.currentTarget.checked)} />;
    case 'length':
      return (
        <TextInput
          label={label}
          withAsterisk={required}
          description="Millimetres, or a length such as 20mm, 1in, 12pt"
          value={value === undefined ? '' : String(value)}
          readOnly={readOnly}
          onChange={(e) => onChange(lengthValue(e.currentTarget.value))}
        />
      );
    case 'object':
      return <ObjectInput label={label} schema={schema} value={value} onChange={onChange} readOnly={readOnly} />;
    case 'list':
      return <ListInput name={name} label={label} schema={schema} value={value} onChange={onChange} readOnly={readOnly} />;
    default:
      return <JsonField label={label} required={required} value={value} onChange={onChange} readOnly={readOnly} description="JSON" />;
  }
}

/** An object's props as a group; an object left with no value leaves the definition. */
function ObjectInput({ label, schema, value, onChange, readOnly }: { label: string; schema: JsonSchema; value: unknown; onChange: (v: unknown) => void; readOnly?: boolean }) {
  const current = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const required = new Set(schema.required ?? []);
  return (
    <Fieldset legend={label} variant="filled" p="xs">
      <Stack gap="xs">
        {Object.entries(schema.properties ?? {}).map(([key, prop]) => (
          <SchemaInput
            key={key}
            name={key}
            schema={prop}
            required={required.has(key)}
            value={current[key]}
            readOnly={readOnly}
            onChange={(v) => {
              const next = { ...current, [key]: v };
              if (v === undefined) delete next[key];
              onChange(Object.keys(next).length ? next : undefined);
            }}
          />
        ))}
      </Stack>
    </Fieldset>
  );
}

/** A list of objects (a table's columns, key-value items, variables): each item's fields, with add, remove and move. */
function ListInput({ name, label, schema, value, onChange, readOnly }: { name: string; label: string; schema: JsonSchema; value: unknown; onChange: (v: unknown) => void; readOnly?: boolean }) {
  const items = Array.isArray(value) ? (value as unknown[]) : [];
  const itemSchema = schema.items!;
  const noun = labelOf(name).toLowerCase().replace(/s$/, '');
  const set = (next: unknown[]) => onChange(next);
  const canAdd = !readOnly && (schema.maxItems === undefined || items.length < schema.maxItems);
  const canRemove = !readOnly && items.length > (schema.minItems ?? 0);
  return (
    <Fieldset legend={label} variant="filled" p="xs">
      <Stack gap="xs">
        {items.map((item, i) => {
          const position = `${noun} ${i + 1}`;
          return (
            <Stack key={i} gap={4} className="designer-list-item">
              <ObjectInput label={position.charAt(0).toUpperCase() + position.slice(1)} schema={itemSchema} value={item} readOnly={readOnly} onChange={(v) => set(items.map((old, n) => (n === i ? (v ?? {}) : old)))} />
              {!readOnly && (
                <Group gap={4}>
                  <Button size="compact-xs" variant="subtle" disabled={i === 0} onClick={() => set([...items.slice(0, i - 1), items[i], items[i - 1], ...items.slice(i + 1)])} aria-label={`Move ${position} up`}>
                    Up
                  </Button>
                  <Button size="compact-xs" variant="subtle" disabled={i === items.length - 1} onClick={() => set([...items.slice(0, i), items[i + 1], items[i], ...items.slice(i + 2)])} aria-label={`Move ${position} down`}>
                    Down
                  </Button>
                  <Button size="compact-xs" variant="subtle" color="red" disabled={!canRemove} onClick={() => set(items.filter((_, n) => n !== i))} aria-label={`Remove ${position}`}>
                    Remove
                  </Button>
                </Group>
              )}
            </Stack>
          );
        })}
        {canAdd && (
          <Button size="compact-sm" variant="light" onClick={() => set([...items, defaultsFor(itemSchema)])}>
            Add {noun}
          </Button>
        )}
      </Stack>
    </Fieldset>
  );
}

/** The field of one prop: a Puck custom field drawing its input. */
export function fieldFor(name: string, schema: JsonSchema, required: boolean): Field {
  return customField(labelOf(name), ({ value, onChange, readOnly }) => <SchemaInput name={name} schema={schema} required={required} value={value} onChange={onChange} readOnly={readOnly} />);
}

/** The fields of an object schema's props, in the schema's order, leaving out `skip` (slots). */
export function fieldsFor(schema: JsonSchema, skip: readonly string[] = []): Fields {
  const required = new Set(schema.required ?? []);
  const fields: Fields = {};
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (!skip.includes(name)) fields[name] = fieldFor(name, prop, required.has(name));
  }
  return fields;
}

/** Values for a new item of a list: its required text fields filled so it is valid at once where possible. */
function defaultsFor(schema: JsonSchema): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const prop = schema.properties?.[name];
    if (prop?.type === 'string' && !prop.enum) values[name] = labelOf(name);
    else if (prop?.enum) values[name] = prop.enum[0];
  }
  return values;
}


/**
 * An image's `src`: its text (a data: URL, an allowed http(s) URL, a placeholder, `asset:<id>`) and
 * "Upload a picture", which stores the file as one of the project's assets (POST /api/assets: its
 * bytes are checked there) and names it by its reference.
 */
function PictureInput({ value, onChange, readOnly }: { value: unknown; onChange: (v: unknown) => void; readOnly?: boolean }) {
  const { uploads } = useContext(DesignerHostContext);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const upload = async (file: File | null) => {
    if (!file) return;
    setBusy(true);
    setError(undefined);
    const form = new FormData();
    form.append('file', file);
    const { data, error: failure } = await api.POST('/api/assets', { body: form as never, bodySerializer: (body: unknown) => body as FormData });
    setBusy(false);
    if (data) onChange((data as { reference: string }).reference);
    else setError(errorText(failure));
  };
  return (
    <Stack gap={4}>
      <TextInput label="Src" withAsterisk description="A picture: uploaded (asset:…), a data: URL, an allowed web address or a placeholder" value={typeof value === 'string' ? value : ''} readOnly={readOnly} onChange={(e) => onChange(e.currentTarget.value)} />
      {!readOnly && uploads && (
        <FileButton onChange={(file) => void upload(file)} accept="image/png,image/jpeg,image/webp,image/svg+xml">
          {(props) => (
            <Button {...props} size="compact-sm" variant="light" loading={busy}>
              Upload a picture
            </Button>
          )}
        </FileButton>
      )}
      {error && (
        <Text size="sm" c="red" role="alert">
          {error}
        </Text>
      )}
    </Stack>
  );
}

/** The field of an image's `src`, with its upload. */
export const pictureField: Field = customField('Src', ({ value, onChange, readOnly }) => <PictureInput value={value} onChange={onChange} readOnly={readOnly} />);
