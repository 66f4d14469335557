import { noContent, ok, pageOf, type JsonSchema } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { describedOnly, operationsOf, routeTable } from '../openapi/route';
import * as schema from './oauth-clients.schema';

/**
 * The OAuth routes' declarations (docs/architecture.md "One declaration per route", docs/oauth.md):
 * mounted by oauth-token.routes.ts and oauth-clients.routes.ts, apart from them so that the OpenAPI
 * document is built without loading the services.
 */
const route = routeTable('OAuth');

const id = { id: 'The client id (UUID) or its clientId (`fmoc_…`)' };

const tokenAnswer: JsonSchema = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  properties: {
    access_token: { type: 'string', description: '`fmo_…`: send as `Authorization: Bearer`' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'Seconds the token lives (OAUTH_TOKEN_TTL_SECONDS)' },
    scope: { type: 'string', description: 'The permission flags granted, space-separated' },
  },
};

export const oauthEndpoints = {
  // Read by oauth-token.routes.ts itself (form or JSON, a repeated parameter refused, unknown ones ignored: RFC 6749 §3.2).
  token: describedOnly(route('post', '/api/oauth/token', 'Exchange client credentials for an access token', {
    description:
      'RFC 6749 §4.4. Parameters as application/x-www-form-urlencoded (or JSON); the client authenticates with HTTP Basic or client_id/client_secret in the body. Errors carry the RFC fields `error` and `error_description` next to the error body.',
    security: 'public',
    request: { body: schema.tokenRequestSchema, bodyType: 'form', example: { grant_type: 'client_credentials', scope: 'read_documents' } },
    responses: { 200: { ...ok('A bearer token', tokenAnswer, { access_token: 'fmo_…', token_type: 'Bearer', expires_in: 3600, scope: 'read_documents' }), headers: { 'Cache-Control': 'no-store' } } },
  })),
  create: route('post', '/api/oauth/clients', 'Create an OAuth client', {
    description: 'Project admins only, with a user session. The secret (`fmocs_…`) is shown once.',
    security: 'team',
    request: { body: schema.createOAuthClientSchema, example: { name: 'billing sync', permissions: { read_documents: true } } },
    responses: { 201: ok('The client, with its secret shown this once', resource('OAuthClientWithSecret')) },
  }),
  list: route('get', '/api/oauth/clients', 'List OAuth clients', { security: 'team', request: { query: schema.listOAuthClientsSchema }, responses: { 200: ok('A page of clients', pageOf(resource('OAuthClient'))) } }),
  get: route('get', '/api/oauth/clients/:id', 'Get an OAuth client', { security: 'team', request: { params: id }, responses: { 200: ok('The client', resource('OAuthClient')) } }),
  update: route('patch', '/api/oauth/clients/:id', 'Rename, re-permission or (de)activate an OAuth client', {
    description: 'Deactivating deletes its tokens; narrowing its flags narrows its live tokens.',
    security: 'team',
    request: { params: id, body: schema.updateOAuthClientSchema },
    responses: { 200: ok('The client', resource('OAuthClient')) },
  }),
  rotateSecret: route('post', '/api/oauth/clients/:id/rotate-secret', 'Rotate the secret of an OAuth client', {
    description: 'The old secret and every token issued under it stop working at once.',
    security: 'team',
    request: { params: id },
    responses: { 200: ok('The client, with its new secret shown this once', resource('OAuthClientWithSecret')) },
  }),
  delete: route('delete', '/api/oauth/clients/:id', 'Delete an OAuth client', { description: 'Its tokens stop working at once.', security: 'team', request: { params: id }, responses: { 204: noContent } }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const oauthOperations = operationsOf(oauthEndpoints);
