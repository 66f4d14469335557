import { deleted, ok, operationTable, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import * as schema from './assets.schema';

/** OpenAPI operations of assets (api/assets/assets.routes.ts): reads as templates' reads, writes a member's session. */
export const assetOperations = operationTable('Assets', (op) => {
  const id = { id: 'The asset id' };
  return [
    op('post', '/api/assets', 'Upload an image or a font', {
      security: 'team',
      request: { body: schema.uploadAssetSchema, bodyType: 'multipart' },
      responses: { 201: ok('The asset', resource('Asset')) },
    }),
    op('get', '/api/assets', 'List assets', { security: 'project', request: { query: schema.listAssetsSchema }, responses: { 200: ok('A page of assets', pageOf(resource('Asset'))) } }),
    op('get', '/api/assets/:id', 'Get an asset', { security: 'project', request: { params: id }, responses: { 200: ok('The asset', resource('Asset')) } }),
    op('get', '/api/assets/:id/content', "An asset's bytes", {
      security: 'project',
      request: { params: id },
      responses: { 200: { description: 'The image or font, with its media type', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
    }),
    op('delete', '/api/assets/:id', 'Delete an asset', { security: 'team', request: { params: id }, responses: { 200: deleted() } }),
  ];
});
