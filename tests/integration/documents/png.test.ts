import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pdfToImages } from '../../../adapters/rendering/pdf-tools/images';
import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { dpiOf, readPng, zipEntries } from '../../support/output-files';
import { pdfInfo } from '../../support/rendering-pdf';
import { buildTemplate } from '../../support/templates';
import { waitFor } from '../../support/wait';

/**
 * `format: "png"` (docs/documents.md "Images"): the first page as one PNG, or every page in a ZIP,
 * at the DPI asked (the pixels are the page's size × dpi / 72, the pHYs chunk says the DPI); the
 * download's name and content type follow the file; the bounds refuse what would cost too much.
 */
describe('PNG output: a page or every page at the DPI asked', () => {
  let app: TestApp;
  let p: DocumentProject;
  let threePages: DocumentProject;
  let manyPages: DocumentProject;
  beforeAll(async () => {
    app = await startTestApp();
    p = await setupDocumentProject(app);
    // Three pages: a page break before the second and the third text.
    threePages = await setupDocumentProject(
      app,
      buildTemplate({
        outputFormats: ['pdf'],
        schema: {
          pageSize: 'A4',
          sections: [
            {
              id: 'main',
              components: [
                { id: 'one', type: 'text', props: { text: 'Page one for {{customer}}' } },
                { id: 'two', type: 'text', props: { text: 'Page two', pageBreak: 'before' } },
                { id: 'three', type: 'text', props: { text: 'Page three', pageBreak: 'before' } },
              ],
            },
          ],
        },
        calculatedVariables: [],
      }),
    );
    // A page per row.
    manyPages = await setupDocumentProject(
      app,
      buildTemplate({
        outputFormats: ['pdf'],
        schema: {
          pageSize: 'A4',
          sections: [{ id: 'main', components: [{ id: 'rows', type: 'repeat', props: { dataSource: 'rows', components: [{ id: 'row', type: 'text', props: { text: 'Row {{item}}', pageBreak: 'after' } }] } }] }],
        },
        variables: [{ name: 'rows', type: 'array', required: true, items: { type: 'string' } }],
        constants: {},
        calculatedVariables: [],
      }),
    );
  });
  afterAll(() => app.close());

  const generate = (project: DocumentProject, body: Record<string, unknown>) => app.request('POST', '/api/documents/generate', { token: project.apiKey, body: { templateId: project.templateId, ...body } });

  async function completed(project: DocumentProject, body: Record<string, unknown>) {
    const res = await generate(project, body);
    expect(res.status).toBe(201);
    const job = await waitForJob(app, project.apiKey, res.body.jobId);
    expect(job.status).toBe('completed');
    return job;
  }

  /** The pixels pdftoppm draws a page of `size` ("595.92 x 842.88 pts") at `dpi`: points × dpi / 72. */
  const expectedPixels = (size: string, dpi: number) => {
    const [w, h] = /([\d.]+) x ([\d.]+)/.exec(size)!.slice(1).map(Number);
    return { width: (w * dpi) / 72, height: (h * dpi) / 72 };
  };

  it('pages "first": one PNG of the first page, A4 at 150 dpi is 1240 × 1754, its pHYs says 150 dpi; named and typed as a PNG', async () => {
    const asPdf = await completed(threePages, { format: 'pdf', variables: { customer: 'Ada' } });
    const pdf = (await download(asPdf.downloadUrl)).body;
    const info = await pdfInfo(pdf);
    expect(info.pages).toBe(3);

    const job = await completed(threePages, { format: 'png', variables: { customer: 'Ada' }, filename: 'thumb', output: { image: { dpi: 150, pages: 'first' } } });
    expect(job.format).toBe('png');
    expect(job.output).toEqual({ image: { dpi: 150, pages: 'first' } });
    const file = await download(job.downloadUrl);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-disposition')).toContain('filename="thumb.png"');

    const png = readPng(file.body);
    const expected = expectedPixels(info.pageSize, 150);
    expect(Math.abs(png.width - expected.width)).toBeLessThanOrEqual(1);
    expect(Math.abs(png.height - expected.height)).toBeLessThanOrEqual(1);
    // A4 is 210 × 297 mm: 1240 × 1754 pixels at 150 dpi, give or take Chromium's rounding of the page to points.
    expect(Math.abs(png.width - 1240)).toBeLessThanOrEqual(2);
    expect(Math.abs(png.height - 1754)).toBeLessThanOrEqual(2);
    expect(png.pixelsPerMetre?.map(dpiOf)).toEqual([150, 150]);
  });

  it('the DPI decides the pixels: 72 dpi is the page in points; the default is 150 dpi and the first page', async () => {
    const info = await pdfInfo((await download((await completed(p, { format: 'pdf', variables: { customer: 'Ada' } })).downloadUrl)).body);

    const small = readPng((await download((await completed(p, { format: 'png', variables: { customer: 'Ada' }, output: { image: { dpi: 72 } } })).downloadUrl)).body);
    const at72 = expectedPixels(info.pageSize, 72);
    expect(Math.abs(small.width - at72.width)).toBeLessThanOrEqual(1);
    expect(Math.abs(small.height - at72.height)).toBeLessThanOrEqual(1);
    expect(small.pixelsPerMetre?.map(dpiOf)).toEqual([72, 72]);

    const job = await completed(p, { format: 'png', variables: { customer: 'Ada' } });
    expect(job.output ?? {}).toEqual({});
    const file = await download(job.downloadUrl);
    expect(file.headers.get('content-disposition')).toContain(`filename="document-${job.jobId}.png"`);
    const byDefault = readPng(file.body);
    expect(byDefault.pixelsPerMetre?.map(dpiOf)).toEqual([150, 150]);
    expect(Math.abs(byDefault.width - expectedPixels(info.pageSize, 150).width)).toBeLessThanOrEqual(1);
  });

  it('pages "all": a ZIP with one PNG per page (page-001.png …), each at the DPI; named and typed as a ZIP', async () => {
    const job = await completed(threePages, { format: 'png', variables: { customer: 'Ada' }, filename: 'pages', output: { image: { dpi: 100, pages: 'all' } } });
    const file = await download(job.downloadUrl);
    expect(file.headers.get('content-type')).toBe('application/zip');
    expect(file.headers.get('content-disposition')).toContain('filename="pages.zip"');
    const entries = await zipEntries(file.body);
    expect(entries.map((e) => e.name)).toEqual(['page-001.png', 'page-002.png', 'page-003.png']);
    const pngs = entries.map((e) => readPng(e.body));
    for (const png of pngs) {
      expect(png.pixelsPerMetre?.map(dpiOf)).toEqual([100, 100]);
      expect(Math.abs(png.width - (210 / 25.4) * 100)).toBeLessThanOrEqual(2);
    }
    // Three different pages, not one drawn three times.
    expect(new Set(entries.map((e) => e.body.toString('base64'))).size).toBe(3);

    // The stored file is a .zip; the jobs export lists the job as a png job.
    const [row] = await app.services.db.query(`SELECT artefact_key FROM document_jobs WHERE id = $1`, [job.jobId]);
    expect(row.artefact_key).toMatch(new RegExp(`/${job.jobId}\\.zip$`));
    const exported = await app.request('GET', '/api/documents/jobs/export?format=json', { token: threePages.apiKey });
    expect(JSON.parse(exported.text).find((r: { jobId: string }) => r.jobId === job.jobId)).toMatchObject({ format: 'png', filename: 'pages' });
  });

  it('a batch of png documents: each document\'s link is a PNG', async () => {
    const res = await app.request('POST', '/api/documents/generate/batch', {
      token: p.apiKey,
      body: { templateId: p.templateId, format: 'png', output: { image: { dpi: 50 } }, documents: [{ variables: { customer: 'One' }, filename: 'one' }, { variables: { customer: 'Two' } }] },
    });
    expect(res.status).toBe(201);
    const batch = await waitFor(
      async () => {
        const b = await app.request('GET', `/api/documents/batches/${res.body.batchId}`, { token: p.apiKey });
        return b.body.status === 'processing' ? undefined : b.body;
      },
      { timeoutMs: 120_000, what: 'the png batch' },
    );
    expect(batch.documents).toHaveLength(2);
    for (const [i, d] of batch.documents.entries()) {
      expect(d.status).toBe('completed');
      const file = await download(d.downloadUrl);
      expect(file.headers.get('content-type')).toBe('image/png');
      expect(file.headers.get('content-disposition')).toContain(i === 0 ? 'filename="one.png"' : '.png"');
      expect(readPng(file.body).pixelsPerMetre?.map(dpiOf)).toEqual([50, 50]);
    }
  });

  it('refused at acceptance: a dpi out of 36–600, image options without png, PDF-only options with png', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ format: 'png', output: { image: { dpi: 601 } } }, 'output.image.dpi'],
      [{ format: 'png', output: { image: { dpi: 35 } } }, 'output.image.dpi'],
      [{ format: 'png', output: { image: { dpi: 1e9 } } }, 'output.image.dpi'],
      [{ format: 'png', output: { image: { dpi: 150.5 } } }, 'output.image.dpi'],
      [{ format: 'png', output: { image: { pages: 'some' } } }, 'output.image.pages'],
      [{ format: 'pdf', output: { image: { dpi: 150 } } }, 'output.image'],
      [{ format: 'png', output: { encryption: { ownerPassword: 'o' } } }, 'output.encryption'],
      [{ format: 'png', output: { pdfa: '2b' } }, 'output.pdfa'],
    ];
    for (const [body, field] of cases) {
      const res = await generate(p, { variables: { customer: 'Ada' }, ...body });
      expect({ body, status: res.status, code: res.body.code, field: res.body.relatedInfo?.field }).toEqual({ body, status: 400, code: 'ERR_VALID_001', field });
    }
  });

  it('hostile: many pages at 600 dpi are bounded before anything is drawn (ERR_OUTPUT_007); the same pages at 50 dpi are drawn', async () => {
    const rows = Array.from({ length: 12 }, (_, i) => `r${i + 1}`);
    const res = await generate(manyPages, { format: 'png', variables: { rows }, output: { image: { dpi: 600, pages: 'all' } } });
    expect(res.status).toBe(201);
    const failed = await waitForJob(app, manyPages.apiKey, res.body.jobId);
    expect(failed.status).toBe('failed');
    expect(failed.downloadUrl ?? null).toBeNull();
    const [row] = await app.services.db.query(`SELECT error_code, error_message, artefact_key FROM document_jobs WHERE id = $1`, [res.body.jobId]);
    expect(row).toMatchObject({ error_code: 'ERR_OUTPUT_007', artefact_key: null });
    expect(row.error_message).toMatch(/pages at 600 dpi would be \d+ megapixels/);

    // The first page alone at 600 dpi is within the bounds.
    const first = await completed(manyPages, { format: 'png', variables: { rows }, output: { image: { dpi: 600, pages: 'first' } } });
    const big = readPng((await download(first.downloadUrl)).body, { headerOnly: true });
    expect(big.pixelsPerMetre?.map(dpiOf)).toEqual([600, 600]);
    // A4's width at 600 dpi, within Chromium's rounding of the page to points (595.92 pt for 595.28).
    expect(Math.abs(big.width / ((210 / 25.4) * 600) - 1)).toBeLessThan(0.002);

    const all = await completed(manyPages, { format: 'png', variables: { rows }, output: { image: { dpi: 50, pages: 'all' } } });
    const entries = await zipEntries((await download(all.downloadUrl)).body);
    expect(entries).toHaveLength(12);
    expect(entries[11].name).toBe('page-012.png');
  });

  it('the PNGs stop at the output limit (RENDER_OUTPUT_MAX_BYTES, ERR_LIMIT_011) while they are made', async () => {
    const pdf = (await download((await completed(threePages, { format: 'pdf', variables: { customer: 'Ada' } })).downloadUrl)).body;
    const dir = await mkdtemp(join(tmpdir(), 'formwork-png-'));
    try {
      const one = await pdfToImages(pdf, { dpi: 100, pages: 'first' }, dir);
      expect(one.contentType).toBe('image/png');
      // pdftoppm cannot write a file past the limit (RLIMIT_FSIZE): the page alone is refused.
      await expect(pdfToImages(pdf, { dpi: 100, pages: 'first', maxBytes: Math.floor(one.body.length / 2) }, dir)).rejects.toMatchObject({ code: 'ERR_LIMIT_011' });
      // Every page: past the limit after the first page or so.
      await expect(pdfToImages(pdf, { dpi: 100, pages: 'all', maxBytes: Math.floor(one.body.length * 1.5) }, dir)).rejects.toMatchObject({ code: 'ERR_LIMIT_011' });
      const all = await pdfToImages(pdf, { dpi: 100, pages: 'all', maxBytes: one.body.length * 10 }, dir);
      expect(all).toMatchObject({ contentType: 'application/zip', fileExtension: 'zip', pageCount: 3 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
