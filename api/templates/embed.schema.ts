import Joi from 'joi';

/**
 * Inputs of the embedded designer (docs/embedding.md): the project's list of origins allowed to put the
 * designer in an `<iframe>`, and the body that mints an embed token.
 */

/** How long an embed token lives: 60 s to 24 h, one hour when not said. */
export const EMBED_TTL = { min: 60, max: 86_400, default: 3_600 } as const;
/** At most this many origins per project. */
export const MAX_EMBED_ORIGINS = 20;

/**
 * An origin exactly as a browser serialises it: `http` or `https`, a host, an optional port, nothing
 * else. No path (not even `/`), query, fragment, user name, wildcard, upper case or default port: the
 * value goes verbatim into the designer page's `frame-ancestors` and is the `targetOrigin` of its
 * messages, so what is stored must be what the browser compares.
 */
export function originProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an origin such as https://app.example.com';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must start with https:// (or http://)';
  if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return 'must name one host: no wildcard';
  if (url.origin !== value) return `must be an origin alone, written as the browser does: ${url.origin}`;
  return undefined;
}

const origin = Joi.string()
  .max(200)
  .custom((value: string, helpers) => {
    const problem = originProblem(value);
    return problem ? helpers.message({ custom: `{{#label}} ${problem}` }) : value;
  })
  // The same rule in the words of JSON Schema, for the OpenAPI document (the check above decides first).
  .pattern(/^https?:\/\/(?:(?:[a-z0-9-]+\.)*[a-z0-9-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/, 'origin');

export interface EmbedOriginsInput {
  origins: string[];
}

export const embedOriginsSchema = Joi.object<EmbedOriginsInput, true>({
  origins: Joi.array().items(origin).max(MAX_EMBED_ORIGINS).unique().required(),
});

export interface MintEmbedTokenInput {
  mode: 'edit' | 'view';
  ttlSeconds: number;
  origin?: string;
}

export const mintEmbedTokenSchema = Joi.object<MintEmbedTokenInput, true>({
  mode: Joi.string().valid('edit', 'view').required(),
  ttlSeconds: Joi.number().integer().strict().min(EMBED_TTL.min).max(EMBED_TTL.max).default(EMBED_TTL.default),
  origin,
});

export interface EmbedPageQuery {
  token?: string;
}

/** The embedded designer page's query (documentation only: the page reads the token itself). */
// Other parameters are no error: the page may be linked with a host's own (tracking, a cache buster).
export const embedPageQuerySchema = Joi.object<EmbedPageQuery, true>({ token: Joi.string().max(100).description('The embed token (`fmed_…`) the page was minted with') }).unknown(true);
