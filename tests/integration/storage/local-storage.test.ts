import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import Koa from 'koa';
import { AppError, errorBody } from '../../../domain/errors';
import { LocalStorage } from '../../../adapters/storage/local-storage';
import { createStorage } from '../../../adapters/storage';
import { loadConfig } from '../../../domain/config';
import { expectStorageRoundTrip } from '../../support/storage-contract';
import { createFileRoutes } from '../../../api/storage/storage.routes';

const SECRET = 'local-storage-test-secret-0123456789abcdef';
const PDF = Buffer.from('%PDF-1.7\n% fake but binary: \x00\x01\x02\xff\n%%EOF\n', 'latin1');

let rootDir: string;
let server: Server;
let baseUrl: string;
let storage: LocalStorage;

/** The same directory and secret, but a clock an hour behind: every link it mints is expired. */
function pastStorage(): LocalStorage {
  return new LocalStorage({ rootDir, publicUrl: baseUrl, signingSecret: SECRET, now: () => new Date(Date.now() - 3600_000) });
}

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), 'formwork-local-storage-'));
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  storage = new LocalStorage({ rootDir, publicUrl: baseUrl, signingSecret: SECRET });

  // The real app mounts the router behind its own error middleware; this one renders the same body.
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.status = err.status;
      ctx.body = errorBody(err, ctx.path);
    }
  });
  app.use(createFileRoutes(storage).routes());
  // Koa's handler answers every request itself, its errors included: nothing is left to await here.
  const handle = app.callback();
  server.on('request', (req, res) => void handle(req, res));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(rootDir, { recursive: true, force: true });
});

describe('LocalStorage', () => {
  it('puts, reads back, reports and deletes an artefact', async () => {
    await expectStorageRoundTrip(storage);
  });

  it('stores a stream, overwrites in place and keeps the content type across instances', async () => {
    const key = 'exports/report.xlsx';
    await storage.put(key, Buffer.from('old'), 'text/plain');
    await storage.put(key, Readable.from([Buffer.from('new '), Buffer.from('bytes')]), 'application/vnd.ms-excel');
    const again = new LocalStorage({ rootDir, publicUrl: baseUrl, signingSecret: SECRET });
    const object = await again.get(key);
    expect(object.contentType).toBe('application/vnd.ms-excel');
    expect((await readAll(object.body)).toString()).toBe('new bytes');
    // Nothing half-written is left behind.
    expect(await readdir(join(rootDir, '.tmp'))).toEqual([]);
  });

  it.each(['../escape', '/absolute', 'a//b', 'a/../b', '.meta/x', 'a/.hidden', 'sp ace', ''])(
    'refuses the key %j',
    async (key) => {
      await expect(storage.put(key, PDF, 'application/pdf')).rejects.toThrow(TypeError);
      await expect(storage.signedUrl(key, { ttlSeconds: 60 })).rejects.toThrow(TypeError);
    },
  );

  it('passes its health check', async () => {
    await expect(storage.check()).resolves.toBeUndefined();
  });

  it('is what createStorage builds without S3_BUCKET', () => {
    const config = loadConfig({ DATA_DIR: rootDir, PUBLIC_URL: 'https://files.example.com/' });
    const built = createStorage(config, { signingSecret: SECRET });
    expect(built).toBeInstanceOf(LocalStorage);
    expect((built as LocalStorage).rootDir).toBe(join(rootDir, 'artefacts'));
  });
});

describe('GET /api/files/*key (signed local links)', () => {
  const key = 'documents/team-1/invoice_42.pdf';

  beforeAll(async () => {
    await storage.put(key, PDF, 'application/pdf');
  });

  it('streams the bytes with type, length, disposition and cache headers', async () => {
    const { url, expiresAt } = await storage.signedUrl(key, { ttlSeconds: 300, filename: 'Rechnung März.pdf' });
    expect(url.startsWith(`${baseUrl}/api/files/documents/team-1/invoice_42.pdf?expires=`)).toBe(true);
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 290_000);

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-length')).toBe(String(PDF.length));
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="Rechnung M_rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
    );
    expect(res.headers.get('cache-control')).toBe('private');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(PDF);
  });

  it('names the download after the key when no filename was signed', async () => {
    const res = await fetch((await storage.signedUrl(key, { ttlSeconds: 60 })).url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('filename="invoice_42.pdf"');
    await res.arrayBuffer();
  });

  it('refuses an expired link with ERR_FILE_002', async () => {
    const { url, expiresAt } = await pastStorage().signedUrl(key, { ttlSeconds: 60 });
    expect(expiresAt.getTime()).toBeLessThan(Date.now());
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ statusCode: 403, code: 'ERR_FILE_002', path: expect.stringContaining('/api/files/') });
  });

  it.each([
    ['an edited signature', (u: URL) => u.searchParams.set('signature', 'f'.repeat(64))],
    ['a missing signature', (u: URL) => u.searchParams.delete('signature')],
    ['an extended expiry', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))],
    ['another file name', (u: URL) => u.searchParams.set('filename', 'other.pdf')],
    ['another key', (u: URL) => (u.pathname = '/api/files/documents/team-2/invoice_42.pdf')],
    ['a traversing key', (u: URL) => (u.pathname = '/api/files/documents/..%2F..%2F.meta%2Fsecret')],
  ])('refuses %s with ERR_FILE_003', async (_label, edit) => {
    const url = new URL((await storage.signedUrl(key, { ttlSeconds: 300, filename: 'a.pdf' })).url);
    edit(url);
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ statusCode: 403, code: 'ERR_FILE_003' });
  });

  it('answers ERR_FILE_001 for a valid link to a deleted artefact', async () => {
    const gone = 'documents/team-1/deleted.pdf';
    await storage.put(gone, PDF, 'application/pdf');
    const { url } = await storage.signedUrl(gone, { ttlSeconds: 60 });
    await storage.delete(gone);
    const res = await fetch(url);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ statusCode: 404, code: 'ERR_FILE_001' });
  });
});
