import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { AppError, errorBody, type ErrorCode } from '../../domain/errors';
import { clientAddressKey } from '../../domain/identity/client-address';
import type { Services } from '../../platform/services';
import { mount } from '../openapi/route';
import { createLimiterFactory } from '../rate-limits';
import { readJsonBytes } from '../templates/check-body';
import { settleRefusedBody } from '../middleware/refused-body';
import { oauthEndpoints } from './oauth.endpoints';
import { issueToken, type TokenDeps } from './oauth-token.service';

/**
 * POST /api/oauth/token (RFC 6749 §4.4, docs/oauth.md). Parameters come as
 * `application/x-www-form-urlencoded` (the RFC's form) or JSON; the client authenticates with HTTP
 * Basic or `client_id`/`client_secret` in the body. The body is read here, not by the app-wide
 * parser, with a limit of its own (TOKEN_BODY_LIMIT), since every caller of this route is
 * unauthenticated. Errors carry the RFC 6749 §5.2 fields (`error`, `error_description`) next to
 * the service's error body (`statusCode`, `code`, `message`, ...), so OAuth libraries and clients
 * of the rest of the API both read them. Declared in oauth.endpoints.ts, which only describes the
 * parameters: they are read and checked here.
 */
const PATH = /^\/api\/oauth\/token\/?$/;

/** A token request is a few hundred bytes; 8 KB leaves room for long scopes and still refuses junk early. */
const TOKEN_BODY_LIMIT = 8 * 1024;

/** Failed client authentications a minute: per client id and address, and per address (docs/oauth.md). */
const FAILURES_PER_CLIENT_AND_ADDRESS = 10;
const FAILURES_PER_ADDRESS = 50;

/** Wraps the app-wide body parser so that it leaves token requests to this route. */
export function exceptOAuthToken(parser: Middleware): Middleware {
  return (ctx, next) => (ctx.method === 'POST' && PATH.test(ctx.path) ? next() : parser(ctx, next));
}

const RFC_ERRORS: Partial<Record<ErrorCode, string>> = {
  ERR_OAUTH_002: 'invalid_client',
  ERR_OAUTH_003: 'invalid_client',
  ERR_OAUTH_004: 'unsupported_grant_type',
  ERR_OAUTH_005: 'invalid_scope',
  ERR_OAUTH_006: 'invalid_request',
  ERR_OAUTH_008: 'slow_down',
  ERR_REQ_001: 'invalid_request',
  ERR_REQ_002: 'invalid_request',
  ERR_VALID_001: 'invalid_request',
};

export function oauthTokenRoutes(services: Services): Router {
  const make = createLimiterFactory(services.redis, services.config.temporal.taskQueuePrefix);
  const deps: TokenDeps = {
    db: services.db,
    ttlSeconds: services.config.oauth.tokenTtlSeconds,
    failures: {
      perClient: make('oauth-fail-client', FAILURES_PER_CLIENT_AND_ADDRESS, 60),
      perAddress: make('oauth-fail-address', FAILURES_PER_ADDRESS, 60),
    },
  };
  const router = new Router();
  mount(router, oauthEndpoints.token, async (ctx) => {
    // RFC 6749 §5.1: token answers, errors included, are never cached.
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    try {
      const params = await readParams(ctx);
      ctx.body = await issueToken(deps, { params, basic: basicCredentials(ctx), address: clientAddressKey(ctx.ip) });
    } catch (thrown) {
      const rfc = thrown instanceof AppError ? RFC_ERRORS[thrown.code] : undefined;
      if (!rfc || !(thrown instanceof AppError)) throw thrown;
      ctx.status = thrown.status;
      if (rfc === 'invalid_client') ctx.set('WWW-Authenticate', 'Basic realm="formwork"');
      // The rest of an oversized body is read and discarded, up to a bound, so the connection can
      // carry the next request (docs/errors.md "Refused bodies and the connection").
      settleRefusedBody(ctx);
      const retryAfter = thrown.relatedInfo?.retryAfter;
      if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
      ctx.body = { error: rfc, error_description: thrown.message, ...errorBody(thrown, ctx.path) };
    }
  });
  return router;
}

/** The request's parameters, from a form or a JSON object; a parameter given twice is refused (RFC 6749 §3.2). */
async function readParams(ctx: Context): Promise<Record<string, string>> {
  const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return {};
  const form = ctx.is('urlencoded');
  const json = ctx.is('json');
  if (!form && !json) throw new AppError('ERR_OAUTH_006', 'Send the parameters as application/x-www-form-urlencoded (or JSON)', { field: 'Content-Type' });
  const text = (await readJsonBytes(ctx, TOKEN_BODY_LIMIT)).toString('utf8');
  const params: Record<string, string> = {};
  if (form) {
    for (const [name, value] of new URLSearchParams(text)) {
      if (Object.hasOwn(params, name)) throw new AppError('ERR_OAUTH_006', `Parameter ${name} is given more than once`, { field: name });
      params[name] = value;
    }
    return params;
  }
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new AppError('ERR_REQ_001');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AppError('ERR_OAUTH_006', 'The JSON body must be an object of parameters');
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') throw new AppError('ERR_OAUTH_006', `Parameter ${name} must be a string`, { field: name });
    params[name] = value;
  }
  return params;
}

/** RFC 6749 §2.3.1: id and secret form-url-encoded, joined by ':', base64; undefined without Basic. */
function basicCredentials(ctx: Context): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(ctx.get('Authorization'));
  if (!match) {
    if (/^Basic\b/i.test(ctx.get('Authorization'))) throw new AppError('ERR_OAUTH_002', 'Malformed HTTP Basic credentials');
    return undefined;
  }
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new AppError('ERR_OAUTH_002', 'Malformed HTTP Basic credentials');
  const unescape = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { clientId: unescape(decoded.slice(0, colon)), clientSecret: unescape(decoded.slice(colon + 1)) };
}
