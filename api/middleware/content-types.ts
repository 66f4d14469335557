import type { Context, Next } from 'koa';
import type Router from '@koa/router';
import { AppError } from '../../domain/errors';
import { takesMultipart } from './uploads';

/**
 * The content types of request bodies (docs/errors.md "Methods and content types"). A route takes
 * JSON; the few that take more are listed here (multipart: the routes that mount
 * multipartUpload). A body of any other type, on a method and path a route answers, is refused
 * unread with 415 ERR_REQ_007 naming the type received and the types accepted, instead of reaching
 * the route as a string or an empty object. A request without a body (no Content-Length or 0, no
 * Transfer-Encoding) is not checked; an unknown path or method is left to the routers (404, 405).
 */
const JSON_TYPE = 'application/json';
const FORM = 'application/x-www-form-urlencoded';

interface Accepts {
  /** Media types as `type-is` matches them (`json` also takes `+json` suffixes). */
  match: string[];
  /** What the answer names. */
  names: string[];
}

const ONLY_JSON: Accepts = { match: ['json'], names: [JSON_TYPE] };

function accepted(ctx: Context): Accepts | 'route' {
  const path = ctx.path.replace(/\/+$/, '');
  // OAuth token requests answer an unsupported body in RFC 6749's own form (api/identity/oauth-token.routes.ts).
  if (path === '/api/oauth/token') return 'route';
  // Flow submissions: a payload is JSON, text or a form (docs/flow.md "Limits").
  if (ctx.method === 'POST' && /^\/api\/flow\/gates\/[^/]+\/(test|validate|runs)$/.test(path)) {
    return { match: ['json', 'text/*', 'urlencoded'], names: [JSON_TYPE, 'text/*', FORM] };
  }
  // An agent uploads a query's rows as NDJSON (docs/agent.md); the route checks which one a task needs.
  if (ctx.method === 'POST' && /^\/api\/agents\/me\/tasks\/[^/]+\/result$/.test(path)) {
    return { match: ['json', 'application/x-ndjson'], names: [JSON_TYPE, 'application/x-ndjson'] };
  }
  if (takesMultipart(path)) return { match: ['json', 'multipart'], names: [JSON_TYPE, 'multipart/form-data'] };
  // The service's own HTML pages (review, invitations, account e-mails' links) post their forms.
  if (!path.startsWith('/api/')) return { match: ['json', 'urlencoded'], names: [JSON_TYPE, FORM] };
  return ONLY_JSON;
}

/** Mounted before the body parser, with the app's routers: only a route a request reaches is checked. */
export function contentTypePolicy(routers: Router[]) {
  return async function checkContentType(ctx: Context, next: Next): Promise<void> {
    const hasBody = ctx.request.length > 0 || ctx.get('Transfer-Encoding') !== '';
    if (!hasBody || !routers.some((r) => r.match(ctx.path, ctx.method).route)) return next();
    const accepts = accepted(ctx);
    if (accepts !== 'route' && !ctx.is(accepts.match)) throw unsupportedType(ctx, accepts.names);
    return next();
  };
}

/** 415 ERR_REQ_007: the type received (without parameters) and the types the route takes. */
export function unsupportedType(ctx: Context, names: string[]): AppError {
  const received = (ctx.get('Content-Type').split(';')[0].trim().toLowerCase() || 'none').slice(0, 100);
  return new AppError('ERR_REQ_007', `${ctx.method} ${ctx.path} takes ${names.join(', ')}, not ${received}`, {
    field: 'Content-Type',
    received,
    accepted: names,
  });
}
