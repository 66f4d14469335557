import Joi from 'joi';
import { joiToJsonSchema } from './joi-schema';
import type { Access, JsonSchema, Operation, OperationResponse } from './operation';
import { RESOURCE_SCHEMAS } from './resources';
import { PAGE_META_SCHEMA } from '../page-meta';

/**
 * Assembles the OpenAPI 3.1 document from the operation tables: Joi bodies and queries become JSON
 * Schema (joi-to-json, OpenAPI 3.1 mode), every operation gets the error answers with the spec's
 * error body (domain/errors.ts `errorBody`, rendered by api/middleware/errors.ts), and the
 * credentials of `Access` become security schemes.
 */

/** JSON Schema of a Joi schema, as the document and the conversion test use it. */
export function toJsonSchema(schema: Joi.Schema | JsonSchema): JsonSchema {
  return Joi.isSchema(schema) ? joiToJsonSchema(schema as Joi.Schema) : schema;
}

/** `/api/keys/:id` → `/api/keys/{id}`; `/api/files/*key` → `/api/files/{key}`. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

function pathParams(koaPath: string): string[] {
  return [...koaPath.matchAll(/[:*]([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

/** `post /api/api-keys/:id/revoke` → `postApiKeysByIdRevoke`; the `api` segment is left out. */
export function operationId(op: Pick<Operation, 'method' | 'path'>): string {
  const words = op.path
    .split('/')
    .filter((s) => s && s !== 'api')
    .map((s) => (/^[:*]/.test(s) ? `by-${s.slice(1)}` : s))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1));
  return op.method + (words.join('') || 'Root');
}

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  public: [],
  user: [{ userJwt: [] }],
  team: [{ userJwt: [] }],
  project: [{ userJwt: [] }, { apiKey: [] }, { oauthClientCredentials: [] }],
  agent: [{ agentToken: [] }],
  review: [{ reviewToken: [] }],
  embed: [{ embedToken: [] }],
  signedLink: [],
};

const securitySchemes = {
  userJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A user access token from POST /api/auth/login (15 minutes; renew with POST /api/auth/refresh). With several teams, X-Team-Id picks the one the call acts on.',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fm_…',
    description: 'A project API key (`fm_…`) sent as a bearer token; what it may do is set by its permission flags (POST /api/api-keys).',
  },
  oauthClientCredentials: {
    type: 'oauth2',
    description: 'OAuth 2.0 client credentials: exchange a client id and secret for a short-lived bearer token; it works wherever an API key does, with the client\'s permission flags.',
    flows: { clientCredentials: { tokenUrl: '/api/oauth/token', scopes: {} } },
  },
  agentToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fmag_…',
    description: 'A reporting agent\'s token (`fmag_…`, shown when the agent is created or its token rotated); only the agent protocol under /api/agents/me takes it.',
  },
  reviewToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fmrv_…',
    description: 'A Flow reviewer\'s session token (`fmrv_…`) from POST /api/flow/review/authenticate (magic link).',
  },
  embedToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fmed_…',
    description: 'An embed token (`fmed_…`) from POST /api/templates/:id/embed-tokens: opens one template\'s designer in another site\'s page, and only the designer\'s own calls (docs/embedding.md).',
  },
};

const errorSchema: JsonSchema = {
  type: 'object',
  description: 'Every failure is answered with this body; the codes are catalogued in docs/errors.md.',
  required: ['statusCode', 'code', 'message', 'timestamp', 'path'],
  properties: {
    statusCode: { type: 'integer', description: 'The HTTP status, repeated' },
    code: { type: 'string', description: 'A catalogued error code (docs/errors.md)', examples: ['ERR_VALID_001'] },
    message: { type: 'string' },
    timestamp: { type: 'string', format: 'date-time' },
    path: { type: 'string', description: 'The request path, without its query' },
    retryAfter: { type: 'integer', description: 'Seconds to wait before trying again (every 429, and answers whose error names a wait)' },
    relatedInfo: { type: 'object', additionalProperties: true, description: 'Details: `field` and `errors` (`[{path, code, message}]`, every problem) for a validation error, `required`/`granted` for a refused permission, `allowed` for a 405, `received`/`accepted` for a 415, …' },
  },
  additionalProperties: false,
};

