import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createImportPool, type ImportPool } from '../../../adapters/evaluation/import-pool';

/**
 * The import pool (adapters/evaluation/import-pool.ts): model files are read in worker processes
 * with a heap limit, one per project at a time, a bounded queue per replica. A read is held open
 * deterministically by a named pipe (a FIFO): `readFile` in the worker waits until the test writes.
 */
describe('import pool: bounded, per project, in processes with a heap limit', () => {
  let dir: string;
  let pool: ImportPool;
  const caps = { maxEntries: 10, maxBytes: 10 * 1024 * 1024 };
  const redash = (name: string) => JSON.stringify({ name, query: 'SELECT 1', data_source_id: 1 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'formwork-import-pool-'));
    pool = createImportPool({ concurrency: 1, queue: 1, maxHeapMb: 64, timeoutMs: 60_000 });
  });

  afterAll(async () => {
    await pool?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads one file per project at a time and queues at most `queue` more: the rest get 429 ERR_LIMIT_016', async () => {
    const held = join(dir, 'held.json');
    execFileSync('mkfifo', [held]);
    const file = join(dir, 'q.json');
    await writeFile(file, redash('Q'));
    // Project a's read waits on the pipe: a's second import is refused, b's waits in the queue, c's finds it full.
    const first = pool.parse('a', held, caps, undefined);
    const again = await pool.parse('a', file, caps, undefined).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'ERR_LIMIT_016', message: 'An import of this project is being read; try again when it has finished', relatedInfo: { retryAfter: 5 } });
    const queued = pool.parse('b', file, caps, undefined);
    const full = await pool.parse('c', file, caps, undefined).catch((e: unknown) => e);
    expect(full).toMatchObject({ code: 'ERR_LIMIT_016', message: 'Too many imports are being read; try again shortly' });
    await writeFile(held, redash('Held'));
    expect((await first).items.map((i) => i.source.name)).toEqual(['Held']);
    expect((await queued).items.map((i) => i.source.name)).toEqual(['Q']);
    // Project a may import again once its first read has ended.
    expect((await pool.parse('a', file, caps, undefined)).items.map((i) => i.source.name)).toEqual(['Q']);
  });

  it('refuses a file whose reading needs more than the heap limit as invalid, and reads the next one in a fresh process', async () => {
    // 20,000 parameters of 3,000 characters: under the element cap, 60 MB of text, over 64 MB of heap once read.
    const big = join(dir, 'big.json');
    await writeFile(big, JSON.stringify({ name: 'Big', query: 'SELECT 1', data_source_id: 1, options: { parameters: Array.from({ length: 20_000 }, (_, i) => ({ name: `p${i}`, title: 'x'.repeat(3000) + i })) } }));
    await expect(pool.parse('a', big, caps, undefined)).rejects.toMatchObject({ code: 'ERR_IMP_003', relatedInfo: { errors: [{ path: '$', message: 'reading the file needed more memory than allowed' }] } });
    const file = join(dir, 'after.json');
    await writeFile(file, redash('After'));
    expect((await pool.parse('a', file, caps, undefined)).items.map((i) => i.source.name)).toEqual(['After']);
  });
});
