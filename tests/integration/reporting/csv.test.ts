import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { startTestApp, type TestApp } from '../../support/app';
import { download } from '../../support/documents';
import { signUp, type SignedUpUser } from '../../support/factories';
import { waitFor } from '../../support/wait';

/**
 * csv datasources (docs/reporting.md "csv"): a file uploaded with PUT …/file into artefact
 * storage, read by `table` queries through csv-parse (column types inferred from the first 1,000 records), through preview and a
 * report run to CSV; an oversize upload and hostile files answered with clear errors.
 */
describe('reporting csv datasources', () => {
  let app: TestApp;
  let alice: SignedUpUser;

  beforeAll(async () => {
    app = await startTestApp();
    alice = await signUp(app, { verified: true });
  });

  afterAll(async () => {
    await app?.close();
  });

  const as = (extra: Record<string, unknown> = {}) => ({ token: alice.accessToken, ...extra });
  const unique = () => randomBytes(4).toString('hex');

  async function datasource(config: Record<string, unknown> = {}) {
    const res = await app.request('POST', '/api/reporting/datasources', as({ body: { name: `Sheet ${unique()}`, kind: 'csv', config: { source: 'upload', ...config } } }));
    expect([res.status, res.body.relatedInfo ?? null]).toEqual([201, null]);
    expect(res.body.config).toEqual({ source: 'upload', delimiter: ',', encoding: 'utf-8', header: true, ...config });
    return res.body;
  }

  async function upload(id: string, content: string | Buffer, token = alice.accessToken) {
    const form = new FormData();
    form.append('file', new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type: 'text/csv' }), 'data.csv');
    const res = await fetch(`${app.url}/api/reporting/datasources/${id}/file`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  /**
   * An upload sent the way a careful client sends a large body: the answer is read as soon as it
   * arrives, even if the server answered before the body was all sent (a refused upload), so a
   * server closing the socket after its answer does not hide the answer (fetch reports ECONNRESET).
   */
  function uploadEarlyAnswer(id: string, content: Buffer): Promise<{ status: number; body: Record<string, any> }> {
    const boundary = `formwork${randomBytes(8).toString('hex')}`;
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="data.csv"\r\nContent-Type: text/csv\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${app.url}/api/reporting/datasources/${id}/file`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + content.length + tail.length },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        res.on('error', reject);
      });
      // A write cut off after the answer is expected; without an answer it is the failure.
      req.on('error', (e) => setTimeout(() => reject(e), 2000).unref());
      req.write(head);
      req.write(content);
      req.end(tail);
    });
  }

  async function query(datasourceId: string, extra: Record<string, unknown> = {}) {
    const res = await app.request('POST', '/api/reporting/queries', as({ body: { name: `T ${unique()}`, datasourceId, language: 'table', ...extra } }));
    expect([res.status, res.body.relatedInfo ?? null]).toEqual([201, null]);
    return res.body;
  }

  const preview = (id: string, body: Record<string, unknown> = {}) => app.request('POST', `/api/reporting/queries/${id}/preview`, as({ body }));

  const fruit = 'name,price,note\r\nApple,12.50,"crisp, red"\r\nPear,3.25,"says ""hi"""\r\n=SUM(A1),7,\r\n';

  it('uploads a file, tests it and previews it: column types inferred from the first records, the header names the columns', async () => {
    const ds = await datasource();
    const before = await preview((await query(ds.id)).id);
    expect([before.status, before.body.code, before.body.relatedInfo?.dbCode]).toEqual([422, 'ERR_QRY_006', 'NO_FILE']);

    const put = await upload(ds.id, fruit);
    expect([put.status, put.body.id]).toEqual([200, ds.id]);
    expect(await app.services.storage.exists(`reporting/${await projectOf(ds.id)}/datasources/${ds.id}/source.csv`)).toBe(true);

    const test = await app.request('POST', `/api/reporting/datasources/${ds.id}/test`, as({ body: {} }));
    expect(test.body).toMatchObject({ ok: true, serverVersion: 'csv (3 columns)' });
    const schema = await app.request('POST', `/api/reporting/datasources/${ds.id}/schema/refresh`, as({ body: {} }));
    expect(schema.body.tables[0].columns.map((c: { name: string; dataType: string }) => `${c.name}:${c.dataType}`)).toEqual(['name:string', 'price:number', 'note:string']);

    const q = await query(ds.id);
    expect(q).toMatchObject({ language: 'table', text: '', request: null, transform: null });
    const res = await preview(q.id, { limit: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ columns: [{ name: 'name', type: 'string' }, { name: 'price', type: 'number' }, { name: 'note', type: 'string' }], rowCount: 2, truncated: true });
    expect(res.body.rows).toEqual([
      { name: 'Apple', price: 12.5, note: 'crisp, red' },
      { name: 'Pear', price: 3.25, note: 'says "hi"' },
    ]);
  });

  it('infers number, boolean, date and string columns from the first 1,000 records; empty cells of a typed column are null', async () => {
    const ds = await datasource();
    const head = 'id,active,since,code,label,empty\n';
    const lines = Array.from({ length: 1000 }, (_, i) => `${i + 1},${i % 2 === 0 ? 'true' : 'FALSE'},2024-01-${String((i % 28) + 1).padStart(2, '0')},${i === 3 ? '007' : String(i)},x${i},`);
    lines.splice(4, 0, ',,,,blank,');
    expect((await upload(ds.id, head + lines.join('\n') + '\n')).status).toBe(200);
    const schema = await app.request('POST', `/api/reporting/datasources/${ds.id}/schema/refresh`, as({ body: {} }));
    expect(schema.body.tables[0].columns.map((c: { name: string; dataType: string }) => `${c.name}:${c.dataType}`)).toEqual(['id:number', 'active:boolean', 'since:date', 'code:string', 'label:string', 'empty:string']);
    const q = await query(ds.id);
    const res = await preview(q.id, { limit: 1000 });
    expect(res.status).toBe(200);
    expect(res.body.columns).toEqual([
      { name: 'id', type: 'number' },
      { name: 'active', type: 'boolean' },
      { name: 'since', type: 'date' },
      { name: 'code', type: 'string' },
      { name: 'label', type: 'string' },
      { name: 'empty', type: 'string' },
    ]);
    expect(res.body.rows.slice(0, 5)).toEqual([
      { id: 1, active: true, since: '2024-01-01', code: '0', label: 'x0', empty: '' },
      { id: 2, active: false, since: '2024-01-02', code: '1', label: 'x1', empty: '' },
      { id: 3, active: true, since: '2024-01-03', code: '2', label: 'x2', empty: '' },
      { id: 4, active: false, since: '2024-01-04', code: '007', label: 'x3', empty: '' },
      { id: null, active: null, since: null, code: '', label: 'blank', empty: '' },
    ]);
  });

  async function projectOf(datasourceId: string): Promise<string> {
    const [row] = await app.services.db.query(`SELECT project_id FROM reporting_datasources WHERE id = $1`, [datasourceId]);
    return row.project_id;
  }

  it('reads files without a header, with another delimiter, through a transform', async () => {
    const ds = await datasource({ header: false, delimiter: ';' });
    expect((await upload(ds.id, 'a;1\nb;2\nc;3\n')).status).toBe(200);
    const q = await query(ds.id, { parameters: [{ name: 'min', type: 'integer', default: 2 }], transform: 'rows[$number(column_2) >= $$.params.min].{"label": column_1}' });
    const res = await preview(q.id);
    expect([res.status, res.body.rows]).toEqual([200, [{ label: 'b' }, { label: 'c' }]]);

    const bad = await app.request('POST', '/api/reporting/queries', as({ body: { name: `Bad ${unique()}`, datasourceId: ds.id, language: 'table', text: 'SELECT 1', transform: 'rows[' } }));
    expect(bad.body.relatedInfo?.errors.map((e: { path: string; code: string }) => `${e.path}:${e.code}`)).toEqual(['text:TEXT_NOT_ALLOWED', 'transform:INVALID_EXPRESSION']);
  });

  it('answers hostile files with a clear ERR_QRY_006 naming the problem, never a crash', async () => {
    const ds = await datasource();
    const q = await query(ds.id);
    const cases: Array<[string, string]> = [
      ['a,b\n1,"never closed\n2,3\n', 'CSV_QUOTE_NOT_CLOSED'],
      ['a,b\n1,2,3\n', 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH'],
      [`a,b\n1,"${'x'.repeat(1024 * 1024 + 10)}"\n`, 'CSV_MAX_RECORD_SIZE'],
    ];
    for (const [content, code] of cases) {
      expect((await upload(ds.id, content)).status).toBe(200);
      const res = await preview(q.id);
      expect([res.status, res.body.code, res.body.relatedInfo?.dbCode]).toEqual([422, 'ERR_QRY_006', code]);
    }
    // The service still answers.
    expect((await upload(ds.id, 'a\n1\n')).status).toBe(200);
    expect((await preview(q.id)).body.rows).toEqual([{ a: 1 }]);
  });

  it('refuses an upload over 50 MB with 413 ERR_REQ_002, and an upload to a datasource that reads a url', async () => {
    const ds = await datasource();
    const big = Buffer.alloc(50 * 1024 * 1024 + 1, 'a');
    const res = await uploadEarlyAnswer(ds.id, big);
    expect([res.status, res.body.code]).toEqual([413, 'ERR_REQ_002']);
    const url = await app.request('POST', '/api/reporting/datasources', as({ body: { name: `Url ${unique()}`, kind: 'csv', config: { source: 'url', url: 'https://example.com/a.csv' } } }));
    expect(url.status).toBe(201);
    const toUrl = await upload(url.body.id, 'a\n1\n');
    expect([toUrl.status, toUrl.body.code, toUrl.body.relatedInfo?.errors?.[0]?.path]).toEqual([400, 'ERR_DS_002', 'config.source']);
  });

  it('runs a report over a csv query to CSV', async () => {
    const ds = await datasource();
    expect((await upload(ds.id, fruit)).status).toBe(200);
    const q = await query(ds.id);
    expect((await app.request('POST', `/api/reporting/queries/${q.id}/publish`, as({ body: {} }))).status).toBe(201);
    const report = await app.request(
      'POST',
      '/api/reporting/reports',
      as({ body: { name: `Fruit ${unique()}`, templateId: null, datasets: [{ name: 'fruit', queryId: q.id }], outputs: [{ format: 'csv' }] } }),
    );
    expect([report.status, report.body.relatedInfo ?? null]).toEqual([201, null]);
    expect((await app.request('POST', `/api/reporting/reports/${report.body.id}/publish`, as({ body: {} }))).status).toBe(201);
    const started = await app.request('POST', `/api/reporting/reports/${report.body.id}/runs`, as({ body: {} }));
    expect(started.status).toBe(201);
    const run = await waitFor(
      async () => {
        const r = await app.request('GET', `/api/reporting/runs/${started.body.runId}`, as());
        return ['completed', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
      },
      { timeoutMs: 90_000, what: 'the run to end' },
    );
    expect([run.status, run.error ?? null]).toEqual(['completed', null]);
    expect(run.datasets).toMatchObject([{ name: 'fruit', status: 'completed', rowCount: 3 }]);
    const csv = run.outputs.find((o: { format: string }) => o.format === 'csv');
    const file = await download(csv.downloadUrl);
    expect(file.body.toString('utf8')).toBe(`name,price,note\r\nApple,12.5,"crisp, red"\r\nPear,3.25,"says ""hi"""\r\n'=SUM(A1),7,\r\n`);
  });
});
