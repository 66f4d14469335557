import { operationsOf, routeTable } from '../openapi/route';

/**
 * The declaration of signed download links of the local storage (docs/architecture.md "One
 * declaration per route"), mounted by storage.routes.ts, only with local storage.
 */
const route = routeTable('Files');

export const storageEndpoints = {
  download: route('get', '/api/files/*key', 'Download a file through a signed link', {
    description: 'The links come in answers (a finished job\'s `downloadUrl`, a run\'s outputs); their query carries the expiry and signature, which are the credential. `key` is the storage key and may contain `/`. Only served when files are stored on local disk; with S3 the links point at the bucket.',
    security: 'signedLink',
    request: { params: { key: 'The storage key (may contain /)' } },
    responses: { 200: { description: 'The file, with its stored content type', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const storageOperations = operationsOf(storageEndpoints);
