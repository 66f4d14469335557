import Joi from 'joi';
import { API_KEY_PERMISSIONS, type ApiKeyPermissions } from '../../domain/identity/api-keys';

/** The API key flags (api-keys.schema.ts), each a real boolean; unknown flags are refused. */
const permissions = Joi.object<Partial<ApiKeyPermissions>>(Object.fromEntries(API_KEY_PERMISSIONS.map((p) => [p, Joi.boolean().strict()])));
const name = Joi.string().trim().min(1).max(100);

export interface CreateOAuthClientInput {
  name: string;
  permissions?: Partial<ApiKeyPermissions>;
}

export const createOAuthClientSchema = Joi.object<CreateOAuthClientInput, true>({
  name: name.required(),
  permissions,
});

export interface UpdateOAuthClientInput {
  name?: string;
  permissions?: Partial<ApiKeyPermissions>;
  isActive?: boolean;
}

export const updateOAuthClientSchema = Joi.object<UpdateOAuthClientInput, true>({
  name,
  permissions,
  isActive: Joi.boolean().strict(),
});

export interface ListOAuthClientsQuery {
  page: number;
  limit: number;
  isActive?: boolean;
}

/** Pages like the API key list (spec, Limits §2): `page`, `limit` default 20, at most 100. */
export const listOAuthClientsSchema = Joi.object<ListOAuthClientsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  isActive: Joi.boolean(),
});

/**
 * The token request's parameters as the OpenAPI document shows them (api/identity/oauth.endpoints.ts).
 * The route reads them itself (api/identity/oauth-token.routes.ts: a repeated parameter is refused,
 * unknown ones are ignored as RFC 6749 §3.2 asks), so this schema describes, it does not decide.
 */
export const tokenRequestSchema = Joi.object({
  grant_type: Joi.string().valid('client_credentials').required().description('Only `client_credentials`'),
  scope: Joi.string().max(500).description('Space-separated permission flags, a subset of the client\'s; left out, all of them'),
  client_id: Joi.string().max(64).description('With client_secret, when HTTP Basic is not used'),
  client_secret: Joi.string().max(100),
}).unknown(true);
