import { readdirSync } from 'node:fs';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { ExcelThreads } from '../../../adapters/rendering/excel-threads';
import { buildHtml, type HtmlDocument } from '../../../domain/templates/build-html';
import type { TemplateSchema } from '../../../domain/templates/template.types';
import { startHangingImageServer, type HangingImageServer } from '../../support/hanging-image';
import { pdfText, testPool } from '../../support/rendering-pdf';
import { waitFor } from '../../support/wait';

/** This process's threads (the main one, V8's and libuv's, and each Excel thread). */
const threadCount = (): number => readdirSync('/proc/self/task').length;

/**
 * The renderers stop when their render is cancelled (the render activity passes the activity's
 * cancellation signal): a print in progress closes its Chromium page, a render waiting for a page
 * leaves the queue, a workbook being built ends its Excel thread. The next render runs as usual.
 */
describe('aborting a render', () => {
  let images: HangingImageServer;
  let pool: ChromiumPool;
  let excel: ExcelThreads;

  beforeAll(async () => {
    images = await startHangingImageServer();
    pool = testPool({ poolSize: 1, imageAllowlist: [images.host] });
    excel = new ExcelThreads({ size: 1 });
  });
  afterAll(async () => {
    await pool?.close();
    await excel?.close();
    await images?.stop();
  });

  const doc = (text: string, image?: string): Promise<HtmlDocument> =>
    buildHtml(
      {
        pageSize: 'A5',
        sections: [{ id: 's', components: [{ id: 't', type: 'text', props: { text } }, ...(image ? [{ id: 'i', type: 'image', props: { src: image } }] : [])] }],
      } as TemplateSchema,
      {},
      { imageAllowlist: [images.host] },
    );
  const rejection = async (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err);

  it('a print in progress closes its page and rejects with the reason; one waiting for the page leaves the queue', async () => {
    const printing = new AbortController();
    const waiting = new AbortController();
    const first = rejection(pool.renderPdf(await doc('held', `${images.url}/held.png`), { maxPages: 5, signal: printing.signal }));
    const image = await images.request(1);
    // The single page is busy: this render waits for it.
    const second = rejection(pool.renderPdf(await doc('queued'), { maxPages: 5, signal: waiting.signal }));
    const reason = new Error('job cancelled');
    waiting.abort(reason);
    expect(await second).toBe(reason);
    expect(image.closed).toBe(false);

    const abortedAt = Date.now();
    printing.abort(reason);
    expect(await first).toBe(reason);
    // Long before the 30 s page-load timeout a held page would wait for.
    await waitFor(() => image.closed, { timeoutMs: 15_000, what: 'the page to drop its image request' });
    expect(Date.now() - abortedAt).toBeLessThan(15_000);
    expect(pool.stats.active).toBe(0);

    // The pool goes on: a fresh page prints the next document.
    const next = await pool.renderPdf(await doc('after the cancellation'), { maxPages: 5 });
    expect(await pdfText(next.pdf)).toContain('after the cancellation');
    // An already aborted signal never starts.
    const never = new AbortController();
    never.abort(reason);
    expect(await rejection(pool.renderPdf(await doc('never'), { maxPages: 5, signal: never.signal }))).toBe(reason);
    expect(images.held).toHaveLength(1);
  });

  it('a workbook being built ends its Excel thread at once; the next workbook gets a new thread', async () => {
    const schema = {
      pageSize: 'A4',
      sections: [{ id: 's', components: [{ id: 't', type: 'table', props: { dataSource: 'rows', columns: [{ header: 'N', field: 'n' }, { header: 'Text', field: 'text' }] } }] }],
    } as unknown as TemplateSchema;
    const batch = (k: number) => Array.from({ length: 2000 }, (_, i) => ({ n: k * 2000 + i, text: `row ${i} `.repeat(5) }));
    // The thread exists (an idle one from this workbook) before the build that is cancelled.
    expect((await excel.renderExcel(schema, { rows: batch(0) }, {})).subarray(0, 2).toString()).toBe('PK');
    const threadsBefore = threadCount();

    // A streamed table of 100 batches: the build is cancelled while the thread works on the tenth,
    // so it is in the middle of the workbook by construction, not by a guess at its speed.
    const controller = new AbortController();
    const reason = new Error('job cancelled');
    let asked = 0;
    let sourceClosed = false;
    let writes = 0;
    const building = rejection(
      excel.streamExcel(
        schema,
        {},
        { limits: { maxLoopIterations: 1_000_000 } },
        {
          sources: {
            rows: async function* () {
              try {
                for (let k = 0; k < 100; k++) {
                  asked += 1;
                  if (asked === 10) setImmediate(() => controller.abort(reason));
                  yield batch(k);
                }
              } finally {
                sourceClosed = true;
              }
            },
          },
          write: async () => {
            writes += 1;
          },
        },
        controller.signal,
      ),
    );
    expect(await building).toBe(reason);
    expect(asked).toBeLessThan(100);
    await waitFor(() => sourceClosed, { timeoutMs: 5000, what: 'the cancelled build to close its row source' });
    // Its thread is ended, not left to finish (it would otherwise wait for rows that never come).
    await waitFor(() => threadCount() < threadsBefore, { timeoutMs: 5000, what: 'the cancelled workbook\'s thread to end' });
    const writesAtCancel = writes;

    // The next workbook runs on a new thread, and nothing more of the cancelled one is written.
    const small = await excel.renderExcel(schema, { rows: batch(1).slice(0, 3) }, {});
    expect(small.subarray(0, 2).toString()).toBe('PK');
    expect(threadCount()).toBe(threadsBefore);
    expect(writes).toBe(writesAtCancel);
  });
});
