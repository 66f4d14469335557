import type { JsonSchema } from '../openapi/operation';

/** The answers of the review API (docs/flow.md "Review API"), typed for the reviewer's page and every client. */
const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'], ...(Array.isArray(s.enum) ? { enum: [...(s.enum as unknown[]), null] } : {}) });

export const authenticated: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['expiresIn', 'approvalId'],
  properties: {
    reviewToken: { type: 'string', description: '`fmrv_…`; left out in a cookie session (X-Formwork-Session: cookie)' },
    expiresIn: { type: 'integer', description: 'Seconds' },
    approvalId: { type: 'string', format: 'uuid', description: 'The approval the link was sent for' },
  },
};

export const linkStatus: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['state', 'canResend', 'decision', 'decidedAt', 'expiresAt'],
  properties: {
    state: { type: 'string', enum: ['valid', 'used', 'replaced', 'expired', 'decided', 'invalid'] },
    canResend: { type: 'boolean', description: 'Whether POST /api/flow/review/resend sends a new link from this one' },
    decision: nullable({ type: 'string', enum: ['approved', 'rejected', 'expired'] }),
    decidedAt: nullable(time),
    expiresAt: nullable(time),
  },
};

export const sent: JsonSchema = { type: 'object', additionalProperties: false, required: ['success'], properties: { success: { type: 'boolean' } } };
export const decided: JsonSchema = { type: 'object', additionalProperties: false, required: ['success', 'decision'], properties: { success: { type: 'boolean' }, decision: { type: 'string', enum: ['approved', 'rejected'] } } };

const approvalProperties = {
  id: str,
  runId: str,
  runShortId: str,
  runStatus: str,
  gateId: str,
  gateName: str,
  approverEmail: str,
  approverName: nullable(str),
  status: { type: 'string', enum: ['pending', 'approved', 'rejected', 'expired'] },
  comment: nullable(str),
  decidedAt: nullable(time),
  expiresAt: nullable(time),
  sentCount: { type: 'integer' },
  lastSentAt: nullable(time),
  createdAt: time,
};

export const approval: JsonSchema = { type: 'object', additionalProperties: false, required: Object.keys(approvalProperties), properties: approvalProperties };

/** A field of a gate's ObjectSchema (docs/flow.md "ObjectSchema"), as far as the page reads it. */
const property: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    type: str,
    title: str,
    description: str,
    format: str,
    enum: { type: 'array', items: {} },
    items: { type: 'object', additionalProperties: true },
    properties: { type: 'object', additionalProperties: { type: 'object', additionalProperties: true } },
  },
};

export const detail: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(approvalProperties), 'payload', 'artefactUrl', 'schema', 'submittedAt', 'document'],
  properties: {
    ...approvalProperties,
    payload: { description: 'The submitted payload: an object (variables mode) or text (freetext mode)' },
    artefactUrl: nullable({ type: 'string', description: 'Signed URL of the rendered document (with S3, the bucket\'s origin)' }),
    schema: nullable({ type: 'object', description: 'The ObjectSchema the payload was checked against (its version)', properties: { type: str, properties: { type: 'object', additionalProperties: property } }, additionalProperties: true }),
    submittedAt: nullable(time),
    document: nullable({ type: 'object', required: ['contentType', 'url'], properties: { contentType: str, url: { type: 'string', description: 'This origin\'s path of the bytes (review token)' } } }),
  },
};
