import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import { S3Storage, type S3StorageOptions } from '../../../adapters/storage/s3-storage';
import { createStorage } from '../../../adapters/storage';
import { loadConfig } from '../../../domain/config';
import { expectStorageRoundTrip } from '../../support/storage-contract';
import { startS3Server, type S3TestServer } from '../../support/s3-server';

const BUCKET = 'formwork-artefacts';
const PDF = Buffer.from('%PDF-1.7\n% binary \x00\x01\x02\xff\n%%EOF\n', 'latin1');

let s3: S3TestServer;
let storage: S3Storage;
const opened: S3Storage[] = [];

function open(overrides: Partial<S3StorageOptions> = {}): S3Storage {
  const created = new S3Storage({
    bucket: BUCKET,
    endpoint: s3.endpoint,
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
    ...overrides,
  });
  opened.push(created);
  return created;
}

beforeAll(async () => {
  s3 = await startS3Server();
  storage = open();
});

afterAll(async () => {
  for (const s of opened) s.close();
  await s3?.stop();
});

describe('S3Storage against an S3-compatible server', () => {
  it('fails its health check until ensureBucket creates the bucket, which is idempotent', async () => {
    await expect(storage.check()).rejects.toBeDefined();
    await storage.ensureBucket();
    await storage.ensureBucket();
    await expect(storage.check()).resolves.toBeUndefined();
  });

  it('puts, reads back, reports and deletes an artefact', async () => {
    await expectStorageRoundTrip(storage);
  });

  it('stores a stream of unknown length', async () => {
    const key = 'exports/stream.csv';
    await storage.put(key, Readable.from(['a,b\n', '1,2\n']), 'text/csv');
    const object = await storage.get(key);
    expect(object.contentType).toBe('text/csv');
    expect((await readAll(object.body)).toString()).toBe('a,b\n1,2\n');
  });

  it('streams a long stream up in parts (a batch archive as it is written), and stores nothing when the stream fails', async () => {
    // 20 MiB in 64 KiB chunks, made as they are read: three parts of 8 MiB at most.
    const chunk = (i: number) => Buffer.alloc(64 * 1024, i % 251);
    const chunks = 320;
    async function* produce(failAt?: number) {
      for (let i = 0; i < chunks; i += 1) {
        if (i === failAt) throw new Error('the archive failed');
        yield chunk(i);
      }
    }
    await storage.put('archives/p/long.zip', Readable.from(produce()), 'application/zip');
    const object = await storage.get('archives/p/long.zip');
    expect(object).toMatchObject({ contentType: 'application/zip', size: chunks * 64 * 1024 });
    let i = 0;
    let same = true;
    for await (const piece of object.body as AsyncIterable<Buffer>) {
      for (const byte of piece) {
        if (byte !== Math.floor(i / (64 * 1024)) % 251) same = false;
        i += 1;
      }
    }
    expect({ bytes: i, same }).toEqual({ bytes: chunks * 64 * 1024, same: true });

    await expect(storage.put('archives/p/broken.zip', Readable.from(produce(200)), 'application/zip')).rejects.toThrow(/the archive failed/);
    expect(await storage.exists('archives/p/broken.zip')).toBe(false);
  }, 120_000);

  it('refuses keys the local adapter would refuse', async () => {
    await expect(storage.put('../x', PDF, 'application/pdf')).rejects.toThrow(TypeError);
  });

  it('is what createStorage builds when S3_BUCKET is set', () => {
    const config = loadConfig({
      S3_BUCKET: BUCKET,
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    const built = createStorage(config, { signingSecret: 'unused-with-s3' });
    expect(built).toBeInstanceOf(S3Storage);
    (built as S3Storage).close();
  });
});

describe('S3 presigned download URLs', () => {
  const key = 'documents/team-1/invoice-42.pdf';

  beforeAll(async () => {
    await storage.ensureBucket();
    await storage.put(key, PDF, 'application/pdf');
  });

  it('downloads the bytes with the content type and the signed file name', async () => {
    const { url, expiresAt } = await storage.signedUrl(key, { ttlSeconds: 300, filename: 'Rechnung März.pdf' });
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 290_000);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="Rechnung M_rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
    );
    expect(Buffer.from(await res.arrayBuffer())).toEqual(PDF);
  });

  it('is refused once expired', async () => {
    const past = open({ now: () => new Date(Date.now() - 3600_000) });
    const { url, expiresAt } = await past.signedUrl(key, { ttlSeconds: 60 });
    expect(expiresAt.getTime()).toBeLessThan(Date.now());
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/expired/i);
  });

  it.each([
    ['an edited signature', (u: URL) => u.searchParams.set('X-Amz-Signature', 'f'.repeat(64))],
    ['another key', (u: URL) => (u.pathname = u.pathname.replace('invoice-42', 'invoice-43'))],
    ['another file name', (u: URL) => u.searchParams.set('response-content-disposition', 'attachment; filename="x.exe"')],
  ])('is refused with %s', async (_label, edit) => {
    const url = new URL((await storage.signedUrl(key, { ttlSeconds: 300, filename: 'a.pdf' })).url);
    edit(url);
    const res = await fetch(url);
    expect(res.status).toBe(403);
    await res.arrayBuffer();
  });
});
