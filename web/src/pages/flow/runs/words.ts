import type { components } from '@formwork/client';

export type Run = components['schemas']['FlowRun'];
export type Approval = components['schemas']['FlowApproval'];
export type Delivery = components['schemas']['FlowDelivery'];
export type RunStatus =
  | 'validation_failed'
  | 'validated'
  | 'rendering'
  | 'review_required'
  | 'approved'
  | 'rejected'
  | 'expired'
  | 'delivering'
  | 'completed'
  | 'failed';

/** A run's status as a person reads it (docs/flow.md "Run statuses"), with its colour. */
export const RUN_STATUS: Record<RunStatus, { word: string; colour: string }> = {
  validation_failed: { word: 'Validation failed', colour: 'red' },
  validated: { word: 'Validated', colour: 'blue' },
  rendering: { word: 'Rendering', colour: 'blue' },
  review_required: { word: 'Waiting for approval', colour: 'yellow' },
  approved: { word: 'Approved', colour: 'teal' },
  rejected: { word: 'Rejected', colour: 'red' },
  expired: { word: 'Expired', colour: 'gray' },
  delivering: { word: 'Delivering', colour: 'blue' },
  completed: { word: 'Completed', colour: 'green' },
  failed: { word: 'Failed', colour: 'red' },
};

export const runStatus = (status: string) => RUN_STATUS[status as RunStatus] ?? { word: status, colour: 'gray' };

/** Statuses a run leaves by itself: pages read it again while it is in one. */
export const MOVING = new Set(['validated', 'rendering', 'approved', 'delivering']);

/** An approval's status as a person reads it. */
export const APPROVAL_STATUS: Record<Approval['status'], { word: string; colour: string }> = {
  pending: { word: 'Waiting', colour: 'yellow' },
  approved: { word: 'Approved', colour: 'green' },
  rejected: { word: 'Rejected', colour: 'red' },
  expired: { word: 'Expired', colour: 'gray' },
};

/** A delivery's status as a person reads it (as the Webhooks page says it). */
export function deliveryStatus(d: Pick<Delivery, 'status' | 'nextAttemptAt'>): { word: string; colour: string } {
  switch (d.status) {
    case 'completed':
      return { word: 'Delivered', colour: 'green' };
    case 'failed':
      return { word: 'Failed', colour: 'red' };
    case 'delivering':
      return d.nextAttemptAt ? { word: `Retrying at ${new Date(d.nextAttemptAt).toLocaleTimeString()}`, colour: 'yellow' } : { word: 'Sending', colour: 'blue' };
    default:
      return { word: 'Waiting to send', colour: 'gray' };
  }
}

export const SOURCES: Record<string, string> = { rest: 'REST API', mcp: 'MCP' };

/** A value as one line of text: strings as they are, lists by their length, objects as compact JSON. */
function shortValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 1 ? '1 item' : `${value.length} items`;
  return JSON.stringify(value);
}

/** The payload's fields as paths and values (`items[0].price`), depth first, for a readable table. */
export function payloadFields(payload: unknown, prefix = '', out: Array<[string, string]> = [], limit = 200): Array<[string, string]> {
  if (out.length >= limit) return out;
  if (Array.isArray(payload)) {
    if (payload.length === 0) out.push([prefix || '(payload)', 'no items']);
    payload.forEach((item, i) => payloadFields(item, `${prefix}[${i}]`, out, limit));
  } else if (payload && typeof payload === 'object') {
    const entries = Object.entries(payload as Record<string, unknown>);
    if (entries.length === 0) out.push([prefix || '(payload)', 'nothing']);
    for (const [key, value] of entries) payloadFields(value, prefix ? `${prefix}.${key}` : key, out, limit);
  } else {
    out.push([prefix || '(text)', shortValue(payload)]);
  }
  return out.slice(0, limit);
}

/** One line saying what a payload is about: its first few plain fields (`customer: Ada · amount: 42`). */
export function payloadSummary(payload: unknown): string {
  if (typeof payload === 'string') return payload.length > 120 ? `${payload.slice(0, 119)}…` : payload;
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return shortValue(payload);
  const parts = Object.entries(payload as Record<string, unknown>)
    .filter(([, v]) => v === null || typeof v !== 'object' || Array.isArray(v))
    .slice(0, 4)
    .map(([k, v]) => `${k}: ${shortValue(v)}`);
  const line = parts.join(' · ') || 'no plain fields';
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}
