import { buildHtml, type HtmlDocument } from '../../../domain/templates/build-html';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { pdfText, testPool } from '../../support/rendering-pdf';
import { waitFor } from '../../support/wait';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function doc(text: string): Promise<HtmlDocument> {
  return buildHtml({ pageSize: 'A5', sections: [{ id: 's', components: [{ id: 't', type: 'text', props: { text } }] }] }, {});
}

describe('ChromiumPool', () => {
  const pools: ChromiumPool[] = [];
  const pool = (o: Parameters<typeof testPool>[0] = {}) => {
    const p = testPool(o);
    pools.push(p);
    return p;
  };
  afterAll(() => Promise.all(pools.map((p) => p.close())));

  it('keeps one browser across documents and reuses its warm pages', async () => {
    const p = pool({ poolSize: 2 });
    await p.start();
    expect(p.browserGeneration).toBe(1);
    const texts = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => pdfText((await p.renderPdf(await doc(`Document ${i}`), { maxPages: 5 })).pdf)),
    );
    texts.forEach((t, i) => expect(t).toContain(`Document ${i}`));
    expect(p.browserGeneration).toBe(1);
    expect(p.stats).toMatchObject({ documents: 6, active: 0, idlePages: 2 });
  });

  it('bounds concurrency to the pool size', async () => {
    const p = pool({ poolSize: 2 });
    let peak = 0;
    const watch = setInterval(() => (peak = Math.max(peak, p.stats.active)), 1);
    try {
      await Promise.all(Array.from({ length: 8 }, async (_, i) => p.renderPdf(await doc(`Parallel ${i}`), { maxPages: 5 })));
    } finally {
      clearInterval(watch);
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(2);
    expect(p.stats.idlePages).toBeLessThanOrEqual(2);
  });

  it('replaces the browser after N documents and closes the old one', async () => {
    const p = pool({ poolSize: 1, maxDocumentsPerBrowser: 3 });
    await p.renderPdf(await doc('first'), { maxPages: 5 });
    const firstPid = p.browserPid!;
    expect(p.browserGeneration).toBe(1);
    for (const n of [2, 3]) await p.renderPdf(await doc(`doc ${n}`), { maxPages: 5 });
    await waitFor(() => !processAlive(firstPid), { timeoutMs: 10_000, what: 'the retired browser to exit' });
    const out = await p.renderPdf(await doc('after recycle'), { maxPages: 5 });
    expect(await pdfText(out.pdf)).toContain('after recycle');
    expect(p.browserGeneration).toBe(2);
    expect(p.browserPid).not.toBe(firstPid);
  });

  it('survives a killed browser: the next render launches a new one', async () => {
    const p = pool({ poolSize: 1 });
    await p.renderPdf(await doc('before the crash'), { maxPages: 5 });
    const pid = p.browserPid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !processAlive(pid), { timeoutMs: 10_000, what: 'the browser to die' });
    const out = await p.renderPdf(await doc('after the crash'), { maxPages: 5 });
    expect(await pdfText(out.pdf)).toContain('after the crash');
    expect(p.browserGeneration).toBe(2);
  });

  it('retries a document whose browser dies under it', async () => {
    const p = pool({ poolSize: 1 });
    await p.start();
    const pid = p.browserPid!;
    // The kill lands while the page is loading; the render must still come back with a PDF.
    const pending = p.renderPdf(await doc('the document survived'), { maxPages: 5 });
    process.kill(pid, 'SIGKILL');
    expect(await pdfText((await pending).pdf)).toContain('survived');
    expect(p.browserGeneration).toBe(2);
  });

  it('refuses to render after close', async () => {
    const p = pool();
    await p.close();
    await expect(p.renderPdf(await doc('late'), { maxPages: 5 })).rejects.toThrow(/closed/);
  });
});
