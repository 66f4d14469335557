import type Joi from 'joi';

/**
 * One operation of the HTTP API as the OpenAPI document describes it. Each route declares its own
 * beside its handler (`api/<domain>/*.endpoints.ts`, api/openapi/route.ts); api/openapi/document.ts assembles them, and
 * tests/integration/openapi/coverage.test.ts fails when a route on the app's routers has no entry
 * here (or an entry no route). Bodies and queries are the Joi schemas the routes validate with.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call: `public` needs no credential; `user` a user's JWT; `team` a user's JWT acting on
 * the team X-Team-Id names; `project` that, an API key or an OAuth access token; `agent` a reporting agent's token; `review` a
 * Flow reviewer's session token; `embed` an embed token (docs/embedding.md) alone; `signedLink` the signature in a download link's query.
 */
export type Access = 'public' | 'user' | 'team' | 'project' | 'agent' | 'review' | 'embed' | 'signedLink';

/** A JSON Schema written out (for shapes no Joi schema describes, e.g. answers). */
export type JsonSchema = Record<string, unknown>;

export interface OperationResponse {
  description: string;
  /** A Joi schema or JSON Schema of the body; JSON answers without one are described as an open object. */
  schema?: Joi.Schema | JsonSchema;
  /** Default application/json; `none` for an answer without a body (204, redirects). */
  contentType?: string;
  example?: unknown;
  headers?: Record<string, string>;
}

export interface OperationRequest {
  body?: Joi.Schema;
  /** Default application/json. A multipart body is described by `body` (its fields) plus a binary `file`. */
  bodyType?: 'json' | 'multipart' | 'form' | 'text' | 'binary';
  /** A body the route takes without a Joi schema (e.g. a Flow payload, an uploaded CSV): described in words. */
  bodyDescription?: string;
  /** Further media types the body may have, beside the main one (e.g. gzip NDJSON uploads). */
  otherContent?: Record<string, JsonSchema>;
  query?: Joi.Schema;
  /** Path parameter descriptions; every `:param` of the path is a required string either way. */
  params?: Record<string, string>;
  example?: unknown;
}

export interface Operation {
  method: HttpMethod;
  /** The route's path as @koa/router has it (`/api/api-keys/:id`). */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Access;
  request?: OperationRequest;
  /** Takes an Idempotency-Key header (docs/idempotency.md): a repeat gets the stored answer. */
  idempotent?: boolean;
  /** Takes X-Formwork-Session: cookie, the dashboard's refresh token in a cookie (api/identity/browser-session.ts). */
  browserSession?: boolean;
  /** Also takes an embed token for the template in the path: the embedded designer's own calls (docs/embedding.md). */
  embedToken?: boolean;
  /** Success answers; the error answers (4xx/5xx with the error body) are added by the document. */
  responses: Record<number, OperationResponse>;
}

/** Answers used across tables. */
export const ok = (description: string, schema?: Joi.Schema | JsonSchema, example?: unknown): OperationResponse => ({ description, schema, example });
/** `{success: true, message}`: a resource deleted (answered 200 with a body, not 204). */
export const deleted = (description = 'Deleted'): OperationResponse => ({
  description,
  schema: { type: 'object', required: ['success', 'message'], properties: { success: { type: 'boolean', const: true }, message: { type: 'string' } }, additionalProperties: false },
});
export const noContent: OperationResponse = { description: 'Done; no body', contentType: 'none' };
export const html = (description: string): OperationResponse => ({ description, contentType: 'text/html', schema: { type: 'string' } });
export const redirect = (description: string): OperationResponse => ({ description, contentType: 'none', headers: { Location: 'Where to go next' } });

/** A page of a list: `{ data: [...], meta: { total, page, limit, totalPages, hasNextPage, hasPreviousPage } }`. */
/** `{data: [item…]}`: a whole list, not paged. */
export const listOf = (item: JsonSchema): JsonSchema => ({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: item } } });

export const pageOf = (item: JsonSchema = { type: 'object', additionalProperties: true }): JsonSchema => ({
  type: 'object',
  required: ['data', 'meta'],
  properties: { data: { type: 'array', items: item }, meta: { $ref: '#/components/schemas/PageMeta' } },
});
