import Joi from 'joi';
import { API_KEY_PERMISSIONS, type ApiKeyPermissions } from '../../domain/identity/api-keys';

/**
 * The four flags of the spec, `manage_gates` (Flow gate configuration), `read_runs` (Flow run payloads) and `read_reports`/`run_reports` (reporting), each a real boolean (`"true"` is refused: a permission should not
 * be granted by a string). Flags the spec does not name are refused as unknown fields.
 */
const permissions = Joi.object(Object.fromEntries(API_KEY_PERMISSIONS.map((p) => [p, Joi.boolean().strict()])));
const name = Joi.string().trim().min(1).max(100);

export interface CreateApiKeyInput {
  name: string;
  permissions?: Partial<ApiKeyPermissions>;
  expiresAt?: Date;
}

export const createApiKeySchema = Joi.object<CreateApiKeyInput, true>({
  name: name.required(),
  permissions,
  // An expiry already past would make a key that never works: refuse it instead.
  expiresAt: Joi.date().iso().greater('now'),
});

export interface UpdateApiKeyInput {
  name?: string;
  permissions?: Partial<ApiKeyPermissions>;
  isActive?: boolean;
}

export const updateApiKeySchema = Joi.object<UpdateApiKeyInput, true>({
  name,
  permissions,
  isActive: Joi.boolean().strict(),
});

export const API_KEY_SORT_FIELDS = ['createdAt', 'name', 'lastUsedAt', 'updatedAt'] as const;
export type ApiKeySortField = (typeof API_KEY_SORT_FIELDS)[number];

export interface ListApiKeysQuery {
  page: number;
  limit: number;
  sortBy: ApiKeySortField;
  sortOrder: 'asc' | 'desc';
  isActive?: boolean;
}

/** Spec, Limits §2: `page` and `limit` (default 20); a limit above 100 is refused, not clamped. */
export const listApiKeysSchema = Joi.object<ListApiKeysQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  sortBy: Joi.string().valid(...API_KEY_SORT_FIELDS).default('createdAt'),
  sortOrder: Joi.string().lowercase().valid('asc', 'desc').default('desc'),
  isActive: Joi.boolean(),
});
