import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/app';
import { download } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';

/**
 * http_json datasources (docs/reporting.md "http_json"): a local HTTP API the test starts, reached
 * through the outbound guard; rows through preview and through a full report run to CSV; the
 * guard's refusals (private address, redirect to another host), the byte cap while the body
 * streams, a runaway transform stopped by the evaluation budget, and parameters kept as values.
 */
describe('reporting http_json datasources', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let api: Server;
  let port: number;
  /** Raw request targets the API saw, newest last. */
  const seen: Array<{ url: string; auth?: string; body?: string }> = [];
  /** Bytes the big endpoint managed to send before the client stopped reading. */
  let bigSent = 0;
  let bigClosed: Promise<void> = Promise.resolve();

  const items = [
    { id: 1, name: 'Apple', price: { amount: 12.5, currency: 'EUR' } },
    { id: 2, name: 'Pear, "green"', price: { amount: 3.25, currency: 'EUR' } },
    { id: 3, name: '=HYPERLINK("x")', price: { amount: 7, currency: 'EUR' } },
  ];

  function handle(req: IncomingMessage, res: ServerResponse, body: string) {
    const url = req.url ?? '/';
    seen.push({ url, auth: req.headers.authorization, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', server: 'TestAPI/1.0' });
      res.end(JSON.stringify(value));
    };
    if (url === '/v1/health') return json(200, { ok: true });
    if (req.headers.authorization !== 'Bearer s3cret-token') return json(401, { error: 'no' });
    if (url.startsWith('/v1/items')) return json(200, { data: { items } });
    if (url.startsWith('/v1/echo')) return json(200, [{ url, body: body || null }]);
    if (url === '/v1/away') {
      res.writeHead(302, { location: `http://localhost:${port}/v1/items` });
      return res.end();
    }
    if (url === '/v1/here') {
      res.writeHead(302, { location: `/v1/items?via=redirect` });
      return res.end();
    }
    if (url === '/v1/slow') return undefined; // never answers
    if (url === '/v1/big') {
      // 60 MB of rows, written only as fast as the client reads, without a content-length.
      res.writeHead(200, { 'content-type': 'application/json' });
      const row = Buffer.from(`${JSON.stringify({ id: 1, filler: 'x'.repeat(1000) })},`);
      const total = 60 * 1024 * 1024;
      bigSent = 0;
      const gone = once(res, 'close');
      bigClosed = (async () => {
        res.write('[');
        while (bigSent < total && !res.destroyed) {
          bigSent += row.length;
          if (!res.write(row)) await Promise.race([once(res, 'drain'), gone]);
        }
        if (!res.destroyed) res.end('{"id":0}]');
      })();
      return undefined;
    }
    return json(404, { error: 'not found' });
  }

  beforeAll(async () => {
    api = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    api.listen(0, '127.0.0.1');
    await once(api, 'listening');
    port = (api.address() as AddressInfo).port;
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', EVAL_TIMEOUT_MS: '200' } });
    alice = await signUp(app, { verified: true });
  });

  afterAll(async () => {
    await app?.close();
    api?.closeAllConnections();
    await new Promise((resolve) => api?.close(resolve));
  });

  /** Whose requests the helpers below send: alice's unless a test hands them to another project's user. */
  let caller = () => alice;
  const as = (extra: Record<string, unknown> = {}) => ({ token: caller().accessToken, ...extra });
  afterEach(() => {
    caller = () => alice;
  });
  const unique = () => randomBytes(4).toString('hex');

  async function datasource(extra: Record<string, unknown> = {}) {
    const res = await app.request(
      'POST',
      '/api/reporting/datasources',
      as({
        body: {
          name: `API ${unique()}`,
          kind: 'http_json',
          config: { baseUrl: `http://127.0.0.1:${port}/v1`, auth: 'bearer', healthPath: '/health' },
          secrets: { token: 's3cret-token' },
          ...extra,
        },
      }),
    );
    expect([res.status, res.body.relatedInfo ?? null]).toEqual([201, null]);
    return res.body;
  }

  async function query(datasourceId: string, request: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const res = await app.request('POST', '/api/reporting/queries', as({ body: { name: `Q ${unique()}`, datasourceId, language: 'http', request, ...extra } }));
    expect([res.status, res.body.relatedInfo ?? null]).toEqual([201, null]);
    return res.body;
  }

  const preview = (id: string, body: Record<string, unknown> = {}) => app.request('POST', `/api/reporting/queries/${id}/preview`, as({ body }));

  it('creates, tests and previews: rowsPath picks the rows, objects are flattened one level, the token is sent', async () => {
    const ds = await datasource();
    expect(ds).toMatchObject({ kind: 'http_json', config: { baseUrl: `http://127.0.0.1:${port}/v1`, auth: 'bearer' }, secrets: { token: { set: true } } });
    expect(JSON.stringify(ds)).not.toContain('s3cret-token');
    const [stored] = await app.services.db.query(`SELECT secrets::text AS secrets FROM reporting_datasources WHERE id = $1`, [ds.id]);
    expect(stored.secrets).toContain('token');
    expect(stored.secrets).not.toContain('s3cret-token');

    const test = await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, as({ body: {} }));
    expect(test.body).toMatchObject({ ok: true, serverVersion: 'TestAPI/1.0', latencyMs: expect.any(Number) });

    const q = await query(ds.id, { method: 'GET', path: '/items', rowsPath: 'data.items' });
    expect(q).toMatchObject({ language: 'http', text: '', request: { method: 'GET', path: '/items', rowsPath: 'data.items' }, transform: null });
    const res = await preview(q.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      columns: [
        { name: 'id', type: 'number' },
        { name: 'name', type: 'string' },
        { name: 'price.amount', type: 'number' },
        { name: 'price.currency', type: 'string' },
      ],
      rowCount: 3,
      truncated: false,
    });
    expect(res.body.rows[1]).toEqual({ id: 2, name: 'Pear, "green"', 'price.amount': 3.25, 'price.currency': 'EUR' });
    expect(seen.at(-1)).toMatchObject({ url: '/v1/items', auth: 'Bearer s3cret-token' });
  });

  it('refuses requests and transforms that break the rules at save time, every problem at once', async () => {
    const ds = await datasource();
    const res = await app.request(
      'POST',
      '/api/reporting/queries',
      as({
        body: {
          name: `Bad ${unique()}`,
          datasourceId: ds.id,
          language: 'http',
          request: { method: 'GET', path: '/items?x={{nope}}', headers: { Host: 'evil' } },
          transform: 'rows[',
        },
      }),
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ERR_QRY_002');
    const codes = (res.body.relatedInfo.errors as Array<{ path: string; code: string }>).map((e) => `${e.path}:${e.code}`);
    expect(codes).toEqual(expect.arrayContaining(['request.path:INVALID_REQUEST', 'request.path:UNKNOWN_PARAMETER', 'request.headers.Host:INVALID_REQUEST', 'transform:INVALID_EXPRESSION']));

    const sql = await app.request('POST', '/api/reporting/queries', as({ body: { name: `Sql ${unique()}`, datasourceId: ds.id, language: 'sql', text: 'SELECT 1' } }));
    expect([sql.status, sql.body.relatedInfo?.errors?.[0]?.code]).toEqual([400, 'LANGUAGE_MISMATCH']);
  });

  it('keeps parameter values as values: ../ and ?x= are URL-encoded in the path, query and body', async () => {
    const ds = await datasource();
    const q = await query(
      ds.id,
      { method: 'POST', path: '/echo/{{segment}}/end', query: { q: '{{segment}}', ids: '{{ids}}' }, body: { text: 'see {{segment}}', ids: '{{ids}}' } },
      {
        parameters: [
          { name: 'segment', type: 'string', required: true },
          { name: 'ids', type: 'integer', multiple: true },
        ],
      },
    );
    const res = await preview(q.id, { parameters: { segment: '../admin?x=1#frag', ids: [1, 2] } });
    expect(res.status).toBe(200);
    expect(res.body.rows[0].url).toBe('/v1/echo/..%2Fadmin%3Fx%3D1%23frag/end?q=..%2Fadmin%3Fx%3D1%23frag&ids=1&ids=2');
    expect(JSON.parse(res.body.rows[0].body)).toEqual({ text: 'see ../admin?x=1#frag', ids: [1, 2] });

    // A value that would make the segment `..` is refused, never sent.
    const before = seen.length;
    const dots = await preview(q.id, { parameters: { segment: '..', ids: [] } });
    expect([dots.status, dots.body.code, dots.body.relatedInfo?.field]).toEqual([400, 'ERR_RPT_007', 'segment']);
    expect(seen.length).toBe(before);
  });

  it('follows a redirect on the same host and refuses one to another host', async () => {
    const ds = await datasource();
    const here = await query(ds.id, { method: 'GET', path: '/here', rowsPath: 'data.items' });
    expect((await preview(here.id)).body.rowCount).toBe(3);
    const away = await query(ds.id, { method: 'GET', path: '/away', rowsPath: 'data.items' });
    const res = await preview(away.id);
    expect([res.status, res.body.code, res.body.relatedInfo?.reason]).toEqual([400, 'ERR_OUTBOUND_001', 'redirect_other_host']);
  });

  it('ends a 60 MB body with ERR_QRY_010 without reading it all', async () => {
    const ds = await datasource();
    const q = await query(ds.id, { method: 'GET', path: '/big' });
    const res = await preview(q.id);
    expect([res.status, res.body.code]).toEqual([413, 'ERR_QRY_010']);
    await bigClosed;
    expect(bigSent).toBeLessThan(30 * 1024 * 1024);
  });

  it('ends a request that outlives the query timeoutSeconds with ERR_QRY_007', async () => {
    const ds = await datasource();
    const q = await query(ds.id, { method: 'GET', path: '/slow' }, { timeoutSeconds: 1 });
    const res = await preview(q.id);
    expect([res.status, res.body.code]).toEqual([422, 'ERR_QRY_007']);
  });

  it('stops a runaway transform with the evaluation budget error; its project can still save a query, and the workers answer the next preview', async () => {
    // The runaway makes its project "expensive" (docs/security.md "Two lanes"): its own project, so
    // that alice's previews in the other tests are not served by the background lane.
    const mallory = await signUp(app, { verified: true });
    caller = () => mallory;
    const ds = await datasource();
    const q = await query(ds.id, { method: 'GET', path: '/items', rowsPath: 'data.items' }, { transform: '($f := function($n){ $f($n + 1) }; $f(0))' });
    const res = await preview(q.id);
    expect([res.status, res.body.code]).toEqual([400, 'ERR_LIMIT_008']);
    // Saving is a check of our own code: it stays in the ordinary lane, so it answers on a machine whose
    // cores are busy (two spinning processes here; in the background lane it waited for idle CPU and
    // failed its budget, as it once did on a loaded CI machine).
    const spinners = [1, 2].map(() => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
    try {
      await query(ds.id, { method: 'GET', path: '/items', rowsPath: 'data.items' }, { transform: 'rows.name' });
    } finally {
      for (const spinner of spinners) spinner.kill('SIGKILL');
    }

    caller = () => alice;
    const mine = await datasource();
    const ok = await query(mine.id, { method: 'GET', path: '/items', rowsPath: 'data.items' }, { transform: 'rows[price.amount > 5].{"name": name, "net": price.amount}' });
    const good = await preview(ok.id);
    expect([good.status, good.body.rows]).toEqual([200, [{ name: 'Apple', net: 12.5 }, { name: '=HYPERLINK("x")', net: 7 }]]);
    // A runaway demoted to nice 19 on a machine with no idle CPU ends at the pool's 30 s wall backstop.
  });

  it('runs a report over an http query to CSV', async () => {
    const ds = await datasource();
    const q = await query(
      ds.id,
      { method: 'GET', path: '/items', query: { min: '{{min}}' }, rowsPath: 'data.items' },
      { parameters: [{ name: 'min', type: 'number', default: 0 }], transform: 'rows[price.amount >= $$.params.min].{"name": name, "amount": price.amount}' },
    );
    expect((await app.request('POST', `/api/reporting/queries/${q.id}/publish`, as({ body: {} }))).status).toBe(201);
    const report = await app.request(
      'POST',
      '/api/reporting/reports',
      as({
        body: {
          name: `Items ${unique()}`,
          templateId: null,
          datasets: [{ name: 'items', queryId: q.id, parameters: { min: '{{ min }}' } }],
          parameters: [{ name: 'min', type: 'number', default: 0 }],
          outputs: [{ format: 'csv' }],
        },
      }),
    );
    expect([report.status, report.body.relatedInfo ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/reports/${report.body.id}/publish`, as({ body: {} }))).status).toBe(201);
    const started = await app.request('POST', `/api/reporting/reports/${report.body.id}/runs`, as({ body: { parameters: { min: 5 } } }));
    expect(started.status).toBe(201);
    const run = await waitFor(
      async () => {
        const r = await app.request('GET', `/api/reporting/runs/${started.body.runId}`, as());
        return ['completed', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
      },
      { timeoutMs: 90_000, what: 'the run to end' },
    );
    expect([run.status, run.error ?? null]).toEqual(['completed', null]);
    expect(run.datasets).toMatchObject([{ name: 'items', status: 'completed', rowCount: 2 }]);
    expect(seen.at(-1)).toMatchObject({ url: '/v1/items?min=5', auth: 'Bearer s3cret-token' });
    const csv = run.outputs.find((o: { format: string }) => o.format === 'csv');
    const file = await download(csv.downloadUrl);
    expect(file.body.toString('utf8')).toBe(`name,amount\r\nApple,12.5\r\n"'=HYPERLINK(""x"")",7\r\n`);
  });

  it('refuses a datasource on 127.0.0.1 when OUTBOUND_ALLOWLIST does not name it', async () => {
    const closed = await startTestApp();
    try {
      const bob = await signUp(closed, { verified: true });
      const ds = await closed.request('POST', '/api/reporting/datasources', {
        token: bob.accessToken,
        body: { name: 'Local', kind: 'http_json', config: { baseUrl: `http://127.0.0.1:${port}/v1` } },
      });
      expect([ds.status, ds.body.code, ds.body.relatedInfo?.field]).toEqual([400, 'ERR_OUTBOUND_001', 'config.baseUrl']);
      const test = await closed.request('POST', '/api/reporting/datasources/test', {
        token: bob.accessToken,
        body: { name: 'Local', kind: 'http_json', config: { baseUrl: `http://127.0.0.1:${port}/v1` } },
      });
      expect(test.body).toMatchObject({ ok: false, error: { code: 'ERR_OUTBOUND_001' } });
    } finally {
      await closed.close();
    }
  });
});
