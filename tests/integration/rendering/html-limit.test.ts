import { renderDocument } from '../../../adapters/rendering/render-document';
import type { PdfRenderer } from '../../../adapters/rendering/pdf-renderer';
import type { HtmlDocument } from '../../../domain/templates/build-html';
import { buildTemplate, component } from '../../support/rendering-fixtures';
import { useEvaluator } from '../../support/evaluation';
import { cpuMsOfAsync } from '../../support/cpu-time';

const evaluator = useEvaluator();

/** A PDF renderer that only records what it was handed: what would have reached Chromium. */
function recordingRenderer(): PdfRenderer & { docs: HtmlDocument[] } {
  const docs: HtmlDocument[] = [];
  return {
    docs,
    renderPdf: async (doc) => {
      docs.push(doc);
      return { pdf: Buffer.from('%PDF-1.4\n%%EOF\n'), pageCount: 1 };
    },
    close: async () => undefined,
  };
}

const bytesOf = (doc: HtmlDocument) => Buffer.byteLength(doc.html) + Buffer.byteLength(doc.headerTemplate) + Buffer.byteLength(doc.footerTemplate);

/** A repeat whose every pass prints the same long note: the output grows with the array. */
const multiplying = buildTemplate({
  schema: {
    pageSize: 'A4',
    header: { right: '{{title}}' },
    footer: { center: 'Page {page} of {pages}' },
    sections: [
      {
        id: 'main',
        components: [component('repeat', { dataSource: 'rows', components: [component('text', { text: '{{item}}: {{note}}' }, 'line')] }, 'rows')],
      },
    ],
  },
});

describe('HTML size limit (RENDER_HTML_MAX_BYTES, ERR_LIMIT_009)', () => {
  it('counts the page, header and footer to the byte: at the limit it prints, one byte over it never reaches Chromium', async () => {
    const variables = { title: 'Ünïcode title', note: 'ñ'.repeat(100), rows: ['a', 'b', 'c'] };
    const probe = recordingRenderer();
    await renderDocument({ evaluator, pdfRenderer: probe }, { tenant: 'test', template: multiplying, variables, format: 'pdf' });
    const size = bytesOf(probe.docs[0]);

    const atLimit = recordingRenderer();
    await expect(
      renderDocument({ evaluator, pdfRenderer: atLimit, limits: { maxHtmlBytes: size } }, { tenant: 'test', template: multiplying, variables, format: 'pdf' }),
    ).resolves.toMatchObject({ fileExtension: 'pdf' });
    expect(atLimit.docs).toHaveLength(1);

    const below = recordingRenderer();
    await expect(
      renderDocument({ evaluator, pdfRenderer: below, limits: { maxHtmlBytes: size - 1 } }, { tenant: 'test', template: multiplying, variables, format: 'pdf' }),
    ).rejects.toMatchObject({ code: 'ERR_LIMIT_009', status: 400, relatedInfo: { limit: size - 1 } });
    expect(below.docs).toHaveLength(0);
  });

  it('stops a template whose loop multiplies its output at the component that crossed the limit, before building the rest', async () => {
    // 10,000 passes of a 100 KB note would be about 1 GB of HTML; the limit stops it after ~11 passes.
    const variables = { title: 't', note: 'x'.repeat(100_000), rows: Array.from({ length: 10_000 }, (_, i) => `row ${i}`) };
    const pdf = recordingRenderer();
    const { cpuMs } = await cpuMsOfAsync(() =>
      expect(
        renderDocument({ evaluator, pdfRenderer: pdf, limits: { maxHtmlBytes: 1024 * 1024, maxLoopIterations: 10_000 } }, { tenant: 'test', template: multiplying, variables, format: 'pdf' }),
      ).rejects.toMatchObject({ code: 'ERR_LIMIT_009', relatedInfo: { limit: 1024 * 1024, componentId: 'line' } }),
    );
    // CPU time of this process (its evaluation threads included): a busy machine does not move it.
    expect(cpuMs).toBeLessThan(5000);
    expect(pdf.docs).toHaveLength(0);
  });

  it('does not apply to workbooks (no HTML is made for Excel)', async () => {
    const variables = { title: 't', note: 'x'.repeat(2000), rows: ['a', 'b'] };
    const out = await renderDocument(
      { evaluator, pdfRenderer: recordingRenderer(), limits: { maxHtmlBytes: 1024 } },
      { tenant: 'test', template: multiplying, variables, format: 'excel' },
    );
    expect(out.fileExtension).toBe('xlsx');
  });
});
