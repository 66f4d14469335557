import { html, ok, type JsonSchema } from '../openapi/operation';
import { operationsOf, routeTable } from '../openapi/route';
import * as schema from './embed.schema';

/**
 * The declarations of the designer in another site's page (docs/embedding.md; docs/architecture.md
 * "One declaration per route"), mounted by api/templates/embed.routes.ts. Apart from the handlers,
 * so that the OpenAPI document is built without loading the services.
 */

const ORIGINS: JsonSchema = {
  type: 'object',
  required: ['origins'],
  properties: { origins: { type: 'array', items: { type: 'string', description: 'An origin: https://app.example.com' }, maxItems: schema.MAX_EMBED_ORIGINS } },
};

const MODE = { type: 'string', enum: ['edit', 'view'] };

const MINTED: JsonSchema = {
  type: 'object',
  required: ['token', 'url', 'expiresAt', 'mode', 'origin', 'templateId'],
  properties: {
    token: { type: 'string', description: 'The embed token (`fmed_…`), shown this once: only its hash is stored' },
    url: { type: 'string', description: 'The designer page to put in the `<iframe>`: PUBLIC_URL/embed/designer/<templateId>?token=…' },
    expiresAt: { type: 'string', format: 'date-time' },
    mode: MODE,
    origin: { type: 'string', description: 'The one origin whose page may frame the designer, and to which it posts its messages' },
    templateId: { type: 'string', format: 'uuid' },
  },
};

const SESSION: JsonSchema = {
  type: 'object',
  required: ['templateId', 'mode', 'origin', 'expiresAt'],
  properties: { templateId: { type: 'string', format: 'uuid' }, mode: MODE, origin: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } },
};

const route = routeTable('Embedded designer');
const page = routeTable('Pages');

export const embedEndpoints = {
  origins: route('get', '/api/teams/:id/embed-origins', 'Origins allowed to embed the designer', {
    security: 'user',
    request: { params: { id: 'The project (team) id' } },
    responses: { 200: ok('The list (any member reads it)', ORIGINS) },
  }),
  setOrigins: route('put', '/api/teams/:id/embed-origins', 'Set the origins allowed to embed the designer (admins)', {
    security: 'user',
    description: `Replaces the list. Each entry is an origin exactly as a browser writes it (\`https://app.example.com\`, \`http://localhost:8080\`): no path, no trailing slash, no wildcard, lower case, no default port; at most ${schema.MAX_EMBED_ORIGINS}. Tokens minted for an origin taken off the list stop working at once.`,
    request: { params: { id: 'The project (team) id' }, body: schema.embedOriginsSchema },
    responses: { 200: ok('The list as stored', ORIGINS) },
  }),
  mintToken: route('post', '/api/templates/:id/embed-tokens', 'Mint an embed token for the designer of one template', {
    security: 'project',
    description: `A project admin, or an API key (or OAuth client) with \`embed_designer\`. \`ttlSeconds\`: ${schema.EMBED_TTL.min} to ${schema.EMBED_TTL.max}, default ${schema.EMBED_TTL.default}. \`origin\`: one of the project's embed origins (needed when it has several). The token opens the designer of this template only, and reaches no other route (403 ERR_EMBED_002).`,
    request: { params: { id: 'The template id or slug' }, body: schema.mintEmbedTokenSchema },
    responses: { 201: ok('The token, shown once, and the page to frame', MINTED) },
  }),
  session: route('get', '/api/embed/session', 'What an embed token opens', {
    security: 'embed',
    responses: { 200: ok('The template, the mode, the origin the page reports to, the expiry', SESSION) },
  }),
  // The query is documentation only: the page reads the token itself (embed.routes.ts mounts it unvalidated).
  designerPage: page('get', '/embed/designer/:templateId', 'The embedded designer (HTML)', {
    security: 'public',
    description: "The dashboard's designer without its navigation, for an `<iframe>`: `frame-ancestors` names the token's origin (when it is still on the project's list), every other page of the service says `'none'`. The page takes the token out of its address at once and keeps it in memory.",
    request: { params: { templateId: 'The template id' }, query: schema.embedPageQuerySchema },
    responses: { 200: html('The designer page') },
  }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const embedOperations = operationsOf(embedEndpoints);
