import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { errorRenderer } from '../../../api/middleware/errors';
import { requestId } from '../../../api/middleware/request-id';
import type { Logger } from '../../../domain/logger';

/** The renderer on its own, in a real Koa server: what an unexpected crash looks like to a caller. */
describe('error renderer', () => {
  const logged: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg, fields) => logged.push({ msg, fields }),
    child: () => logger,
  };
  let server: ReturnType<Koa['listen']>;
  let base: string;

  beforeAll(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(requestId);
    app.use(errorRenderer(logger));
    app.use(async (ctx) => {
      if (ctx.path === '/crash') throw new TypeError('secret internal detail at /srv/app.js:12');
      if (ctx.path === '/koa-throw') ctx.throw(400, 'bad thing');
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('answers an unexpected error with a generic 500 body and logs it under the request id', async () => {
    const res = await fetch(`${base}/crash`, { headers: { 'X-Request-Id': 'req-42' } });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toMatchObject({ statusCode: 500, code: 'ERR_INTERNAL_001', message: 'Internal server error', path: '/crash' });
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
    expect(logged).toEqual([expect.objectContaining({ msg: 'request failed', fields: expect.objectContaining({ requestId: 'req-42' }) })]);
  });

  it('maps an exposed Koa client error to a catalogued 400', async () => {
    const res = await fetch(`${base}/koa-throw`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'ERR_VALID_001', message: 'bad thing' });
  });
});
