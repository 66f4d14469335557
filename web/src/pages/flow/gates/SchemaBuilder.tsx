import { ActionIcon, Badge, Button, Checkbox, Group, NumberInput, Paper, Select, Stack, TagsInput, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { enumValue, freshName, moved, PROPERTY_TYPES, renamed, retype, withKey, type GateProperty, type ObjectSchema, type PropertyType } from './model';

/**
 * The schema builder (docs/web.md "Flow: gates"): a row per field with its name, type and required,
 * the constraints its type takes (lengths, bounds, pattern, format, allowed values), nested fields
 * of objects and the items of arrays. Every control is named after the field's place ("Field 2.1
 * type"), which stays put while the field is renamed.
 */

const TYPE_WORDS: Record<PropertyType, string> = { string: 'Text', number: 'Number', integer: 'Whole number', boolean: 'Yes / no', array: 'List', object: 'Object' };
const FORMATS = [
  { value: 'email', label: 'E-mail address' },
  { value: 'url', label: 'URL (http, https)' },
  { value: 'date', label: 'Date (YYYY-MM-DD)' },
  { value: 'date-time', label: 'Date and time (RFC 3339)' },
  { value: 'uuid', label: 'UUID' },
];

const num = (v: string | number) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function SchemaBuilder({ schema, onChange, readOnly }: { schema: ObjectSchema; onChange: (next: ObjectSchema) => void; readOnly: boolean }) {
  return (
    <Stack gap="sm">
      <Fields properties={schema.properties} onChange={(properties) => onChange({ ...schema, properties })} readOnly={readOnly} place="Field" depth={0} />
      <Checkbox
        label="Refuse fields the schema does not list"
        description="Otherwise a payload may carry other fields too"
        checked={schema.additionalProperties === false}
        disabled={readOnly}
        onChange={(e) => {
          const refuse = e.currentTarget.checked;
          const { additionalProperties: _dropped, ...rest } = schema;
          onChange(refuse ? { ...rest, additionalProperties: false } : rest);
        }}
      />
    </Stack>
  );
}

/** The fields of an object (the root or a nested one), with "Add a field". */
function Fields({ properties, onChange, readOnly, place, depth, owner }: { properties: Record<string, GateProperty>; onChange: (next: Record<string, GateProperty>) => void; readOnly: boolean; place: string; depth: number; owner?: string }) {
  const entries = Object.entries(properties);
  const prefix = (i: number) => (depth === 0 ? `${place} ${i + 1}` : `${place}.${i + 1}`);
  return (
    <Stack gap="xs">
      {entries.length === 0 && (
        <Text size="sm" c="dimmed">
          {depth === 0 ? 'No fields yet: any object passes.' : 'No fields yet.'}
        </Text>
      )}
      {entries.map(([name, prop], i) => (
        <FieldRow
          key={i}
          label={prefix(i)}
          name={name}
          prop={prop}
          siblings={properties}
          readOnly={readOnly}
          depth={depth}
          first={i === 0}
          last={i === entries.length - 1}
          onRename={(to) => onChange(renamed(properties, name, to))}
          onChange={(next) => onChange({ ...properties, [name]: next })}
          onMove={(by) => onChange(moved(properties, i, by))}
          onRemove={() => onChange(Object.fromEntries(entries.filter(([k]) => k !== name)))}
        />
      ))}
      {!readOnly && (
        <Group>
          <Button size="xs" variant="light" onClick={() => onChange({ ...properties, [freshName(properties)]: { type: 'string' } })} aria-label={owner ? `Add a field to ${owner}` : 'Add a field'}>
            {owner ? `Add a field to ${owner}` : 'Add a field'}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

function FieldRow({
  label,
  name,
  prop,
  siblings,
  readOnly,
  depth,
  first,
  last,
  onRename,
  onChange,
  onMove,
  onRemove,
}: {
  label: string;
  name: string;
  prop: GateProperty;
  siblings: Record<string, GateProperty>;
  readOnly: boolean;
  depth: number;
  first: boolean;
  last: boolean;
  onRename: (to: string) => void;
  onChange: (next: GateProperty) => void;
  onMove: (by: number) => void;
  onRemove: () => void;
}) {
  // The name as typed: applied while it is a valid, free name; otherwise the problem is shown and the field keeps its name.
  const [text, setText] = useState(name);
  const [shownName, setShownName] = useState(name);
  if (shownName !== name) {
    setShownName(name);
    setText(name);
  }
  const nameProblem = text === name ? undefined : !text.trim() ? 'A field needs a name' : text.length > 128 ? 'At most 128 characters' : text in siblings ? 'Another field has this name' : undefined;
  return (
    <Paper withBorder p="xs" pl="sm" className={depth === 0 ? 'gate-field' : 'gate-field-nested'} role="group" aria-label={`${label}: ${name}`}>
      <Stack gap={6}>
        <Group gap="xs" align="flex-start" wrap="nowrap">
          <Badge variant="light" mt={30} aria-hidden style={{ flexShrink: 0 }}>
            {label.replace(/^Field /, '')}
          </Badge>
          <TextInput
            label="Name"
            aria-label={`${label} name`}
            value={text}
            readOnly={readOnly}
            error={nameProblem}
            flex={1}
            miw={110}
            onChange={(e) => {
              const next = e.currentTarget.value;
              setText(next);
              if (next.trim() && next.length <= 128 && !(next in siblings)) onRename(next);
            }}
            onBlur={() => setText(name)}
          />
          <Select
            label="Type"
            aria-label={`${label} type`}
            data={PROPERTY_TYPES.map((t) => ({ value: t, label: TYPE_WORDS[t] }))}
            value={prop.type}
            readOnly={readOnly}
            allowDeselect={false}
            w={140}
            style={{ flexShrink: 0 }}
            onChange={(t) => t && onChange(retype(prop, t as PropertyType))}
          />
          <Checkbox mt={32} label="Required" aria-label={`${label} required`} checked={prop.required === true} disabled={readOnly} onChange={(e) => onChange(withKey(prop, 'required', e.currentTarget.checked))} style={{ flexShrink: 0 }} />
          {!readOnly && (
            <Group gap={2} mt={28} wrap="nowrap" style={{ flexShrink: 0 }}>
              <ActionIcon variant="subtle" aria-label={`Move ${label} up`} disabled={first} onClick={() => onMove(-1)}>
                ↑
              </ActionIcon>
              <ActionIcon variant="subtle" aria-label={`Move ${label} down`} disabled={last} onClick={() => onMove(1)}>
                ↓
              </ActionIcon>
              <Button size="compact-xs" variant="subtle" color="red" aria-label={`Remove ${label}`} onClick={onRemove}>
                Remove
              </Button>
            </Group>
          )}
        </Group>
        <Constraints label={label} prop={prop} onChange={onChange} readOnly={readOnly} />
        <TextInput
          label="Description"
          aria-label={`${label} description`}
          size="xs"
          placeholder="What this field is (shown to people, checks nothing)"
          maxLength={1000}
          value={prop.description ?? ''}
          readOnly={readOnly}
          onChange={(e) => onChange(withKey(prop, 'description', e.currentTarget.value))}
        />
        {prop.type === 'object' && (
          <Stack gap="xs" pl="md">
            <Fields properties={prop.properties ?? {}} onChange={(properties) => onChange({ ...prop, properties })} readOnly={readOnly} place={label} depth={depth + 1} owner={name} />
            <Checkbox
              size="xs"
              label={`Refuse fields ${name} does not list`}
              aria-label={`${label} refuses unlisted fields`}
              checked={prop.additionalProperties === false}
              disabled={readOnly}
              onChange={(e) => {
                const refuse = e.currentTarget.checked;
                onChange(refuse ? { ...prop, additionalProperties: false } : withKey(prop, 'additionalProperties', undefined));
              }}
            />
          </Stack>
        )}
        {prop.type === 'array' && prop.items && <ItemsRow label={`${label} items`} name={name} prop={prop.items} readOnly={readOnly} depth={depth} onChange={(items) => onChange({ ...prop, items })} />}
      </Stack>
    </Paper>
  );
}

/** What every item of a list must be: a type, its constraints and, for objects, its fields. */
function ItemsRow({ label, name, prop, readOnly, depth, onChange }: { label: string; name: string; prop: GateProperty; readOnly: boolean; depth: number; onChange: (next: GateProperty) => void }) {
  return (
    <Paper withBorder p="xs" ml="md" className="gate-field-nested" role="group" aria-label={label}>
      <Stack gap={6}>
        <Group gap="xs" align="flex-end">
          <Text size="sm" fw={500} mb={8}>
            Each item of {name}
          </Text>
          <Select
            label="Item type"
            aria-label={`${label} type`}
            data={PROPERTY_TYPES.map((t) => ({ value: t, label: TYPE_WORDS[t] }))}
            value={prop.type}
            readOnly={readOnly}
            allowDeselect={false}
            w={150}
            onChange={(t) => t && onChange(retype(prop, t as PropertyType))}
          />
        </Group>
        <Constraints label={label} prop={prop} onChange={onChange} readOnly={readOnly} />
        {prop.type === 'object' && (
          <Stack pl="md">
            <Fields properties={prop.properties ?? {}} onChange={(properties) => onChange({ ...prop, properties })} readOnly={readOnly} place={label} depth={depth + 1} owner={`the items of ${name}`} />
          </Stack>
        )}
        {prop.type === 'array' && prop.items && <ItemsRow label={`${label} items`} name={`${name} items`} prop={prop.items} readOnly={readOnly} depth={depth + 1} onChange={(items) => onChange({ ...prop, items })} />}
      </Stack>
    </Paper>
  );
}

/** The constraints the field's type takes (docs/flow.md "ObjectSchema"). */
function Constraints({ label, prop, onChange, readOnly }: { label: string; prop: GateProperty; onChange: (next: GateProperty) => void; readOnly: boolean }) {
  const number = (key: 'min' | 'max' | 'minLength' | 'maxLength', word: string, integer = false) => (
    <NumberInput
      key={key}
      label={word}
      aria-label={`${label} ${word.toLowerCase()}`}
      size="xs"
      w={120}
      value={prop[key] ?? ''}
      readOnly={readOnly}
      allowDecimal={!integer}
      min={integer ? 0 : undefined}
      onChange={(v) => onChange(withKey(prop, key, num(v)))}
    />
  );
  const allowed = (
    <TagsInput
      key="enum"
      label="Allowed values"
      aria-label={`${label} allowed values`}
      description="Enter after each; none: any value"
      size="xs"
      miw={220}
      maw={360}
      value={(prop.enum ?? []).map(String)}
      readOnly={readOnly}
      onChange={(values) => onChange(withKey(prop, 'enum', values.map((v) => enumValue(prop.type, v)).filter((v) => v !== undefined)))}
    />
  );
  switch (prop.type) {
    case 'string':
      return (
        <Group gap="xs" align="flex-start" wrap="wrap">
          {number('minLength', 'Min length', true)}
          {number('maxLength', 'Max length', true)}
          <TextInput
            label="Pattern"
            aria-label={`${label} pattern`}
            description="RE2; anchor with ^…$"
            size="xs"
            w={220}
            ff="monospace"
            maxLength={512}
            value={prop.pattern ?? ''}
            readOnly={readOnly}
            onChange={(e) => onChange(withKey(prop, 'pattern', e.currentTarget.value))}
          />
          <Select label="Format" aria-label={`${label} format`} size="xs" w={190} placeholder="Any text" clearable data={FORMATS} value={prop.format ?? null} readOnly={readOnly} onChange={(v) => onChange(withKey(prop, 'format', (v ?? undefined) as GateProperty['format']))} />
          {allowed}
        </Group>
      );
    case 'number':
    case 'integer':
      return (
        <Group gap="xs" align="flex-start" wrap="wrap">
          {number('min', 'Minimum', prop.type === 'integer')}
          {number('max', 'Maximum', prop.type === 'integer')}
          {allowed}
        </Group>
      );
    case 'array':
      return (
        <Group gap="xs" align="flex-start" wrap="wrap">
          {number('min', 'Fewest items', true)}
          {number('max', 'Most items', true)}
        </Group>
      );
    default:
      return null;
  }
}
