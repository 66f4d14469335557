import { renderDocument } from '../../../adapters/rendering/render-document';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { countPdfPages } from '../../../adapters/rendering/chromium-page';
import { buildInvoiceTemplate, buildTemplate, component, invoiceVariables } from '../../support/rendering-fixtures';
import { pdfInfo, pdfText, squeezedText, testPool } from '../../support/rendering-pdf';
import { useEvaluator } from '../../support/evaluation';

const evaluator = useEvaluator();

/** Real PDFs from the machine's Chromium, read back with poppler. */
describe('PDF rendering', () => {
  let pool: ChromiumPool;
  beforeAll(() => {
    pool = testPool();
  });
  afterAll(() => pool.close());

  const render = (template = buildInvoiceTemplate(), variables: Record<string, unknown> = invoiceVariables(), extra = {}) =>
    renderDocument({ evaluator, pdfRenderer: pool }, { tenant: 'test', template, variables, format: 'pdf', ...extra });

  it('prints interpolated values, calculated totals and table cells', async () => {
    const out = await render(undefined, undefined, { title: 'INV-2024-001' });
    expect(out).toMatchObject({ contentType: 'application/pdf', fileExtension: 'pdf', pageCount: 1 });
    expect(out.body.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(out.body);
    expect(text).toContain('Invoice for Ada Lovelace');
    expect(text).toMatch(/Total\s+€2,526\.00/);
    expect(text).toMatch(/Issued\s+Mar 1, 2024/);
    expect(text).toMatch(/Analytical engine\s+2\s+€1,250\.50\s+Feb 20, 2024\s+Yes/);
    expect(text).toMatch(/Punch cards\s+100\s+€0\.25\s+Feb 21, 2024\s+No/);
    expect(text).toContain('Thank you for your business, Ada Lovelace.');
    const info = await pdfInfo(out.body);
    expect(info).toMatchObject({ pages: 1, title: 'INV-2024-001' });
    expect(info.pageSize).toMatch(/595\.\d* x 841\.\d* pts \(A4\)/);
  });

  it('numbers pages in the footer and counts them like pdfinfo does', async () => {
    const t = buildInvoiceTemplate();
    t.schema.sections[0].components.push(component('pageBreak', {}), component('text', { text: 'Terms and conditions' }));
    const out = await render(t);
    expect(out.pageCount).toBe(2);
    expect((await pdfInfo(out.body)).pages).toBe(2);
    const [first, second] = [await pdfText(out.body, { page: 1 }), await pdfText(out.body, { page: 2 })];
    expect(first).toMatch(/Formwork GmbH\s+Page 1 of 2/);
    expect(first).toContain('Invoice INV-2024-001');
    expect(second).toMatch(/Page 2 of 2/);
    expect(second).toContain('Terms and conditions');
  });

  it('keeps accented Latin, Greek, Cyrillic and CJK text intact', async () => {
    const lines = {
      latin: 'Zoë Ångström, Straße, façade, naïve, Łódź, Žluťoučký kůň',
      greek: 'Καλημέρα κόσμε, Ελληνικά',
      cyrillic: 'Здравствуй, мир! Съешь же ещё этих булок',
      cjk: '你好世界 日本語のテキスト 안녕하세요',
    };
    const t = buildTemplate({
      schema: {
        pageSize: 'A4',
        footer: { center: '{{greek}} {page}/{pages}' },
        sections: [{ id: 's', title: '{{cjk}}', components: Object.keys(lines).map((k) => component('text', { text: `{{${k}}}` })) }],
      },
    });
    const { body } = await render(t, lines);
    const text = await pdfText(body);
    // A glyph no installed font has comes back missing (checked: without fonts-noto-cjk, "你" is lost).
    for (const line of Object.values(lines)) expect(text).toContain(line);
    expect(text).toMatch(/Καλημέρα κόσμε, Ελληνικά 1\/1/);
  });

  // Rotated text comes back in pieces ("FORM", "W", "ORK"): read it raw and drop the whitespace.
  const squeezed = squeezedText;

  it('prints the watermark only when asked', async () => {
    expect(await squeezed((await render()).body)).not.toContain('FORMWORKFREE');
    expect(await squeezed((await render(undefined, undefined, { watermark: true })).body)).toContain('FORMWORKFREE');
  });

  it('prints the watermark on every page', async () => {
    const t = buildTemplate({ components: [component('text', { text: 'one' }), component('pageBreak', {}), component('text', { text: 'two' })] });
    const out = await render(t, {}, { watermark: true });
    expect(out.pageCount).toBe(2);
    for (const page of [1, 2]) expect(await squeezed(out.body, page)).toContain('FORMWORKFREE');
  });

  it('honours page size and orientation', async () => {
    const t = buildTemplate({ components: [component('text', { text: 'wide' })] });
    t.schema.pageSize = 'Letter';
    t.schema.orientation = 'landscape';
    const info = await pdfInfo((await render(t, {})).body);
    expect(info.pageSize).toMatch(/^792 x 612 pts/);
  });

  it('refuses a document over the page limit with ERR_LIMIT_001', async () => {
    const t = buildTemplate({
      variables: [{ name: 'pages', type: 'array', required: true }],
      components: [component('repeat', { dataSource: 'pages', components: [component('text', { text: 'Page body {{item}}' }), component('pageBreak', {})] })],
    });
    const pages = ['a', 'b', 'c', 'd'];
    const ok = await renderDocument({ evaluator, pdfRenderer: pool, limits: { maxPdfPages: 4 } }, { tenant: 'test', template: t, variables: { pages }, format: 'pdf' });
    expect(ok.pageCount).toBe(4);
    expect(countPdfPages(ok.body)).toBe((await pdfInfo(ok.body)).pages);
    await expect(
      renderDocument({ evaluator, pdfRenderer: pool, limits: { maxPdfPages: 3 } }, { tenant: 'test', template: t, variables: { pages }, format: 'pdf' }),
    ).rejects.toMatchObject({ code: 'ERR_LIMIT_001', status: 400, relatedInfo: { limit: 3 } });
  });

  it('reports bad input before printing', async () => {
    await expect(render(undefined, invoiceVariables({ customer: undefined }))).rejects.toMatchObject({
      code: 'ERR_VALID_005',
      relatedInfo: { field: 'customer' },
    });
  });
});
