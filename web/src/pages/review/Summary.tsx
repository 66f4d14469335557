import { Box, Button, Code, Paper, Stack, Text, Title } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { asDate } from './dates';

/**
 * The payload as a person reads it (docs/web.md "The reviewer's page"): each field under the name
 * the gate's schema gives it (its `title`, else its key in words, with its `description` beneath),
 * simple fields first, then groups (nested objects) and lists (arrays: each item a card, which
 * fits a phone better than a table), dates in the reader's time zone; the raw JSON one click away.
 */

export interface FieldSchema {
  type?: string;
  required?: boolean;
  title?: string;
  description?: string;
  format?: string;
  items?: FieldSchema;
  properties?: Record<string, FieldSchema>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `invoiceNumber`, `invoice_number` → "Invoice number" (as the approval e-mail does, domain/flow/review-summary.ts). */
function keyInWords(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

const labelOf = (key: string, schema?: FieldSchema) => schema?.title?.trim() || keyInWords(key);

function scalarText(value: unknown, schema?: FieldSchema): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number') return value.toLocaleString();
  if (typeof value === 'string') return asDate(value, schema?.format) ?? value;
  return JSON.stringify(value);
}

/**
 * Where a field goes: simple values, then groups, then lists; within each, required fields, then
 * titled ones (the stored schema keeps no author's order: jsonb gives keys shortest first).
 */
const rankOf = (value: unknown, schema?: FieldSchema) => (Array.isArray(value) ? 8 : isRecord(value) ? 4 : 0) + (schema?.required ? 0 : 2) + (schema?.title ? 0 : 1);

/** The fields of an object: the schema's, then any other key of the value. */
function fieldsOf(value: Record<string, unknown>, schema?: FieldSchema): Array<[string, unknown, FieldSchema | undefined]> {
  const props = schema?.properties ?? {};
  const keys = [...new Set([...Object.keys(props).filter((k) => k in value), ...Object.keys(value)])];
  return keys.map((k) => [k, value[k], props[k]] as [string, unknown, FieldSchema | undefined]).sort((a, b) => rankOf(a[1], a[2]) - rankOf(b[1], b[2]));
}

function Label({ text, description }: { text: string; description?: string }) {
  return (
    <Box component="dt">
      <Text component="span" display="block" size="sm" fw={600} c="dimmed">
        {text}
      </Text>
      {description && (
        <Text component="span" display="block" size="xs" c="dimmed">
          {description}
        </Text>
      )}
    </Box>
  );
}

function Fields({ value, schema, depth }: { value: Record<string, unknown>; schema?: FieldSchema; depth: number }) {
  const fields = fieldsOf(value, schema);
  if (fields.length === 0) return <Text c="dimmed">(empty)</Text>;
  return (
    <Stack component="dl" gap="sm" m={0}>
      {fields.map(([key, v, s]) => (
        <Field key={key} name={labelOf(key, s)} value={v} schema={s} depth={depth} />
      ))}
    </Stack>
  );
}

function Field({ name, value, schema, depth }: { name: string; value: unknown; schema?: FieldSchema; depth: number }): ReactNode {
  if (isRecord(value)) {
    return (
      <Box component="div">
        <Label text={name} description={schema?.description} />
        <Paper component="dd" withBorder p="sm" m={0} mt={4}>
          <Fields value={value} schema={schema} depth={depth + 1} />
        </Paper>
      </Box>
    );
  }
  if (Array.isArray(value)) {
    const items = schema?.items;
    const simple = value.every((v) => !isRecord(v) && !Array.isArray(v));
    return (
      <Box component="div">
        <Label text={`${name} (${value.length})`} description={schema?.description} />
        <Box component="dd" m={0} mt={4}>
          {value.length === 0 ? (
            <Text c="dimmed">none</Text>
          ) : simple ? (
            <Text style={{ overflowWrap: 'anywhere' }}>{value.map((v) => scalarText(v, items)).join(', ')}</Text>
          ) : (
            <Stack gap="xs" component="ol" p={0} m={0} style={{ listStyle: 'none' }}>
              {value.map((item, i) => (
                <Paper component="li" key={i} withBorder p="sm" aria-label={`${name}: ${i + 1} of ${value.length}`}>
                  <Text size="xs" c="dimmed" mb={4} aria-hidden>
                    {i + 1} of {value.length}
                  </Text>
                  {isRecord(item) ? <Fields value={item} schema={items} depth={depth + 1} /> : <Text>{JSON.stringify(item)}</Text>}
                </Paper>
              ))}
            </Stack>
          )}
        </Box>
      </Box>
    );
  }
  return (
    <Box component="div">
      <Label text={name} description={schema?.description} />
      <Text component="dd" m={0} style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
        {scalarText(value, schema)}
      </Text>
    </Box>
  );
}

export function Summary({ payload, schema }: { payload: unknown; schema: FieldSchema | null }) {
  const [raw, setRaw] = useState(false);
  return (
    <Paper component="section" aria-label="Summary" withBorder p="md" radius="md">
      <Title order={2} size="h3" mb="sm">
        Summary
      </Title>
      {isRecord(payload) ? (
        <Fields value={payload} schema={schema ?? undefined} depth={0} />
      ) : (
        <Text style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{typeof payload === 'string' ? payload : JSON.stringify(payload)}</Text>
      )}
      <Button variant="subtle" size="compact-sm" mt="md" px={0} onClick={() => setRaw((r) => !r)} aria-expanded={raw}>
        {raw ? 'Hide the raw JSON' : 'Show the raw JSON'}
      </Button>
      {raw && (
        <Box component="section" aria-label="Raw JSON" mt="xs">
          <Code block style={{ maxHeight: 400, overflow: 'auto', maxWidth: '100%' }}>
            {JSON.stringify(payload, null, 2)}
          </Code>
        </Box>
      )}
    </Paper>
  );
}
