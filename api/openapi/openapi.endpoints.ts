import { html, ok } from './operation';
import { operationsOf, routeTable } from './route';

/**
 * The declarations of the document itself and its reference page (docs/architecture.md "One
 * declaration per route"), mounted by openapi.routes.ts.
 */
const route = routeTable('Service');

export const openApiEndpoints = {
  document: route('get', '/api/openapi.json', 'This OpenAPI 3.1 document', { security: 'public', responses: { 200: ok('The document', { type: 'object', additionalProperties: true }) } }),
  page: route('get', '/api/docs', 'The API reference page (HTML)', { security: 'public', responses: { 200: html('Swagger UI reading /api/openapi.json') } }),
  file: route('get', '/api/docs/:file', 'A static file of the reference page', {
    security: 'public',
    request: { params: { file: 'One of the page\'s own scripts and stylesheets' } },
    responses: { 200: { description: 'The file', contentType: 'application/octet-stream', schema: { type: 'string' } } },
  }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const openApiOperations = operationsOf(openApiEndpoints);
