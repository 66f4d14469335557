import { noContent, ok, operationTable, pageOf, type JsonSchema } from '../openapi/operation';
import { resource } from '../openapi/resources';
import * as schema from './oauth-clients.schema';

/** OpenAPI operations of OAuth client credentials (api/identity/oauth-*.routes.ts, docs/oauth.md). */

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

export const oauthOperations = operationTable('OAuth', (op) => [
  op('post', '/api/oauth/token', 'Exchange client credentials for an access token', {
    description:
      'RFC 6749 §4.4. Parameters as application/x-www-form-urlencoded (or JSON); the client authenticates with HTTP Basic or client_id/client_secret in the body. Errors carry the RFC fields `error` and `error_description` next to the error body.',
    security: 'public',
    request: { body: schema.tokenRequestSchema, bodyType: 'form', example: { grant_type: 'client_credentials', scope: 'read_documents' } },
    responses: { 200: { ...ok('A bearer token', tokenAnswer, { access_token: 'fmo_…', token_type: 'Bearer', expires_in: 3600, scope: 'read_documents' }), headers: { 'Cache-Control': 'no-store' } } },
  }),
  op('post', '/api/oauth/clients', 'Create an OAuth client', {
    description: 'Project admins only, with a user session. The secret (`fmocs_…`) is shown once.',
    security: 'team',
    request: { body: schema.createOAuthClientSchema, example: { name: 'billing sync', permissions: { read_documents: true } } },
    responses: { 201: ok('The client, with its secret shown this once', resource('OAuthClientWithSecret')) },
  }),
  op('get', '/api/oauth/clients', 'List OAuth clients', { security: 'team', request: { query: schema.listOAuthClientsSchema }, responses: { 200: ok('A page of clients', pageOf(resource('OAuthClient'))) } }),
  op('get', '/api/oauth/clients/:id', 'Get an OAuth client', { security: 'team', request: { params: id }, responses: { 200: ok('The client', resource('OAuthClient')) } }),
  op('patch', '/api/oauth/clients/:id', 'Rename, re-permission or (de)activate an OAuth client', {
    description: 'Deactivating deletes its tokens; narrowing its flags narrows its live tokens.',
    security: 'team',
    request: { params: id, body: schema.updateOAuthClientSchema },
    responses: { 200: ok('The client', resource('OAuthClient')) },
  }),
  op('post', '/api/oauth/clients/:id/rotate-secret', 'Rotate the secret of an OAuth client', {
    description: 'The old secret and every token issued under it stop working at once.',
    security: 'team',
    request: { params: id },
    responses: { 200: ok('The client, with its new secret shown this once', resource('OAuthClientWithSecret')) },
  }),
  op('delete', '/api/oauth/clients/:id', 'Delete an OAuth client', { description: 'Its tokens stop working at once.', security: 'team', request: { params: id }, responses: { 204: noContent } }),
]);
