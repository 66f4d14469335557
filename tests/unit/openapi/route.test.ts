import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Joi from 'joi';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { mount, operationsOf, routeTable } from '../../../api/openapi/route';
import { AppError } from '../../../domain/errors';

/**
 * api/openapi/route.ts (docs/architecture.md "One declaration per route"): one declaration gives the
 * OpenAPI operation, the validation, and the handler's input type. The type assertions below are
 * checked by `tsc -p tsconfig.json` (which type-checks tests/), the behaviour by Jest.
 */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

interface Body {
  name: string;
  count?: number;
}
interface Query {
  page: number;
}
const bodySchema = Joi.object<Body, true>({ name: Joi.string().required(), count: Joi.number().integer() });
const querySchema = Joi.object<Query, true>({ page: Joi.number().integer().min(1).default(1) });

// @ts-expect-error Joi's strict schema map: a string field takes a string schema
Joi.object<Body, true>({ name: Joi.number(), count: Joi.number() });
// @ts-expect-error every field of the type has its schema
Joi.object<Body, true>({ name: Joi.string() });

const route = routeTable('Things');
const routes = {
  create: route('post', '/api/things', 'Create a thing', { security: 'project', request: { body: bodySchema, query: querySchema }, responses: { 201: { description: 'Created' } } }),
  get: route('get', '/api/things/:id', 'Get a thing', { security: 'project', request: { params: { id: 'The id' } }, responses: { 200: { description: 'The thing' } } }),
};

let server: ReturnType<Koa['listen']>;
let url: string;
beforeAll(async () => {
  const router = new Router({ prefix: '/api/things' });
  mount(router, routes.create, async (ctx, next) => {
    ctx.set('X-Guard', 'passed');
    await next();
  }, (ctx, input) => {
    const typed: Equal<typeof input, { body: Body; query: Query }> = true;
    ctx.status = 201;
    ctx.body = { ...input, typed };
  });
  mount(router, routes.get, (ctx, input) => {
    const typed: Equal<typeof input, { body: undefined; query: undefined }> = true;
    ctx.body = { id: ctx.params.id, typed };
  });
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.status = err.status;
      ctx.body = { code: err.code, message: err.message };
    }
  });
  app.use(koaBody());
  app.use(router.routes());
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

test('the declaration is the OpenAPI operation, with its schemas', () => {
  const [create, get] = operationsOf(routes);
  expect(create).toMatchObject({ method: 'post', path: '/api/things', summary: 'Create a thing', tags: ['Things'], security: 'project' });
  expect(create.request?.body).toBe(bodySchema);
  expect(create.request?.query).toBe(querySchema);
  expect(get).toMatchObject({ method: 'get', path: '/api/things/:id', request: { params: { id: 'The id' } } });
});

test('the handler gets the validated, converted and defaulted body and query, after the guards', async () => {
  const res = await fetch(`${url}/api/things?page=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'a', count: 2 }) });
  expect(res.status).toBe(201);
  expect(res.headers.get('x-guard')).toBe('passed');
  expect(await res.json()).toEqual({ body: { name: 'a', count: 2 }, query: { page: 3 }, typed: true });
  const defaulted = await fetch(`${url}/api/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'b' }) });
  expect(await defaulted.json()).toEqual({ body: { name: 'b' }, query: { page: 1 }, typed: true });
  expect(await (await fetch(`${url}/api/things/t1`)).json()).toEqual({ id: 't1', typed: true });
});

test('an invalid body never reaches the handler', async () => {
  const res = await fetch(`${url}/api/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ count: 'many' }) });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ code: expect.stringMatching(/^ERR_VALID_/) });
});

test('a route outside its router\'s prefix is refused when mounted', () => {
  expect(() => mount(new Router({ prefix: '/api/other' }), routes.get, () => undefined)).toThrow('/api/things/:id is not under its router\'s prefix /api/other');
});