const errorExample = (statusCode: number, code: string, message: string, relatedInfo?: Record<string, unknown>) => ({
  statusCode,
  code,
  message,
  timestamp: '2026-01-01T12:00:00.000Z',
  path: '/api/api-keys',
  ...(relatedInfo ? { relatedInfo } : {}),
});

const ERROR_RESPONSES: Record<string, { status: number; description: string; example: unknown; headers?: Record<string, string> }> = {
  BadRequest: { status: 400, description: 'The request is malformed or a field is invalid', example: errorExample(400, 'ERR_VALID_005', "'name' is required", { field: 'name', errors: [{ path: 'name', code: 'ERR_VALID_005', message: "'name' is required" }] }) },
  Unauthorized: { status: 401, description: 'No credential, or one that is invalid or expired', example: errorExample(401, 'ERR_AUTH_003', 'Authentication required') },
  Forbidden: { status: 403, description: 'The credential may not do this (role or permission flag)', example: errorExample(403, 'ERR_AUTH_005', 'Insufficient permissions', { required: 'admin', granted: 'member' }) },
  NotFound: { status: 404, description: 'Nothing with this id in the caller\'s project', example: errorExample(404, 'ERR_REQ_003', 'Not found') },
  MethodNotAllowed: {
    status: 405,
    description: 'The path does not take this method; the `Allow` header lists the methods it takes (docs/errors.md "Methods and content types")',
    example: errorExample(405, 'ERR_REQ_006', 'PUT is not allowed on /api/api-keys; it takes HEAD, GET, POST', { allowed: ['HEAD', 'GET', 'POST'] }),
    headers: { Allow: 'The methods the path takes' },
  },
  UnsupportedMediaType: {
    status: 415,
    description: 'A body of a content type the operation does not take; the answer names the type received and those accepted',
    example: errorExample(415, 'ERR_REQ_007', 'POST /api/api-keys takes application/json, not text/plain', { field: 'Content-Type', received: 'text/plain', accepted: ['application/json'] }),
  },
  TooManyRequests: { status: 429, description: 'Rate limited; wait `retryAfter` seconds (also the Retry-After header)', example: { ...errorExample(429, 'ERR_RATE_001', 'Too many requests'), retryAfter: 12 } },
  ServerError: { status: 500, description: 'An unexpected failure; the request id (X-Request-Id) finds it in the logs', example: errorExample(500, 'ERR_INTERNAL_001', 'Internal server error') },
};

function errorResponses(op: Operation): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const add = (name: string) => {
    out[String(ERROR_RESPONSES[name].status)] = { $ref: `#/components/responses/${name}` };
  };
  add('BadRequest');
  if (op.security !== 'public') add('Unauthorized');
  if (op.security !== 'public') add('Forbidden');
  if (pathParams(op.path).length > 0) add('NotFound');
  // An operation that answers 405 or 415 in a form of its own (MCP's JSON-RPC errors) keeps it.
  if (!op.responses[405]) add('MethodNotAllowed');
  if (requestBody(op) && !op.responses[415]) add('UnsupportedMediaType');
  add('TooManyRequests');
  add('ServerError');
  return out;
}

function response(r: OperationResponse): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description };
  if (r.headers) out.headers = Object.fromEntries(Object.entries(r.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));
  if (r.contentType === 'none') return out;
  const schema = r.schema ? toJsonSchema(r.schema) : { type: 'object', additionalProperties: true };
  out.content = { [r.contentType ?? 'application/json']: { schema, ...(r.example !== undefined ? { example: r.example } : {}) } };
  return out;
}

function queryParameters(query: Joi.Schema): unknown[] {
  const json = toJsonSchema(query) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema as { description?: string } & JsonSchema;
    return { name, in: 'query', required: (json.required ?? []).includes(name), ...(description ? { description } : {}), schema: rest };
  });
}

