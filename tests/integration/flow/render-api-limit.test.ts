import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../../support/app';
import { download } from '../../support/documents';
import { createGate, flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { waitFor } from '../../support/wait';

const FINAL = ['completed', 'failed', 'rejected', 'expired'];
const CAP = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

interface Served {
  requests: number;
  bytesWritten: number;
  closedEarly: boolean;
}

/**
 * A custom render API that answers more than CUSTOM_RENDER_MAX_BYTES: `/stream` sends a PDF (no
 * Content-Length) that never ends, `/json` the same as JSON, `/declared` announces twice the cap
 * in Content-Length and then waits; `/small` answers a small PDF. Each path records what it sent
 * and whether the client hung up before the end.
 */
async function startOversizedApi(): Promise<{ url: string; served: Record<string, Served>; stop(): Promise<void> }> {
  const served: Record<string, Served> = {};
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const s = (served[path] ??= { requests: 0, bytesWritten: 0, closedEarly: false });
    s.requests += 1;
    req.resume();
    res.on('close', () => {
      if (!res.writableFinished) s.closedEarly = true;
    });
    if (path === '/small') {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end('%PDF-1.4\n%%EOF\n');
      return;
    }
    if (path === '/declared') {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(2 * CAP) });
      res.write(CHUNK);
      s.bytesWritten += CHUNK.length;
      return; // the rest never comes: a client that waited for it would hang
    }
    res.writeHead(200, { 'content-type': path === '/json' ? 'application/json' : 'application/pdf' });
    if (path === '/json') res.write('{"url": "');
    const pump = () => {
      while (!res.destroyed) {
        s.bytesWritten += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('Flow custom render API: the response is read with a byte cap (CUSTOM_RENDER_MAX_BYTES, ERR_LIMIT_010)', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  let api: Awaited<ReturnType<typeof startOversizedApi>>;

  beforeAll(async () => {
    api = await startOversizedApi();
    app = await startTestApp({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1', CUSTOM_RENDER_MAX_BYTES: String(CAP) } });
    ws = await flowWorkspace(app, 'growth');
  });
  afterAll(async () => {
    await app.close();
    await api.stop();
  });

  const finalRun = async (path: string) => {
    const gate = await createGate(app, ws.key, { name: `Custom render ${path}`, renderMode: 'custom_api', renderConfig: { url: `${api.url}${path}` } });
    const res = await app.request('POST', `/api/flow/gates/${gate.id}/runs`, { token: ws.key, body: { payload: { n: 1 } } });
    expect(res.status).toBe(201);
    return waitFor(
      async () => {
        const run = (await app.request('GET', `/api/flow/runs/${res.body.id}`, { token: ws.key })).body;
        return FINAL.includes(run.status) ? run : undefined;
      },
      { timeoutMs: 30_000, what: `run over ${path} to finish` },
    );
  };

  it('a document that streams past the cap stops being read and fails the run at once, without retries', async () => {
    const run = await finalRun('/stream');
    expect(run).toMatchObject({ status: 'failed', artefactUrl: null });
    expect(run.error).toBe(`Render failed: Render API response exceeds the limit of ${CAP} bytes`);
    expect(api.served['/stream'].requests).toBe(1);
    // The client hung up: the endless body stopped near the cap (plus what socket buffers held).
    await waitFor(() => api.served['/stream'].closedEarly, { what: 'the render API to see the connection close' });
    expect(api.served['/stream'].bytesWritten).toBeLessThan(16 * CAP);
  });

  it('a Content-Length over the cap is refused before reading the body', async () => {
    const run = await finalRun('/declared');
    expect(run.status).toBe('failed');
    expect(run.error).toBe(`Render failed: Render API response exceeds the limit of ${CAP} bytes (its Content-Length says ${2 * CAP})`);
    expect(api.served['/declared'].requests).toBe(1);
    await waitFor(() => api.served['/declared'].closedEarly, { what: 'the render API to see the connection close' });
  });

  it('a JSON answer is capped too', async () => {
    const run = await finalRun('/json');
    expect(run.error).toBe(`Render failed: Render API response exceeds the limit of ${CAP} bytes`);
    expect(api.served['/json'].requests).toBe(1);
  });

  it('an answer under the cap is stored as before', async () => {
    const run = await finalRun('/small');
    expect(run.status).toBe('completed');
    expect((await download(run.artefactUrl)).body.toString()).toBe('%PDF-1.4\n%%EOF\n');
  });
});
