import type { ObjectSchema, Property } from './gate.types';

/**
 * What an approver is asked to decide on, in one line (the approval e-mail, docs/flow.md "Review
 * page"): the payload's first simple fields, each named as the gate's schema names it (the field's
 * `title`, else its key in words), lists by their length. The reviewer's page shows all of it.
 */

/** `invoiceNumber`, `invoice_number` → "Invoice number". */
function keyInWords(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

function fieldLabel(key: string, property?: Pick<Property, 'title'>): string {
  return property?.title?.trim() || keyInWords(key);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.replace(/\s+/g, ' ').trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** "Customer: Ada Lovelace · Total: 1200 · Items: 3" (at most `maxLength` characters). */
export function summaryLine(payload: unknown, schema: ObjectSchema | null | undefined, maxFields = 4, maxLength = 160): string {
  if (typeof payload === 'string') return clip(payload.replace(/\s+/g, ' ').trim(), maxLength);
  if (!isRecord(payload)) return '';
  const properties = schema?.properties ?? {};
  // The schema's fields first, then the payload's other keys; required, then titled fields first and
  // lists after simple values (jsonb keeps no author's order: keys come back shortest first).
  const keys = [...new Set([...Object.keys(properties).filter((k) => k in payload), ...Object.keys(payload)])];
  const rank = (k: string) => (properties[k]?.required ? 0 : 2) + (properties[k]?.title ? 0 : 1) + (Array.isArray(payload[k]) ? 4 : 0);
  keys.sort((a, b) => rank(a) - rank(b));
  const parts: string[] = [];
  for (const key of keys) {
    if (parts.length >= maxFields) break;
    const value = payload[key];
    const text = Array.isArray(value) ? String(value.length) : scalarText(value);
    if (text === undefined || text === '') continue;
    parts.push(`${fieldLabel(key, properties[key])}: ${clip(text, 60)}`);
  }
  return clip(parts.join(' · '), maxLength);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