function requestBody(op: Operation): Record<string, unknown> | undefined {
  const req = op.request;
  if (!req || (!req.body && !req.bodyDescription)) return undefined;
  const type = req.bodyType ?? 'json';
  let schema: JsonSchema = req.body ? toJsonSchema(req.body) : { type: 'object', additionalProperties: true };
  if (type === 'multipart') {
    const fields = schema as { properties?: Record<string, unknown>; required?: string[] };
    schema = {
      type: 'object',
      properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The uploaded file' }, ...(fields.properties ?? {}) },
      required: ['file', ...(fields.required ?? [])],
    };
  }
  if (type === 'text' || type === 'binary') schema = { type: 'string', ...(type === 'binary' ? { contentMediaType: 'application/octet-stream' } : {}) };
  const mediaType = { json: 'application/json', multipart: 'multipart/form-data', form: 'application/x-www-form-urlencoded', text: 'text/plain', binary: 'application/octet-stream' }[type];
  return {
    required: !!req.body && type !== 'form' ? isRequiredBody(op) : type !== 'json',
    ...(req.bodyDescription ? { description: req.bodyDescription } : {}),
    content: {
      [mediaType]: { schema, ...(req.example !== undefined ? { example: req.example } : {}) },
      ...Object.fromEntries(Object.entries(req.otherContent ?? {}).map(([type, other]) => [type, { schema: other }])),
    },
  };
}

/** A body whose schema refuses `{}` must be sent; one that takes `{}` (all fields optional) may be left out. */
function isRequiredBody(op: Operation): boolean {
  return !!op.request?.body && op.request.body.validate({}).error !== undefined;
}

function operationObject(op: Operation): Record<string, unknown> {
  const params = pathParams(op.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(op.request?.params?.[name] ? { description: op.request.params[name] } : {}),
  }));
  const teamHeader = op.security === 'project' || op.security === 'team' ? [{ $ref: '#/components/parameters/TeamId' }] : [];
  const idempotencyHeader = op.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : [];
  const sessionHeader = op.browserSession ? [{ $ref: '#/components/parameters/BrowserSession' }] : [];
  const parameters = [...params, ...(op.request?.query ? queryParameters(op.request.query) : []), ...teamHeader, ...idempotencyHeader, ...sessionHeader];
  const body = requestBody(op);
  const success = Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, response(r)]));
  return {
    operationId: operationId(op),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: op.tags,
    security: op.embedToken ? [...SECURITY[op.security], { embedToken: [] }] : SECURITY[op.security],
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { ...success, ...errorResponses(op) },
  };
}

export interface DocumentOptions {
  serverUrl: string;
  version: string;
}

/** The OpenAPI 3.1 document of `operations`; the same operations always give the same document. */
export function buildOpenApiDocument(operations: Operation[], options: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) (paths[openApiPath(op.path)] ??= {})[op.method] = operationObject(op);
  const tags = [...new Set(operations.flatMap((op) => op.tags))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Formwork API',
      version: options.version,
      description: 'Document generation, approval gates (Flow) and reporting. Errors share one body (components.schemas.Error); lists page with `page` and `limit`. See docs/openapi.md for the typed client.',
    },
    servers: [{ url: options.serverUrl }],
    tags,
    paths,
    components: {
      securitySchemes,
      schemas: {
        Error: errorSchema,
        ...RESOURCE_SCHEMAS,
        PageMeta: PAGE_META_SCHEMA,
      },
      parameters: {
        TeamId: {
          name: 'X-Team-Id',
          in: 'header',
          required: false,
          description: 'With a user JWT: the team (project) the call acts on, when the user belongs to several. Ignored for API keys and OAuth tokens, which belong to one project.',
          schema: { type: 'string', format: 'uuid' },
        },
        BrowserSession: {
          name: 'X-Formwork-Session',
          in: 'header',
          required: false,
          description:
            'For a page of this service only (docs/web.md, "Sessions"): `cookie` keeps the refresh token in an HttpOnly, SameSite=Strict cookie scoped to /api/auth instead of the body; ' +
            'refresh and logout then read it from the cookie and need no body. Another Origin is refused (ERR_AUTH_005).',
          schema: { type: 'string', enum: ['cookie'] },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Makes a retry safe: the first answer is kept for 24 hours per project and key; a repeat with the same body gets it again with `Idempotent-Replayed: true`, the same key with another body is 422, and a repeat while the first is still running is 409 with Retry-After.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map(([name, r]) => [
          name,
          {
            description: r.description,
            ...(r.headers ? { headers: Object.fromEntries(Object.entries(r.headers).map(([h, description]) => [h, { description, schema: { type: 'string' } }])) } : {}),
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: r.example } },
          },
        ]),
      ),
    },
  };
}
