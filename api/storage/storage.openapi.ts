import { operationTable } from '../openapi/operation';

/** OpenAPI operation of signed download links of the local storage (api/storage/storage.routes.ts; mounted only with local storage). */
export const storageOperations = operationTable('Files', (op) => [
  op('get', '/api/files/*key', 'Download a file through a signed link', {
    description: 'The links come in answers (a finished job\'s `downloadUrl`, a run\'s outputs); their query carries the expiry and signature, which are the credential. `key` is the storage key and may contain `/`. Only served when files are stored on local disk; with S3 the links point at the bucket.',
    security: 'signedLink',
    request: { params: { key: 'The storage key (may contain /)' } },
    responses: { 200: { description: 'The file, with its stored content type', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  }),
]);
