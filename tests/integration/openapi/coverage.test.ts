import type Router from '@koa/router';
import { createApp } from '../../../api/app';
import { operationId } from '../../../api/openapi/document';
import { allOperations } from '../../../api/openapi/operations';
import { startTestApp, type TestApp } from '../../support/app';

/**
 * Every route the app serves has an operation in the OpenAPI document (its route declaration, api/<domain>/*.endpoints.ts)
 * and every operation is a route: a route added without its operation fails here. The routes are
 * read from the @koa/router instances createApp mounts (each router's dispatch middleware keeps
 * its router), so nothing is listed by hand.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ worker: false, smtp: false });
});
afterAll(async () => {
  await t?.close();
});

function servedRoutes(): string[] {
  const app = createApp(t.services);
  const routes = new Set<string>();
  for (const mw of app.middleware as Array<{ router?: Router }>) {
    if (!mw.router) continue;
    for (const layer of mw.router.stack) {
      // Router-level middleware (router.use) has no methods; HEAD is added by @koa/router to every GET.
      for (const method of layer.methods) if (method !== 'HEAD') routes.add(`${method} ${layer.path}`);
    }
  }
  void app.shutdown();
  return [...routes].sort();
}

const documented = () => allOperations({ batchMaxDocuments: t.services.config.documents.batchMaxDocuments }).map((op) => `${op.method.toUpperCase()} ${op.path}`);

test('every route the app serves has an OpenAPI operation', () => {
  const ops = new Set(documented());
  const missing = servedRoutes().filter((r) => !ops.has(r));
  // A route in this list needs a route() declaration in its domain's *.endpoints.ts.
  expect(missing).toEqual([]);
});

test('every OpenAPI operation is a route the app serves', () => {
  const served = new Set(servedRoutes());
  expect(documented().filter((op) => !served.has(op))).toEqual([]);
  expect(served.size).toBeGreaterThan(200);
});

test('operations are listed once, with distinct operation ids', () => {
  const ops = allOperations({ batchMaxDocuments: 10 });
  const keys = ops.map((op) => `${op.method} ${op.path}`);
  expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  const ids = ops.map(operationId);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
});
