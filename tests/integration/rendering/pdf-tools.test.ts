import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { createPdfTools, type PdfTools } from '../../../adapters/rendering/pdf-tools/pdf-tools';

/**
 * The PDF tools' processes (adapters/rendering/pdf-tools/pdf-tools.ts): every finishing step runs
 * in a worker process with a heap limit, files cross through a private folder that is removed
 * after each call, catalogued refusals cross as they are, and a document that needs more memory
 * than allowed ends its process alone (ERR_OUTPUT_004) while the next call is served by a fresh one.
 */
describe('PDF tools: finishing steps in processes with a heap limit', () => {
  let dir: string;
  let tools: PdfTools;

  const pages = async (n: number, size: [number, number] = [300, 300]) => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < n; i += 1) doc.addPage(size);
    return Buffer.from(await doc.save());
  };

  /**
   * A small file whose reading needs far more heap than 64 MB: one object is an array of three
   * million numbers, and pdf-lib parses every object of a document when it loads it.
   */
  const heapHungry = () =>
    Buffer.from(
      '%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [4 0 R] /Count 1 >>\nendobj\n' +
        `3 0 obj\n[${'1 '.repeat(3_000_000)}]\nendobj\n4 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n`,
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'formwork-pdf-tools-'));
    tools = createPdfTools({ concurrency: 1, maxHeapMb: 64, timeoutMs: 120_000, tmpDir: dir });
  });

  afterAll(async () => {
    await tools?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('merges in a worker process: the pages of every part, a bookmark each, and no file left behind', async () => {
    const merged = await tools.merge([{ pdf: await pages(2), title: 'Invoice' }, { pdf: await pages(3), title: 'Terms' }], { maxPages: 10 });
    expect(merged.pageCount).toBe(5);
    const file = join(dir, 'merged.pdf');
    await writeFile(file, merged.pdf);
    const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=outlines', file], { encoding: 'utf8' }));
    expect(json.outlines.map((o: { title: string; destpageposfrom1: number }) => [o.title, o.destpageposfrom1])).toEqual([
      ['Invoice', 1],
      ['Terms', 3],
    ]);
    expect((await readdir(dir)).filter((f) => f.startsWith('formwork-pdf-'))).toEqual([]);
  });

  it('answers a catalogued refusal from the worker as it is: a part that is no PDF is ERR_OUTPUT_003 naming the part', async () => {
    await expect(tools.merge([{ pdf: await pages(1), title: 'A' }, { pdf: Buffer.from('GIF89a not a pdf'), title: 'B' }], { maxPages: 10 })).rejects.toMatchObject({
      code: 'ERR_OUTPUT_003',
      relatedInfo: { part: 1, reason: 'unreadable' },
    });
    await expect(tools.merge([{ pdf: await pages(3), title: 'A' }, { pdf: await pages(3), title: 'B' }], { maxPages: 5 })).rejects.toMatchObject({
      code: 'ERR_OUTPUT_005',
      relatedInfo: { limit: 5 },
    });
  });

  it('ends the process of a document that needs more heap than allowed (ERR_OUTPUT_004) and serves the next call from a fresh one', async () => {
    await expect(tools.merge([{ pdf: heapHungry(), title: 'Hungry' }], { maxPages: 10 })).rejects.toMatchObject({
      code: 'ERR_OUTPUT_004',
      message: 'finishing the document needed more memory than allowed',
    });
    expect((await tools.merge([{ pdf: await pages(1), title: 'After' }], { maxPages: 10 })).pageCount).toBe(1);
    expect((await readdir(dir)).filter((f) => f.startsWith('formwork-pdf-'))).toEqual([]);
  });

  it('stops a call whose signal is aborted, with the signal\'s reason', async () => {
    const controller = new AbortController();
    const call = tools.merge([{ pdf: heapHungry(), title: 'Slow' }], { maxPages: 10 }, controller.signal);
    controller.abort(new Error('cancelled by the test'));
    await expect(call).rejects.toThrow('cancelled by the test');
    expect((await tools.merge([{ pdf: await pages(2), title: 'Next' }], { maxPages: 10 })).pageCount).toBe(2);
  });
});
