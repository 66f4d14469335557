import { request as httpRequest, type ClientRequest } from 'node:http';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../../support/app';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';

const MB = 1024 * 1024;

interface RawAnswer {
  status: number;
  body: any;
}

/**
 * A POST written by hand, so the test chooses the framing: chunked without Content-Length,
 * compressed, a Content-Length that lies. `end: false` leaves the request open after the chunks:
 * an answer that arrives then proves the server stopped reading instead of waiting for the rest.
 */
function rawPost(app: TestApp, path: string, opts: { headers: Record<string, string>; chunks: Buffer[]; end?: boolean }): { answer: Promise<RawAnswer>; req: ClientRequest } {
  const url = new URL(path, app.url);
  const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: opts.headers });
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text });
      });
    });
    // The server may close the connection once it has answered; the answer is what counts.
    req.on('error', (err) => setTimeout(() => reject(err), 2000).unref());
  });
  for (const chunk of opts.chunks) req.write(chunk);
  if (opts.end !== false) req.end();
  return { answer, req };
}

/** `{"a":"xxx…"}` of about `bytes` bytes, in chunks of 64 KB. */
function jsonChunks(bytes: number): Buffer[] {
  const body = Buffer.from(JSON.stringify({ a: 'x'.repeat(bytes) }));
  const chunks: Buffer[] = [];
  for (let i = 0; i < body.length; i += 64 * 1024) chunks.push(body.subarray(i, i + 64 * 1024));
  return chunks;
}

describe('Flow payload limit counts the bytes actually read', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let gate: any;
  const auth = () => ({ authorization: `Bearer ${ws.key}` });
  const runCount = async () => (await app.services.db.query(`SELECT count(*)::int AS n FROM flow_runs WHERE gate_id = $1`, [gate.id]))[0].n as number;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    ws = await flowWorkspace(app, 'scale');
    gate = await createGate(app, ws.key, { name: 'Sized' });
  });
  afterAll(() => app.close());

  it('a chunked body without Content-Length is cut off at 1 MB: 413 ERR_FLOW_RUN_005 while the client is still sending', async () => {
    for (const path of [`/api/flow/gates/${gate.id}/validate`, `/api/flow/gates/${gate.id}/test`, `/api/flow/gates/${gate.id}/runs`]) {
      const { answer, req } = rawPost(app, path, { headers: { ...auth(), 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks: jsonChunks(1.2 * MB), end: false });
      try {
        const res = await waitFor(() => Promise.race([answer, new Promise<undefined>((r) => setTimeout(() => r(undefined), 200))]), { timeoutMs: 15_000, what: `an answer to ${path} before the body ends` });
        expect([path, res.status, res.body.code, res.body.relatedInfo]).toEqual([path, 413, 'ERR_FLOW_RUN_005', { limit: MB }]);
      } finally {
        req.destroy();
      }
    }
    expect(await runCount()).toBe(0);
  });

  it('a chunked body within the limits (Scale: 500K characters) is read whole and recorded', async () => {
    const { answer } = rawPost(app, `/api/flow/gates/${gate.id}/validate`, { headers: { ...auth(), 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks: jsonChunks(400 * 1024) });
    const res = await answer;
    expect([res.status, res.body.status]).toEqual([200, 'validated']);
    expect(await runCount()).toBe(1);
  });

  it('a compressed body counts its inflated bytes: gzip and br bombs get 413 ERR_FLOW_RUN_005, a small gzip body works', async () => {
    const before = await runCount();
    // About 12 MB of JSON in about 12 KB: past the app-wide body limit too, so only the Flow limit answers it.
    const bomb = Buffer.from(JSON.stringify({ a: 'x'.repeat(12 * MB) }));
    for (const [encoding, body] of [
      ['gzip', gzipSync(bomb)],
      ['br', brotliCompressSync(Buffer.from(JSON.stringify({ a: 'x'.repeat(2 * MB) })))],
    ] as const) {
      expect(body.length).toBeLessThan(64 * 1024);
      const { answer } = rawPost(app, `/api/flow/gates/${gate.id}/validate`, {
        headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': String(body.length) },
        chunks: [body],
      });
      const res = await answer;
      expect([encoding, res.status, res.body.code]).toEqual([encoding, 413, 'ERR_FLOW_RUN_005']);
    }
    const small = gzipSync(Buffer.from(JSON.stringify({ customer: 'Ada' })));
    const ok = await rawPost(app, `/api/flow/gates/${gate.id}/validate`, {
      headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(small.length) },
      chunks: [small],
    }).answer;
    expect([ok.status, ok.body.status]).toEqual([200, 'validated']);
    expect(await runCount()).toBe(before + 1);
  });

  it('a declared Content-Length over 1 MB is refused before the body arrives', async () => {
    const { answer, req } = rawPost(app, `/api/flow/gates/${gate.id}/validate`, {
      headers: { ...auth(), 'content-type': 'application/json', 'content-length': String(2 * MB) },
      chunks: [Buffer.from('{"a":"')],
      end: false,
    });
    try {
      const res = await answer;
      expect([res.status, res.body.code]).toEqual([413, 'ERR_FLOW_RUN_005']);
    } finally {
      req.destroy();
    }
  });

  it('the plan content limit counts the decoded text of a chunked, compressed body (Free: 50K characters)', async () => {
    const free = await flowWorkspace(app);
    const small = await createGate(app, free.key, { name: 'Free gate', validationMode: 'freetext', freetextConfig: { minLength: 1 } });
    const text = gzipSync(Buffer.from('y'.repeat(60_000)));
    const res = await rawPost(app, `/api/flow/gates/${small.id}/validate`, {
      headers: { authorization: `Bearer ${free.key}`, 'content-type': 'text/plain', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' },
      chunks: [text],
    }).answer;
    expect([res.status, res.body.code, res.body.relatedInfo?.limit]).toEqual([413, 'ERR_FLOW_LIMIT_003', 50_000]);
  });

  it('a multipart body is not a payload: 415 ERR_REQ_007, nothing recorded', async () => {
    const before = await runCount();
    const boundary = 'formwork-test-boundary';
    const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="customer"\r\n\r\nAda\r\n--${boundary}--\r\n`);
    for (const framing of [{ 'content-length': String(body.length) }, { 'transfer-encoding': 'chunked' }] as Array<Record<string, string>>) {
      const res = await rawPost(app, `/api/flow/gates/${gate.id}/validate`, {
        headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}`, ...framing },
        chunks: [body],
      }).answer;
      expect([res.status, res.body.code, res.body.relatedInfo]).toEqual([415, 'ERR_REQ_007', { field: 'Content-Type', received: 'multipart/form-data', accepted: ['application/json', 'text/*', 'application/x-www-form-urlencoded'] }]);
    }
    expect(await runCount()).toBe(before);
  });

  it('a caller who may not submit is answered without the body being read', async () => {
    const { answer, req } = rawPost(app, `/api/flow/gates/${gate.id}/validate`, {
      headers: { authorization: 'Bearer fm_live_not-a-key', 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chunks: jsonChunks(256 * 1024),
      end: false,
    });
    try {
      const res = await answer;
      expect([res.status, res.body.code]).toEqual([401, 'ERR_AKEY_002']);
    } finally {
      req.destroy();
    }
  });
});
