import { readFileSync, writeFileSync } from 'node:fs';
import type { TestApp } from '../support/app';
import { startApiProcess, startWorkersFor, type ApiProcess } from '../support/api-process';
import { signUp, type SignedUpUser } from '../support/factories';
import { startHostilePostgres, type HostilePostgres } from '../support/hostile-postgres';
import { waitFor } from '../support/wait';
import { makeZip } from '../support/zip';

/**
 * Hostile reporting input against the real API role in a process of its own (docs/security.md
 * "Reporting: caps while reading"): a tenant's CSV file and a tenant's database server are read
 * with every cap applied while the bytes arrive, by the query worker (here in the test's process;
 * the API only waits for its answer, api/reporting/probes.ts). Each case ends in a catalogued
 * answer; the API keeps answering /api/health throughout; and the API process's peak resident
 * memory stays within 150 MB of what it used idle (its peak is reset through
 * /proc/<pid>/clear_refs after warming up).
 */

const PEAK_GROWTH_MAX_BYTES = 150 * 1024 * 1024;
const MB = 1024 * 1024;

/** Resident memory of a process from /proc/<pid>/status: now (VmRSS) and the peak since the last reset (VmHWM), in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

describe('hostile reporting input: caps while reading', () => {
  let api: ApiProcess;
  let app: TestApp;
  let workers: { close(): Promise<void> } | undefined;
  let user: SignedUpUser;
  let idleRss = 0;
  const health = { ok: 0, failed: [] as string[] };
  let probing = true;
  let probe: Promise<void> = Promise.resolve();
  const servers: HostilePostgres[] = [];

  const as = (body?: unknown) => ({ token: user.accessToken, ...(body === undefined ? {} : { body }) });
  let n = 0;
  const name = (what: string) => `${what} ${(n += 1)}`;

  async function csvDatasource(content: Buffer): Promise<string> {
    const ds = await app.request('POST', '/api/reporting/datasources', as({ name: name('Sheet'), kind: 'csv', config: { source: 'upload' } }));
    expect(ds.status).toBe(201);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(content)], { type: 'text/csv' }), 'data.csv');
    const res = await fetch(`${app.url}/api/reporting/datasources/${ds.body.id}/file`, { method: 'PUT', headers: { authorization: `Bearer ${user.accessToken}` }, body: form });
    expect(res.status).toBe(200);
    return ds.body.id;
  }

  async function postgresDatasource(port: number): Promise<string> {
    const ds = await app.request(
      'POST',
      '/api/reporting/datasources',
      as({ name: name('Hostile'), kind: 'postgres', config: { host: '127.0.0.1', port, database: 'x', user: 'x', ssl: 'disable' }, secrets: { password: 'unused' } }),
    );
    expect(ds.status).toBe(201);
    return ds.body.id;
  }

  async function query(datasourceId: string, body: Record<string, unknown>): Promise<string> {
    const q = await app.request('POST', '/api/reporting/queries', as({ name: name('Q'), datasourceId, ...body }));
    expect([q.status, q.body.relatedInfo ?? null]).toEqual([201, null]);
    return q.body.id;
  }

  const preview = (queryId: string) => app.request('POST', `/api/reporting/queries/${queryId}/preview`, as({}));

  beforeAll(async () => {
    api = await startApiProcess({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
    app = api.app;
    workers = await startWorkersFor(app, ['main', 'query']);
    user = await signUp(app);
    await app.services.db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
    // One honest preview of each kind first (code paths loaded, evaluation workers up): the bound is
    // on what hostile input adds to a running API, not on its first request.
    const honestCsv = await csvDatasource(Buffer.from('a,b\n1,2\n3,4\n'));
    expect((await preview(await query(honestCsv, { language: 'table', transform: 'rows' }))).status).toBe(200);
    const honestPg = await app.request(
      'POST',
      '/api/reporting/datasources',
      as({ name: name('Honest'), kind: 'postgres', config: { host: '127.0.0.1', port: 5432, database: 'postgres', user: 'postgres', ssl: 'disable' }, secrets: { password: 'x' } }),
    );
    expect((await preview(await query(honestPg.body.id, { language: 'sql', text: 'SELECT 1 AS one' }))).body.rows).toEqual([{ one: 1 }]);
    idleRss = memoryOf(api.pid).rss;
    // Resets the peak (VmHWM) to the current resident size (proc(5), clear_refs value 5).
    writeFileSync(`/proc/${api.pid}/clear_refs`, '5');
    probe = (async () => {
      while (probing) {
        const res = await fetch(`${app.url}/api/health`).catch((err: Error) => err);
        if (res instanceof Error) {
          health.failed.push(res.message);
          continue;
        }
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) health.ok += 1;
        else health.failed.push(String(res.status));
      }
    })();
  });

  afterAll(async () => {
    probing = false;
    await probe;
    await Promise.all(servers.map((s) => s.close()));
    await workers?.close();
    await api?.close();
  });

  it('answers a 48 MB CSV file of one-character fields, previewed through a transform, with 413 ERR_QRY_010 at the transform cap', async () => {
    const file = Buffer.alloc(48 * MB, 'a,b\n');
    const id = await csvDatasource(file);
    const res = await preview(await query(id, { language: 'table', transform: 'rows[a = "a"]' }));
    expect([res.status, res.body.code, res.body.relatedInfo]).toEqual([413, 'ERR_QRY_010', { limit: 100_000, stage: 'transform' }]);
    expect(res.body.message).toBe('A transform reads at most 100000 records of the CSV file');
  });

  it('cuts a PostgreSQL server that sends ten 20 MB rows at the first row header: 413 ERR_QRY_010, a few MB read', async () => {
    const server = await startHostilePostgres({ rowBytes: 20 * MB, rows: 10 });
    servers.push(server);
    const res = await preview(await query(await postgresDatasource(server.port), { language: 'sql', text: 'SELECT v FROM t' }));
    expect([res.status, res.body.code, res.body.relatedInfo.stage]).toEqual([413, 'ERR_QRY_010', 'server_message']);
    expect(res.body.message).toMatch(/^The database server sent a message of \d+ bytes or more; at most \d+ are read$/);
  });

  it('cuts a server that ignores the row count and sends 100,000 rows of 1 KB at the byte cap', async () => {
    const server = await startHostilePostgres({ rowBytes: 1024, rows: 100_000 });
    servers.push(server);
    const res = await preview(await query(await postgresDatasource(server.port), { language: 'sql', text: 'SELECT v FROM t' }));
    expect([res.status, res.body.code]).toEqual([413, 'ERR_QRY_010']);
    expect(res.body.message).toMatch(/^The database server sent more than \d+ bytes of rows$/);
    // The server wrote into a socket nobody read after the cap: far less than the 100 MB it meant to.
    expect(server.bytesSent()).toBeLessThan(40 * MB);
  });

  it('answers a connection test and a schema refresh against such a server with the cap, not a buffered answer', async () => {
    const server = await startHostilePostgres({ rowBytes: 4 * MB, rows: 50, simpleRows: true });
    servers.push(server);
    const id = await postgresDatasource(server.port);
    const test = await app.request('POST', `/api/reporting/datasources/${id}/test`, as({}));
    expect([test.status, test.body.ok, test.body.error?.code]).toEqual([200, false, 'ERR_QRY_010']);
    const schema = await app.request('POST', `/api/reporting/datasources/${id}/schema/refresh`, as({}));
    expect([schema.status, schema.body.code]).toEqual([413, 'ERR_QRY_010']);
  });

  it('ends previews of a server that goes silent after the handshake at the client deadline (422 ERR_QRY_007), two at a time per project (429 ERR_LIMIT_015)', async () => {
    const server = await startHostilePostgres({ rowBytes: 1, rows: 0, silent: true });
    servers.push(server);
    const q = await query(await postgresDatasource(server.port), { language: 'sql', text: 'SELECT 1', timeoutSeconds: 1 });
    const first = preview(q);
    const second = preview(q);
    // Both hold the project's two probes while the server is silent: a third is refused at once, nothing started.
    await waitFor(() => server.connections() >= 2, { timeoutMs: 30_000, what: 'both previews to connect' });
    const third = await preview(q);
    expect([third.status, third.body.code, third.body.relatedInfo.limit, third.headers.get('retry-after') !== null]).toEqual([429, 'ERR_LIMIT_015', 2, true]);
    for (const res of await Promise.all([first, second])) {
      expect([res.status, res.body.code, res.body.relatedInfo]).toEqual([422, 'ERR_QRY_007', { dbCode: 'CLIENT_DEADLINE' }]);
      expect(res.body.message).toBe('The database server did not answer within 16 s');
    }
    expect(server.connections()).toBe(2);
  });

  it('answers two zip bombs imported at once (a 45 MB JSON array each, zipped) with 400 ERR_IMP_003 at the element count, read outside the API', async () => {
    const other = await signUp(app);
    const bomb = makeZip([{ name: 'card.json', data: Buffer.from(`[${'1,'.repeat(22 * MB)}1]`) }]);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const send = async (token: string) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bomb)]), 'model.zip');
      const res = await fetch(`${app.url}/api/reporting/imports`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const answers = await Promise.all([send(user.accessToken), send(other.accessToken)]);
    for (const res of answers) {
      expect([res.status, res.body.code, res.body.relatedInfo.errors]).toEqual([400, 'ERR_IMP_003', [{ path: 'card.json', message: 'more than 100000 elements' }]]);
    }
  });

  it('kept answering /api/health, and the API process peaked within 150 MB of its idle resident size', async () => {
    const { peak } = memoryOf(api.pid);
    expect(health.failed).toEqual([]);
    expect(health.ok).toBeGreaterThan(0);
    expect(peak - idleRss).toBeLessThan(PEAK_GROWTH_MAX_BYTES);
  });
});
