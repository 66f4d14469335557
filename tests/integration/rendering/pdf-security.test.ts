import { buildHtml } from '../../../domain/templates/build-html';
import { renderDocument } from '../../../adapters/rendering/render-document';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { buildTemplate, component } from '../../support/rendering-fixtures';
import { type HitRecorder, pdfText, startHitRecorder, testPool } from '../../support/rendering-pdf';
import { useEvaluator } from '../../support/evaluation';

const evaluator = useEvaluator();

/**
 * What a template or a variable value can make the renderer do: no JavaScript, and no request
 * except images from allow-listed hosts. A local server counts every request that gets out.
 */
describe('rendering security', () => {
  let recorder: HitRecorder;
  let pool: ChromiumPool;

  beforeAll(async () => {
    recorder = await startHitRecorder();
    pool = testPool();
  });
  afterAll(async () => {
    await pool.close();
    await recorder.close();
  });
  beforeEach(() => {
    recorder.hits.length = 0;
  });

  it('escapes a <script> in a variable value: it shows as text and never runs', async () => {
    const payload = `<script>document.body.innerHTML='SCRIPT-RAN'</script><img src="${recorder.origin}/from-variable">`;
    const template = buildTemplate({
      variables: [{ name: 'note', type: 'string', required: true }],
      components: [component('text', { text: 'Note: {{note}}' }), component('heading', { text: '{{note}}', level: 2 })],
    });
    const out = await renderDocument({ evaluator, pdfRenderer: pool }, { tenant: 'test', template, variables: { note: payload }, format: 'pdf' });
    const text = await pdfText(out.body);
    expect(text).toContain("Note: <script>document.body.innerHTML='SCRIPT-RAN'</script>");
    expect(text).toContain(`<img src="${recorder.origin}/from-variable">`);
    expect(recorder.hits).toEqual([]);
  });

  it('does not fetch a template image from a host that is not allow-listed', async () => {
    const template = buildTemplate({ components: [component('image', { src: `${recorder.origin}/template-image.png`, alt: 'Company logo' })] });
    const out = await renderDocument({ evaluator, pdfRenderer: pool }, { tenant: 'test', template, variables: {}, format: 'pdf' });
    expect(await pdfText(out.body)).toContain('Company logo');
    expect(recorder.hits).toEqual([]);
  });

  it('fetches the same image once its host is allow-listed (the recorder does see requests)', async () => {
    const allowing = testPool({ imageAllowlist: [recorder.host], poolSize: 1 });
    try {
      const template = buildTemplate({ components: [component('image', { src: `${recorder.origin}/template-image.png`, alt: 'Company logo' })] });
      await renderDocument({ evaluator, pdfRenderer: allowing, imageAllowlist: [recorder.host] }, { tenant: 'test', template, variables: {}, format: 'pdf' });
      expect(recorder.hits).toEqual(['GET /template-image.png']);
    } finally {
      await allowing.close();
    }
  });

  it('blocks every kind of request in raw HTML, and runs no script, even without the page CSP', async () => {
    const o = recorder.origin;
    const doc = await buildHtml({ pageSize: 'A4', sections: [{ id: 's', components: [] }] }, {});
    const hostile = `<!DOCTYPE html><html><head>
      <link rel="stylesheet" href="${o}/style.css"><style>@import url("${o}/import.css"); body { background: url("${o}/bg.png"); }
      @font-face { font-family: X; src: url("${o}/font.woff2"); } p { font-family: X; }</style>
      <script src="${o}/script.js"></script><link rel="prefetch" href="${o}/prefetch"><link rel="preload" as="image" href="${o}/preload.png">
      <link rel="icon" href="${o}/favicon.ico"></head><body><p id="p">STATIC-TEXT</p>
      <script>document.getElementById('p').textContent = 'SCRIPT-RAN'; fetch('${o}/fetch');</script>
      <img src="${o}/img.png"><img srcset="${o}/srcset.png 2x"><picture><source srcset="${o}/source.png"><img alt=""></picture>
      <iframe src="${o}/frame.html"></iframe><object data="${o}/object"></object><embed src="${o}/embed">
      <video poster="${o}/poster.png" src="${o}/video.mp4"></video><audio src="${o}/audio.mp3"></audio>
      <svg><image href="${o}/svg-image.png" width="10" height="10"/></svg>
      <form action="${o}/form"><input type="image" src="${o}/input.png"></form>
      <img src="file:///etc/passwd"></body></html>`;
    const refresh = `<html><head><meta http-equiv="refresh" content="0;url=${o}/refresh"></head><body>x</body></html>`;
    // Its own browser, closed before counting: nothing can still be on its way to the recorder.
    const own = testPool({ poolSize: 1 });
    try {
      const out = await own.renderPdf({ ...doc, html: hostile }, { maxPages: 5 });
      const text = await pdfText(out.pdf);
      expect(text).toContain('STATIC-TEXT');
      expect(text).not.toContain('SCRIPT-RAN');
      await own.renderPdf({ ...doc, html: refresh }, { maxPages: 5 });
    } finally {
      await own.close();
    }
    await fetch(`${o}/sync`);
    expect(recorder.hits).toEqual(['GET /sync']);
  });

  it('runs no script inside frames either (data: and srcdoc documents)', async () => {
    const doc = await buildHtml({ pageSize: 'A4', sections: [{ id: 's', components: [] }] }, {});
    const html = `<html><body><p>OUTER</p>
      <iframe src="data:text/html,<p>DATA-FRAME</p><script>document.write('DATA-FRAME-SCRIPT-RAN')</script>"></iframe>
      <iframe srcdoc="<p>SRCDOC-FRAME</p><script>document.write('SRCDOC-SCRIPT-RAN')</script>"></iframe></body></html>`;
    const text = await pdfText((await pool.renderPdf({ ...doc, html }, { maxPages: 5 })).pdf);
    // The srcdoc frame shows it was rendered; the data: frame (out of process) is not always printed in time.
    expect(text).toContain('SRCDOC-FRAME');
    expect(text).not.toMatch(/SCRIPT-RAN/);
  });

  it('allows only images, not other resources, from an allow-listed host', async () => {
    const allowing = testPool({ imageAllowlist: [recorder.host], poolSize: 1 });
    try {
      const o = recorder.origin;
      const doc = await buildHtml({ pageSize: 'A4', sections: [{ id: 's', components: [] }] }, {});
      const html = `<html><head><link rel="stylesheet" href="${o}/style.css"></head><body>
        <img src="${o}/ok.png"><iframe src="${o}/frame.html"></iframe><script src="${o}/script.js"></script></body></html>`;
      await allowing.renderPdf({ ...doc, html }, { maxPages: 5 });
      expect(recorder.hits).toEqual(['GET /ok.png']);
    } finally {
      await allowing.close();
    }
  });
});
