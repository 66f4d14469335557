import type Joi from 'joi';
import type { EntityManager } from 'typeorm';
import type { ApiKeyPermissions } from '../../domain/identity/api-keys';
import type { Services } from '../../platform/services';
import type { FlowApiDeps } from '../flow/flow-api';
import type { ProjectRequirement, Scope } from '../middleware/guards';
import { withIdempotencyKey } from '../middleware/idempotency';
import { PAGE_META_SCHEMA } from '../page-meta';

/** What a tool call acts with: the caller's scope and flags, and the services the REST routes use. */
export interface ToolContext {
  scope: Scope;
  /** The principal's kind: `apiKey`, or another credential held to the API-key rules (OAuth access tokens). */
  credentialKind: string;
  permissions: ApiKeyPermissions;
  services: Services;
  flow: FlowApiDeps;
}

export type JsonObjectSchema = { type: 'object'; properties: Record<string, object>; required?: string[]; [k: string]: unknown };

/**
 * One MCP tool: its JSON Schemas as tools/list shows them, the REST route's access rule, the Joi
 * schema its arguments are checked with (REST's own where the route has one), and the call.
 */
export interface McpTool<I = any> {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonObjectSchema;
  outputSchema: JsonObjectSchema;
  annotations: { readOnlyHint: boolean; idempotentHint: boolean; destructiveHint: boolean; openWorldHint: boolean };
  access: ProjectRequirement;
  args: Joi.Schema<I>;
  run(ctx: ToolContext, input: I): Promise<Record<string, unknown>>;
}

/** Read tools: nothing changes, the same call answers the same. */
export const READ_ONLY = { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false } as const;

/** Tools that create something (a run, a job): a repeat creates another; nothing is overwritten or deleted. */
export const CREATES = { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false } as const;

/** `{data, meta}` of a REST list, for output schemas. */
export function pageSchema(item: object): JsonObjectSchema {
  return {
    type: 'object',
    properties: {
      data: { type: 'array', items: item },
      meta: PAGE_META_SCHEMA,
    },
    required: ['data', 'meta'],
  };
}

/** Paging arguments as REST takes them (`page` from 1, `limit` at most 100). */
export const PAGE_ARGS = {
  page: { type: 'integer', minimum: 1, default: 1, description: 'Page number, from 1' },
  limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Items per page (at most 100)' },
} as const;

/** The `idempotencyKey` argument of the tools that create (docs/idempotency.md). */
export const IDEMPOTENCY_KEY_ARG = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'Any unique string (a UUID): calling again with the same key and arguments returns the first call\'s job or run instead of creating another',
} as const;

/** Output property telling that the answer is the first call's, from its `idempotencyKey`. */
export const IDEMPOTENT_REPLAYED = { type: 'boolean', description: 'true when this answers an earlier call with the same idempotencyKey' } as const;

/**
 * Runs a creating tool under its `idempotencyKey` (none: just creates). The key lives with the REST
 * ones, per project; the operation is named `MCP <tool>` in the fingerprint, so a REST request and a
 * tool call never share a key's answer.
 */
export async function keyedCall<T extends Record<string, unknown>>(
  ctx: ToolContext,
  tool: string,
  key: string | undefined,
  args: Record<string, unknown>,
  create: (store?: (m: EntityManager, answer: T) => Promise<void>) => Promise<T>,
): Promise<{ answer: T; replayed: boolean }> {
  if (key === undefined) return { answer: await create(), replayed: false };
  return withIdempotencyKey(ctx.services, { projectId: ctx.scope.projectId, key, method: 'MCP', path: `tools/${tool}`, body: args }, create);
}
