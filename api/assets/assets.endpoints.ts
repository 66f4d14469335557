import { deleted, ok, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { operationsOf, routeTable } from '../openapi/route';
import * as schema from './assets.schema';

/**
 * The assets routes' declarations (docs/architecture.md "One declaration per route"), mounted by
 * assets.routes.ts: reads as templates' reads, writes a member's session. Apart from the handlers, so
 * that the OpenAPI document is built without loading the services.
 */
const route = routeTable('Assets');
const id = { id: 'The asset id' };

export const assetEndpoints = {
  /** Its multipart fields are validated by its handler (assets.routes.ts), after the check that it is multipart: mount it without the body schema. */
  upload: route('post', '/api/assets', 'Upload an image or a font', {
    security: 'team',
    request: { body: schema.uploadAssetSchema, bodyType: 'multipart' },
    responses: { 201: ok('The asset', resource('Asset')) },
  }),
  list: route('get', '/api/assets', 'List assets', { security: 'project', request: { query: schema.listAssetsSchema }, responses: { 200: ok('A page of assets', pageOf(resource('Asset'))) } }),
  get: route('get', '/api/assets/:id', 'Get an asset', { security: 'project', request: { params: id }, responses: { 200: ok('The asset', resource('Asset')) } }),
  content: route('get', '/api/assets/:id/content', "An asset's bytes", {
    security: 'project',
    request: { params: id },
    responses: { 200: { description: 'The image or font, with its media type', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  }),
  delete: route('delete', '/api/assets/:id', 'Delete an asset', { security: 'team', request: { params: id }, responses: { 200: deleted() } }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const assetOperations = operationsOf(assetEndpoints);
