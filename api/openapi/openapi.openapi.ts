import { html, ok, operationTable } from './operation';

/** OpenAPI operations of the document itself and its reference page (api/openapi/openapi.routes.ts). */
export const openApiOperations = operationTable('Service', (op) => [
  op('get', '/api/openapi.json', 'This OpenAPI 3.1 document', { security: 'public', responses: { 200: ok('The document', { type: 'object', additionalProperties: true }) } }),
  op('get', '/api/docs', 'The API reference page (HTML)', { security: 'public', responses: { 200: html('Swagger UI reading /api/openapi.json') } }),
  op('get', '/api/docs/:file', 'A static file of the reference page', {
    security: 'public',
    request: { params: { file: 'One of the page\'s own scripts and stylesheets' } },
    responses: { 200: { description: 'The file', contentType: 'application/octet-stream', schema: { type: 'string' } } },
  }),
]);
