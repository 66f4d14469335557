import { listOf, noContent, ok, type JsonSchema } from '../openapi/operation';
import { operationsOf, routeTable } from '../openapi/route';
import { P12_MAX_BYTES } from '../../adapters/rendering/pdf-tools/p12';
import * as schema from './signing-certificates.schema';

/**
 * The signing certificates routes' declarations (docs/architecture.md "One declaration per route"),
 * mounted by signing-certificates.routes.ts: uploads and deletions a signed-in admin's, reads a
 * member's or an API key's with `generate_documents`. Apart from the handlers, so that the OpenAPI
 * document is built without loading the services.
 */
const str = { type: 'string' };
const time = { type: 'string', format: 'date-time' };

const certificate: JsonSchema = {
  type: 'object',
  description: 'A signing certificate as answers show it: what the certificate says of itself, never the file, its key or its password',
  required: ['id', 'name', 'subject', 'issuer', 'serialNumber', 'notBefore', 'notAfter', 'fingerprintSha256', 'timestampUrl', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'What `output.signature.certificateId` names' },
    name: str,
    subject: { ...str, description: 'The signer\'s distinguished name as RFC 4514 writes it (`C=DE, O=Acme GmbH, CN=Ada Signer`)' },
    issuer: str,
    serialNumber: { ...str, description: 'Hexadecimal' },
    notBefore: time,
    notAfter: time,
    fingerprintSha256: { ...str, description: 'SHA-256 of the certificate (DER), hexadecimal' },
    timestampUrl: { type: ['string', 'null'], description: 'The RFC 3161 timestamp authority: signatures are PAdES B-T' },
    createdAt: time,
  },
  additionalProperties: false,
};

const jsonUpload: JsonSchema = {
  type: 'object',
  required: ['p12', 'password'],
  properties: {
    p12: { type: 'string', contentEncoding: 'base64', description: `The PKCS#12 file, base64 (at most ${P12_MAX_BYTES} bytes decoded)` },
    password: { type: 'string', maxLength: 256, writeOnly: true },
    name: { type: 'string', maxLength: 200 },
    timestampUrl: { type: 'string', format: 'uri', maxLength: 2000 },
  },
  additionalProperties: false,
};

const route = routeTable('Signing certificates');
const id = { id: 'The certificate id' };

export const signingCertificateEndpoints = {
  /** Its body, multipart or JSON, is validated by its handler (signing-certificates.routes.ts): mount it without the body schema. */
  upload: route('post', '/api/signing-certificates', 'Upload a signing certificate (PKCS#12)', {
    description:
      `The PKCS#12 file in the part \`file\` (at most ${P12_MAX_BYTES} bytes; more is cut off while it streams, 413 ERR_REQ_002) with its \`password\`, or the same as JSON with the file base64 in \`p12\`. ` +
      'The file is opened when uploaded: a wrong password, no private key, an expired certificate or an excessive key-derivation iteration count is 400 ERR_SIGN_002 (`relatedInfo.reason`). ' +
      'A signed-in admin or owner only.',
    security: 'team',
    request: { body: schema.uploadCertificateFieldsSchema, bodyType: 'multipart', otherContent: { 'application/json': jsonUpload } },
    responses: { 201: ok('The certificate', certificate) },
  }),
  list: route('get', '/api/signing-certificates', 'List the project\'s signing certificates', { security: 'project', responses: { 200: ok('Every certificate of the project, newest first', listOf(certificate)) } }),
  get: route('get', '/api/signing-certificates/:id', 'Get a signing certificate', { security: 'project', request: { params: id }, responses: { 200: ok('The certificate', certificate) } }),
  delete: route('delete', '/api/signing-certificates/:id', 'Delete a signing certificate', {
    description: 'Jobs that ask for it afterwards fail with ERR_SIGN_001.',
    security: 'team',
    request: { params: id },
    responses: { 204: noContent },
  }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const signingCertificateOperations = operationsOf(signingCertificateEndpoints);
