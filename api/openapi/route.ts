import type Router from '@koa/router';
import type Joi from 'joi';
import type { Context, Middleware } from 'koa';
import type { ErrorCode } from '../../domain/errors';
import { validate } from '../validation';
import type { HttpMethod, Operation, OperationRequest } from './operation';

/**
 * A route declared once (docs/architecture.md "One declaration per route"): its OpenAPI operation,
 * and the Joi schemas of its body and query, which validate the request and give the handler its
 * input's static type. A schema's type is the `T` of `Joi.object<T, true>(…)`, written beside the
 * schema; Joi's strict schema map makes the compiler reject a key the type lacks, a field of the
 * type without a schema, or a schema of the wrong kind. `mount` puts it on a router;
 * `operationsOf` lists a domain's routes for the OpenAPI document (api/openapi/operations.ts).
 */
export interface Route<Body, Query> {
  readonly operation: Operation;
  readonly body?: Joi.Schema<Body>;
  readonly query?: Joi.Schema<Query>;
  /** The spec's own codes for some fields or Joi error types (domain/validation.ts), in place of ERR_VALID_001/005. */
  readonly codes?: Readonly<Record<string, ErrorCode>>;
}

/** What the handler gets: the validated (and converted, defaulted) body and query. */
export interface RouteInput<Body, Query> {
  body: Body;
  query: Query;
}

type RouteRequest<Body, Query> = Omit<OperationRequest, 'body' | 'query'> & { body?: Joi.ObjectSchema<Body>; query?: Joi.ObjectSchema<Query> };
type RouteDeclaration<Body, Query> = Omit<Operation, 'method' | 'path' | 'summary' | 'tags' | 'request'> & {
  request?: RouteRequest<Body, Query>;
  /** Codes of the spec for some fields of the body (`{ email: 'ERR_USER_003' }`), used when they are refused. */
  codes?: Readonly<Record<string, ErrorCode>>;
};

/**
 * A domain's route declarations: `const route = routeTable('Webhooks')`, then
 * `route('post', '/api/webhooks', 'Subscribe a URL to events', { security, request: { body }, responses })`.
 * A route without a body (or query) gets `undefined` for it.
 */
export function routeTable(tag: string) {
  return function route<Body = undefined, Query = undefined>(method: HttpMethod, path: string, summary: string, declaration: RouteDeclaration<Body, Query>): Route<Body, Query> {
    const { codes, ...operation } = declaration;
    return { operation: { method, path, summary, tags: [tag], ...operation }, body: declaration.request?.body, query: declaration.request?.query, codes };
  };
}

/**
 * A route whose body its handler reads itself (a form, multipart, NDJSON, or JSON checked with codes
 * of its own): declared for the document, mounted without its body schema; its query is still validated.
 */
export function describedOnly<Body, Query>(declared: Route<Body, Query>): Route<undefined, Query> {
  return { operation: declared.operation, query: declared.query };
}

/** The OpenAPI operations of a domain's routes. */
export function operationsOf(routes: Record<string, Route<unknown, unknown>>): Operation[] {
  return Object.values(routes).map((r) => r.operation);
}

type Handler<Body, Query> = (ctx: Context, input: RouteInput<Body, Query>) => Promise<void> | void;

/**
 * Puts `route` on `router` (whose prefix its path starts with): `middleware` first (guards,
 * idempotency), then the body and query validated with the route's schemas, then `handler` with them.
 */
export function mount<Body, Query>(router: Router, route: Route<Body, Query>, ...chain: [...Middleware[], Handler<Body, Query>]): void {
  const { method, path } = route.operation;
  const prefix = router.opts.prefix ?? '';
  if (!path.startsWith(prefix)) throw new Error(`${method} ${path} is not under its router's prefix ${prefix}`);
  const handler = chain[chain.length - 1] as Handler<Body, Query>;
  const middleware = chain.slice(0, -1) as Middleware[];
  router[method](path.slice(prefix.length) || '/', ...middleware, async (ctx) => {
    const body = route.body ? validate(route.body, ctx.request.body, route.codes) : (undefined as Body);
    const query = route.query ? validate(route.query, ctx.query, route.codes) : (undefined as Query);
    await handler(ctx, { body, query });
  });
}
