import { cpuMsBesideAsync } from '../../support/cpu-time';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { PNG } from 'pngjs';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { renderDocument } from '../../../adapters/rendering/render-document';
import { buildHtml } from '../../../domain/templates/build-html';
import { validateTemplate, validateTemplateSchema } from '../../../domain/templates/template.schema';
import type { Component, TemplateDefinition } from '../../../domain/templates/template.types';
import { useEvaluator } from '../../support/evaluation';
import { buildTemplate, component } from '../../support/rendering-fixtures';
import { decodeBarcodes, pdfDestinations, pdfInfo, pdfText, pdfLinkTargets, pdfPixels, pdfStructure, pdfWords, testPool, type PdfWord } from '../../support/rendering-pdf';

const evaluator = useEvaluator();

/** Where a failing comparison leaves what it saw: the run's output folder (FORMWORK_TEST_OUTPUT, else test-output/). */
function testOutputDir(): string {
  const dir = process.env.FORMWORK_TEST_OUTPUT ?? join(__dirname, '../../../test-output');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Points per millimetre: pdftotext answers in points. */
const PT = 72 / 25.4;
/** A4 width and the default side margins (15 mm). */
const PAGE_WIDTH = 595.28;
const RIGHT_EDGE = PAGE_WIDTH - 15 * PT;

/**
 * Layout and style in the template model (docs/templates.md "Layout and style"): real PDFs from the
 * machine's Chromium, read back with poppler. Positions come from `pdftotext -bbox` (points from the
 * top left), colours from the page rasterised by pdftoppm.
 */
describe('template layout: columns, boxes, alignment, style, theme, pagination', () => {
  let pool: ChromiumPool;
  beforeAll(() => {
    pool = testPool();
  });
  afterAll(() => pool.close());

  // Each render is a tenant of its own: the runaway conditions below make a tenant "expensive" to the
  // evaluation pool (domain/fair-scheduler.ts), whose later work then runs in the background lane on a
  // wall-clock budget, which a loaded CI machine ran out for the report example's honest calculations.
  const render = async (template: TemplateDefinition, variables: Record<string, unknown> = {}, format: 'pdf' | 'excel' = 'pdf') => {
    const out = await renderDocument({ evaluator, pdfRenderer: pool }, { tenant: `layout-${randomUUID()}`, template, variables, format });
    return out.body;
  };
  const word = (words: PdfWord[], text: string): PdfWord => {
    const found = words.find((w) => w.text === text);
    if (!found) throw new Error(`no word '${text}' among ${words.map((w) => w.text).join(' ')}`);
    return found;
  };
  const party = (id: string, title: string, lines: string[]): Component =>
    component('box', { components: [component('heading', { text: title, level: 3 }), component('text', { text: lines.join('\n') })] }, id);

  it('puts the seller and the buyer side by side, each in a framed box, and the totals flush with the right margin', async () => {
    const template = buildTemplate({
      components: [
        component('columns', {
          columns: [{ components: [party('seller', 'Seller', ['Formwork GmbH', 'Hauptstraße 1'])] }, { components: [party('buyer', 'Buyer', ['Ada Lovelace', 'St James Square'])] }],
          gap: '8mm',
        }),
        component('keyValue', {
          align: 'right',
          valueAlign: 'right',
          items: [
            { label: 'Subtotal', value: '1,234.50' },
            { label: 'VAT', value: '9.00' },
            { label: 'TotalDue', value: '1,243.50' },
          ],
        }),
      ],
    });
    const { words } = await pdfWords(await render(template));
    const [seller, buyer] = [word(words, 'Seller'), word(words, 'Buyer')];
    // Same line, the buyer's block in the right half of the page.
    expect(Math.abs(seller.yMin - buyer.yMin)).toBeLessThan(1);
    expect(seller.xMin).toBeLessThan(PAGE_WIDTH / 3);
    expect(buyer.xMin).toBeGreaterThan(PAGE_WIDTH / 2);
    expect(Math.abs(word(words, 'Formwork').yMin - word(words, 'Ada').yMin)).toBeLessThan(1);
    // Right-aligned values: their right edges line up, at the right margin.
    const values = ['1,234.50', '9.00', '1,243.50'].map((v) => word(words, v).xMax);
    for (const x of values) expect(Math.abs(x - values[0])).toBeLessThan(0.5);
    expect(Math.abs(values[0] - RIGHT_EDGE)).toBeLessThan(2);
  });

  it('aligns text centred and right, and fractions share the width (2fr is twice 1fr)', async () => {
    const template = buildTemplate({
      components: [
        component('text', { text: 'Centred', align: 'center' }),
        component('heading', { text: 'Righted', level: 2, align: 'right' }),
        component('columns', {
          gap: 0,
          columns: [
            { width: '1fr', components: [component('text', { text: 'NarrowColumn' })] },
            { width: '2fr', components: [component('text', { text: 'WideColumn' })] },
          ],
        }),
      ],
    });
    const { words } = await pdfWords(await render(template));
    const centred = word(words, 'Centred');
    expect(Math.abs((centred.xMin + centred.xMax) / 2 - PAGE_WIDTH / 2)).toBeLessThan(2);
    expect(Math.abs(word(words, 'Righted').xMax - RIGHT_EDGE)).toBeLessThan(2);
    // The content width is the page less both margins; the second column starts a third of the way in.
    const content = PAGE_WIDTH - 30 * PT;
    expect(Math.abs(word(words, 'WideColumn').xMin - (15 * PT + content / 3))).toBeLessThan(2);
  });

  it('paints the theme and the style: primary colour on headings, a box background, a style colour', async () => {
    const template = buildTemplate({
      components: [
        component('heading', { text: 'THEMED HEADING', level: 1, style: { fontSize: 40 } }),
        component('box', { background: '#00b000', border: false, padding: '10mm', components: [component('text', { text: ' ' })] }),
        component('text', { text: 'BLUE BLUE BLUE', style: { color: '#0000e0', fontSize: 40, fontWeight: 'bold' } }),
      ],
    });
    template.schema.theme = { colors: { primary: '#d00000' } };
    const page = await pdfPixels(await render(template));
    let red = 0;
    let green = 0;
    let blue = 0;
    for (let y = 0; y < page.height; y += 1) {
      for (let x = 0; x < page.width; x += 1) {
        const [r, g, b] = page.rgb(x, y);
        if (r > 170 && g < 90 && b < 90) red += 1;
        if (g > 140 && r < 60 && b < 60) green += 1;
        if (b > 170 && r < 90 && g < 90) blue += 1;
      }
    }
    expect({ red: red > 100, green: green > 1000, blue: blue > 100 }).toEqual({ red: true, green: true, blue: true });
  });

  it('keepTogether moves a box that would split to the next page whole; pageBreak before starts a page', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `KeptLine${i + 1}`).join('\n');
    const filler = (keep: boolean) =>
      buildTemplate({
        components: [
          component('spacer', { height: '220mm' }),
          component('box', { keepTogether: keep, components: [component('text', { text: lines })] }),
          component('text', { text: 'AfterBreak', pageBreak: 'before' }),
        ],
      });
    const pagesOf = async (pdf: Buffer, text: string) => {
      const pages: number[] = [];
      for (const page of [1, 2, 3]) if ((await pdfWords(pdf, page)).words.some((w) => w.text === text)) pages.push(page);
      return pages;
    };
    const split = await render(filler(false));
    // Without it, the box begins on page 1 and ends on page 2.
    expect([await pagesOf(split, 'KeptLine1'), await pagesOf(split, 'KeptLine12')]).toEqual([[1], [2]]);
    const kept = await render(filler(true));
    expect([await pagesOf(kept, 'KeptLine1'), await pagesOf(kept, 'KeptLine12'), await pagesOf(kept, 'AfterBreak')]).toEqual([[2], [2], [3]]);
  });

  it('columns and boxes work inside a repeat, each element side by side with its own values', async () => {
    const template = buildTemplate({
      components: [
        component('repeat', {
          dataSource: 'people',
          as: 'person',
          components: [
            component('columns', { columns: [{ components: [component('text', { text: 'Name{{loop.number}}' })] }, { components: [component('box', { components: [component('text', { text: '{{person.city}}' })] })] }] }),
          ],
        }),
      ],
      variables: [{ name: 'people', type: 'array', required: true }],
    });
    const { words } = await pdfWords(await render(template, { people: [{ city: 'Paris' }, { city: 'Oslo' }] }));
    // Each city sits in its element's row, right of its name, below the box's top padding (4 mm).
    for (const [name, city] of [
      ['Name1', 'Paris'],
      ['Name2', 'Oslo'],
    ]) {
      expect(word(words, city).yMin - word(words, name).yMin).toBeGreaterThan(0);
      expect(word(words, city).yMin - word(words, name).yMin).toBeLessThan(16);
      expect(word(words, city).xMin).toBeGreaterThan(PAGE_WIDTH / 2);
    }
    expect(word(words, 'Name2').yMin).toBeGreaterThan(word(words, 'Paris').yMax);
  });

  it('writes containers into a workbook as their children, in order', async () => {
    const template = buildTemplate({
      components: [
        component('columns', { columns: [{ components: [component('text', { text: 'Left cell' })] }, { components: [component('box', { components: [component('text', { text: 'Boxed cell' })] })] }] }),
      ],
    });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await render(template, {}, 'excel')) as unknown as ExcelJS.Buffer);
    const texts: string[] = [];
    workbook.worksheets[0].eachRow((row) => row.eachCell((cell) => texts.push(String(cell.value))));
    expect(texts).toEqual(['Left cell', 'Boxed cell']);
  });

  it('validates the new props: depth of containers, colours, widths and style keys', () => {
    const nested = (depth: number): Component => (depth === 0 ? component('text', { text: 'deep' }) : component('box', { components: [nested(depth - 1)] }));
    const schema = (components: Component[], extra: Record<string, unknown> = {}) => ({ pageSize: 'A4', sections: [{ id: 's', components }], ...extra });
    expect(validateTemplateSchema(schema([nested(8)]), 'pdf').valid).toBe(true);
    const tooDeep = validateTemplateSchema(schema([nested(9)]), 'pdf');
    expect(tooDeep.errors).toEqual([expect.objectContaining({ message: expect.stringContaining('nested deeper than 8 levels') })]);
    const bad = validateTemplateSchema(
      schema(
        [
          component('text', { text: 'x', style: { color: 'red; background:url(http://evil)' } }, 'colour'),
          component('columns', { columns: [{ width: '1e9px', components: [] }] }, 'width'),
          component('heading', { text: 'x', style: { position: 'fixed' } }, 'key'),
          component('text', { text: 'x', align: 'middle' }, 'align'),
        ],
        { theme: { fontFamily: "x'); @import url(", colors: { primary: 'blue' } } },
      ),
      'pdf',
    );
    expect(bad.errors.map((e) => e.path).sort()).toEqual(
      [
        'sections[0].components[0].props.style.color',
        'sections[0].components[1].props.columns[0].width',
        'sections[0].components[2].props.style.position',
        'sections[0].components[3].props.align',
        'theme.colors.primary',
        'theme.fontFamily',
      ].sort(),
    );
  });

  it('refuses a stored template nested past the limit at render time (ERR_TMPL_008), without recursing through it', async () => {
    // Saving refuses it (above), and request bodies are bounded in depth (ERR_REQ_005): this is a template from elsewhere.
    const nested = (depth: number): Component => (depth === 0 ? component('text', { text: 'deep' }) : component('box', { components: [nested(depth - 1)] }));
    await expect(render(buildTemplate({ components: [nested(20)] }))).rejects.toMatchObject({ code: 'ERR_TMPL_008' });
  });

  it('prints a long footer slot whole: it takes the width it needs and wraps, never clipped to a third of the page', async () => {
    const template = buildTemplate({ components: [component('text', { text: 'Body' })] });
    const long = 'Formwork GmbH · Hauptstraße 1 · 10115 Berlin · Registered at Amtsgericht Charlottenburg HRB 123456 · VAT DE123456789 · ENDOFLINE';
    template.schema.footer = { left: long, right: 'Page {page} of {pages}' };
    const { words } = await pdfWords(await render(template));
    const texts = words.map((w) => w.text);
    expect(texts).toContain('ENDOFLINE');
    expect(texts.join(' ')).toContain('Page 1 of 1');
  });

  describe('charts', () => {
    const months = [
      { month: 'Jan', revenue: 120, costs: 80 },
      { month: 'Feb', revenue: 150, costs: 95 },
      { month: 'Mar', revenue: 90, costs: 100 },
    ];
    const chartTemplate = (props: Record<string, unknown>) =>
      buildTemplate({ components: [component('chart', { dataSource: 'months', x: 'month', series: [{ field: 'revenue', label: 'Revenue' }, { field: 'costs', label: 'Costs' }], ...props }, 'sales')], variables: [{ name: 'months', type: 'array', required: true }] });

    it('draws a bar chart as vector graphics with readable axis labels, legend and title', async () => {
      const pdf = await render(chartTemplate({ chartType: 'bar', title: 'First quarter <b>{{year}}</b>' }), { months, year: 2026 });
      const { words } = await pdfWords(pdf);
      const texts = words.map((w) => w.text);
      expect(texts).toEqual(expect.arrayContaining(['Jan', 'Feb', 'Mar', 'Revenue', 'Costs', 'First', 'quarter', '<b>2026</b>']));
      // The categories sit on one line (the x axis), left to right.
      const [jan, feb, mar] = [word(words, 'Jan'), word(words, 'Feb'), word(words, 'Mar')];
      expect(Math.abs(jan.yMin - mar.yMin)).toBeLessThan(1);
      expect(jan.xMin < feb.xMin && feb.xMin < mar.xMin).toBe(true);
      expect(pdf.includes('/Subtype /Image')).toBe(false);
    });

    it('draws line, area and pie charts; a pie labels its slices with their share', async () => {
      for (const chartType of ['line', 'area']) expect((await pdfWords(await render(chartTemplate({ chartType }), { months }))).words.map((w) => w.text)).toContain('Feb');
      const pie = (await pdfWords(await render(chartTemplate({ chartType: 'pie', series: [{ field: 'revenue' }] }), { months }))).words.map((w) => w.text).join(' ');
      // 120 of 360 is a third.
      expect(pie).toMatch(/Jan: 33\.3\d?%/);
    });

    it('refuses more than 5,000 points (ERR_LIMIT_007) before drawing, and a million points with a catalogued 400', async () => {
      const points = (n: number) => Array.from({ length: n }, (_, i) => ({ month: String(i), revenue: i, costs: 0 }));
      await expect(render(chartTemplate({ chartType: 'line' }), { months: points(10_000) })).rejects.toMatchObject({ code: 'ERR_LIMIT_007', relatedInfo: { componentId: 'sales', limit: 5000 } });
      // A million rows stop earlier still: the evaluation worker that builds the page refuses that much data (ERR_LIMIT_008).
      const refused = await render(chartTemplate({ chartType: 'line' }), { months: points(1_000_000) }).catch((err: { code?: string }) => err);
      expect(['ERR_LIMIT_007', 'ERR_LIMIT_008']).toContain((refused as { code?: string }).code);
    });

    it("writes a chart's data into a workbook as a table", async () => {
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load((await render(chartTemplate({ chartType: 'bar' }), { months }, 'excel')) as unknown as ExcelJS.Buffer);
      const rows: unknown[][] = [];
      workbook.worksheets[0].eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
      expect(rows).toEqual([
        ['month', 'Revenue', 'Costs'],
        ['Jan', 120, 80],
        ['Feb', 150, 95],
        ['Mar', 90, 100],
      ]);
    });
  });

  describe('schema css', () => {
    const withCss = (css: string) => ({ pageSize: 'A4', css, sections: [{ id: 's', components: [component('heading', { text: 'Styled' })] }] });

    it("applies the author's CSS after the stylesheet and the theme", async () => {
      const template = buildTemplate({ components: [component('heading', { text: 'RED RED RED', style: { fontSize: 40 } })] });
      template.schema.css = '.fw-heading { color: #c80000 !important; } body { background: url("data:image/png;base64,iVBORw0KGgo=") }';
      const page = await pdfPixels(await render(template));
      let red = 0;
      for (let y = 0; y < page.height; y += 1) for (let x = 0; x < page.width; x += 1) if (page.rgb(x, y)[0] > 170 && page.rgb(x, y)[1] < 90) red += 1;
      expect(red).toBeGreaterThan(100);
    });

    it('refuses what could break out of the style element, import or fetch, and more than 50,000 characters', () => {
      const refused = [
        '</style><script>alert(1)</script>',
        '@import url(http://127.0.0.1:9/x.css);',
        'body { background: url(http://127.0.0.1:9/x.png) }',
        "body { background: url( 'https://example.com/x.png') }",
        'body { background: u\\72 l(http://127.0.0.1:9/x.png) }',
        'x'.repeat(10 * 1024 * 1024),
      ];
      for (const css of refused) {
        const result = validateTemplateSchema(withCss(css), 'pdf');
        expect({ css: css.slice(0, 40), errors: result.errors.map((e) => e.path) }).toEqual({ css: css.slice(0, 40), errors: ['css'] });
      }
      expect(validateTemplateSchema(withCss('h1 { letter-spacing: 1pt } .fw-box { border-color: #333 }'), 'pdf').valid).toBe(true);
    });
  });

  describe('visibleIf', () => {
    const invoice = () =>
      buildTemplate({
        components: [
          component('text', { text: 'Invoice' }),
          component('box', { visibleIf: 'discount > 0', components: [component('text', { text: 'DiscountLine {{discount}}' })] }, 'discount-box'),
          component('repeat', {
            dataSource: 'lines',
            components: [component('text', { text: 'Line{{loop.number}}' }), component('text', { text: 'Bulk{{loop.number}}', visibleIf: 'item.qty >= 10' }, 'bulk')],
          }),
        ],
        variables: [
          { name: 'discount', type: 'number', required: true },
          { name: 'lines', type: 'array', required: true },
        ],
      });
    const lines = [{ qty: 1 }, { qty: 12 }, { qty: 3 }];
    const texts = async (pdf: Buffer) => (await pdfWords(pdf)).words.map((w) => w.text);

    it('shows a discount block only when there is a discount, and a line note only for the lines it holds for', async () => {
      const without = await texts(await render(invoice(), { discount: 0, lines }));
      expect(without).not.toContain('DiscountLine');
      expect(without.filter((t) => t.startsWith('Bulk'))).toEqual(['Bulk2']);
      expect(without.filter((t) => t.startsWith('Line'))).toEqual(['Line1', 'Line2', 'Line3']);
      const withDiscount = await texts(await render(invoice(), { discount: 15, lines }));
      expect(withDiscount).toEqual(expect.arrayContaining(['DiscountLine', '15']));
    });

    it('hides the same instances in a workbook', async () => {
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load((await render(invoice(), { discount: 0, lines }, 'excel')) as unknown as ExcelJS.Buffer);
      const cells: string[] = [];
      workbook.worksheets[0].eachRow((row) => row.eachCell((cell) => cells.push(String(cell.value))));
      expect(cells).toEqual(['Invoice', 'Line1', 'Line2', 'Bulk2', 'Line3']);
    });

    it('refuses a condition that does not parse on save, and stops one that never ends at the evaluation budget (ERR_LIMIT_008)', async () => {
      const bad = validateTemplateSchema({ pageSize: 'A4', sections: [{ id: 's', components: [component('text', { text: 'x', visibleIf: 'discount >' }, 'c')] }] }, 'pdf');
      expect(bad.errors).toEqual([{ path: 'sections[0].components[0].props.visibleIf', message: expect.stringContaining('visibleIf does not parse') }]);
      const runaway = buildTemplate({ components: [component('text', { text: 'never', visibleIf: '($f := function($n){ $f($n + 1) }; $f(0))' }, 'runaway')] });
      // JSONata's own CPU check names the component; when the pool's budget for the whole check fires first it names the check.
      const stopped = (await render(runaway).catch((err: unknown) => err)) as { code?: string; relatedInfo?: Record<string, unknown> };
      expect(stopped.code).toBe('ERR_LIMIT_008');
      expect([stopped.relatedInfo?.componentId, stopped.relatedInfo?.check]).toContainEqual(expect.stringMatching(/^(runaway|hiddenComponents)$/));
    });
  });

  it('prints a footer made of components, full width, with page numbers, on every page; a workbook gets its text', async () => {
    const template = buildTemplate({ components: [component('text', { text: 'First' }), component('text', { text: 'Second', pageBreak: 'before' })] });
    template.schema.margins = { bottom: '25mm' };
    template.schema.footer = {
      components: [
        component('columns', {
          columns: [
            { components: [component('text', { text: 'Formwork GmbH · {{city}}' }, 'foot-left')] },
            { components: [component('text', { text: 'Page {page} of {pages}', align: 'right' }, 'foot-right')] },
          ],
        }),
        component('text', { text: 'HiddenNote', visibleIf: 'false' }, 'foot-hidden'),
      ],
    };
    template.variables = [{ name: 'city', type: 'string', required: true }];
    const pdf = await render(template, { city: 'Berlin' });
    for (const page of [1, 2]) {
      const { words } = await pdfWords(pdf, page);
      const line = words.map((w) => w.text).join(' ');
      expect(line).toContain(`Page ${page} of 2`);
      expect(line).toContain('Formwork GmbH · Berlin');
      expect(line).not.toContain('HiddenNote');
      // Full width: the page number ends at the right margin, the company starts at the left one.
      expect(Math.abs(Math.max(...words.filter((w) => w.text === '2').map((w) => w.xMax)) - RIGHT_EDGE)).toBeLessThan(3);
      expect(Math.abs(word(words, 'Formwork').xMin - 15 * PT)).toBeLessThan(3);
    }
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await render(template, { city: 'Berlin' }, 'excel')) as unknown as ExcelJS.Buffer);
    expect(workbook.worksheets[0].headerFooter.oddFooter).toBe('&CFormwork GmbH · Berlin · Page &P of &N');
  });

  it('prints the firstPage variant of the header and footer on page 1 only, the regular ones after it, the structure tree kept', async () => {
    const template = buildTemplate({
      components: [
        component('heading', { text: 'Annual report', level: 1 }),
        component('text', { text: 'Second page body', pageBreak: 'before' }),
        component('text', { text: 'Third page body', pageBreak: 'before' }),
      ],
    });
    template.schema.margins = { top: '30mm', bottom: '25mm' };
    template.schema.header = {
      components: [component('text', { text: 'Running header' }, 'head-run')],
      firstPage: {
        components: [
          component('box', { components: [component('heading', { text: 'Banner {{company}}', level: 3 }, 'head-banner')], border: true }, 'head-box'),
          component('text', { text: 'HiddenBanner', visibleIf: 'false' }, 'head-hidden'),
        ],
      },
    };
    // Page 1 carries no footer at all; the rest count the whole document.
    template.schema.footer = { center: 'Page {page} of {pages}', firstPage: { components: [] } };
    template.variables = [{ name: 'company', type: 'string', required: true }];
    const pdf = await render(template, { company: 'Acme' });
    expect((await pdfInfo(pdf)).pages).toBe(3);
    const lines = await Promise.all([1, 2, 3].map(async (page) => (await pdfWords(pdf, page)).words.map((w) => w.text).join(' ')));
    expect(lines[0]).toContain('Banner Acme');
    expect(lines[0]).toContain('Annual report');
    expect(lines[0]).not.toMatch(/Running|Page|HiddenBanner/);
    for (const page of [2, 3]) {
      expect(lines[page - 1]).toContain('Running header');
      expect(lines[page - 1]).toContain(`Page ${page} of 3`);
      expect(lines[page - 1]).not.toContain('Banner');
    }
    // The document stays tagged: page 1's body is still in the structure tree after the swap.
    const structure = await pdfStructure(pdf);
    expect(structure).toContain('Annual report');
    expect(structure).toContain('Third page body');

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await render(template, { company: 'Acme' }, 'excel')) as unknown as ExcelJS.Buffer);
    expect(workbook.worksheets[0].headerFooter).toMatchObject({
      differentFirst: true,
      oddHeader: '&CRunning header',
      firstHeader: '&CBanner Acme',
      oddFooter: '&CPage &P of &N',
    });
    expect(workbook.worksheets[0].headerFooter.firstFooter ?? '').toBe('');
  });

  describe('toc', () => {
    const tocTemplate = () => {
      const template = buildTemplate({
        components: [
          component('toc', { title: 'Contents', levels: 2 }, 'contents'),
          component('heading', { text: 'Introduction', level: 1 }, 'h-intro'),
          component('text', { text: 'Opening words.' }),
          component('heading', { text: 'Method', level: 2, pageBreak: 'before' }, 'h-method'),
          component('table', { dataSource: 'rows', columns: [{ header: 'Row', field: 'n' }] }, 'long'),
          component('heading', { text: 'Results', level: 1 }, 'h-results'),
          component('heading', { text: 'Detail', level: 3 }, 'h-detail'),
          component('heading', { text: 'Withdrawn', level: 1, visibleIf: 'false' }, 'h-hidden'),
          component('repeat', { dataSource: 'regions', as: 'region', components: [component('heading', { text: 'Region{{region}}', level: 2, pageBreak: 'before' }, 'h-region')] }, 'regions'),
        ],
      });
      template.schema.sections.push({ id: 'appendix', title: 'Appendix', components: [component('text', { text: 'More.' })] });
      template.variables = [
        { name: 'rows', type: 'array', required: true },
        { name: 'regions', type: 'array', required: true },
      ];
      return template;
    };
    const variables = { rows: Array.from({ length: 90 }, (_, i) => ({ n: `row ${i + 1}` })), regions: ['North', 'South'] };

    it("lists the headings up to its level with the pages they landed on, each number at the right margin", async () => {
      const pdf = await render(tocTemplate(), variables);
      const pages = (await pdfInfo(pdf)).pages;
      const words = await Promise.all(Array.from({ length: pages }, (_, i) => pdfWords(pdf, i + 1).then((p) => p.words)));
      const entries = ['Introduction', 'Method', 'Results', 'RegionNorth', 'RegionSouth'];
      const listed = words[0].filter((w) => /^(Introduction|Method|Results|RegionNorth|RegionSouth|Detail|Withdrawn)$/.test(w.text));
      // Page 1 holds the list (and the introduction's own heading below it).
      expect(listed.map((w) => w.text).slice(0, 5)).toEqual(entries);
      expect(words.flat().some((w) => w.text === 'Withdrawn')).toBe(false);
      for (const [i, name] of entries.entries()) {
        const entry = listed[i];
        const number = words[0].filter((w) => Math.abs(w.yMin - entry.yMin) < 2 && /^\d+$/.test(w.text)).pop();
        expect(number).toBeDefined();
        expect(Math.abs(number!.xMax - RIGHT_EDGE)).toBeLessThan(3);
        // Where the heading itself landed: the first occurrence that is not the entry.
        const landed = words.findIndex((page, p) => page.some((w) => w.text === name && !(p === 0 && w === entry))) + 1;
        expect(`${name} on page ${number!.text}`).toBe(`${name} on page ${landed}`);
      }
      // The long table breaks across pages, so Results is well past Method.
      expect(pages).toBeGreaterThanOrEqual(5);
      // Level 3 is not listed (levels: 2): Detail appears once, as the heading.
      expect(words.flat().filter((w) => w.text === 'Detail')).toHaveLength(1);
    });

    it('links each entry to its heading and keeps the document tagged', async () => {
      const pdf = await render(tocTemplate(), variables);
      const structure = await pdfStructure(pdf);
      expect(structure).toContain('Contents');
      expect(structure).toContain('RegionSouth');
      // Each entry is a link to the heading's anchor, on the page its number names.
      const destinations = await pdfDestinations(pdf);
      const numbers = (await pdfWords(pdf, 1)).words.filter((w) => /^\d+$/.test(w.text) && Math.abs(w.xMax - RIGHT_EDGE) < 3).map((w) => Number(w.text));
      const links = await pdfLinkTargets(pdf, 1);
      expect(links).toHaveLength(5);
      expect(links.map((name) => destinations[name])).toEqual(numbers);
    });

    it('lists the sheets in a workbook, each a link to its sheet', async () => {
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load((await render(tocTemplate(), variables, 'excel')) as unknown as ExcelJS.Buffer);
      const sheet = workbook.worksheets[0];
      expect(sheet.getCell('A1').value).toBe('Contents');
      expect(sheet.getCell('A2').value).toEqual({ formula: `HYPERLINK("#'main'!A1","main")`, result: 'main' });
      expect(sheet.getCell('A3').value).toEqual({ formula: `HYPERLINK("#'Appendix'!A1","Appendix")`, result: 'Appendix' });
    });
  });

  it('validates first-page variants: either form, their components walked, no variant inside a variant', () => {
    const check = (footer: unknown) => validateTemplateSchema({ pageSize: 'A4', footer, sections: [{ id: 's', components: [] }] }, 'pdf').errors;
    expect(check({ components: [], firstPage: { components: [] } })).toEqual([]);
    expect(check({ left: 'a', firstPage: { right: 'b' } })).toEqual([]);
    expect(check({ left: 'a', firstPage: { components: [{ id: 'x', type: 'sparkle', props: {} }] } }).map((e) => e.path)).toEqual(['footer.firstPage.components[0].type']);
    expect(check({ left: 'a', firstPage: { left: 'b', firstPage: { left: 'c' } } }).map((e) => e.path)).toEqual(['footer']);
  });

  describe('barcodes', () => {
    it('draws code128, EAN-13, UPC-A and QR codes that a scanner reads back, as vector graphics', async () => {
      const template = buildTemplate({
        components: [
          component('barcode', { symbology: 'code128', value: 'INV-{{number}}' }, 'code'),
          component('barcode', { symbology: 'ean13', value: '400638133393' }, 'ean'),
          component('barcode', { symbology: 'upca', value: '03600029145' }, 'upc'),
          component('barcode', { symbology: 'qrcode', value: 'https://pay.example.com/{{number}}', width: '25mm' }, 'qr'),
        ],
        variables: [{ name: 'number', type: 'string', required: true }],
      });
      const pdf = await render(template, { number: '2026-014' });
      // EAN-13 and UPC-A get their check digit computed (…3931, …1452); zbar reports a UPC-A as the
      // EAN-13 it also is (a leading 0).
      expect(await decodeBarcodes(pdf)).toEqual(['CODE-128:INV-2026-014', 'EAN-13:0036000291452', 'EAN-13:4006381333931', 'QR-Code:https://pay.example.com/2026-014']);
      // Vector: no picture in the PDF, only paths.
      expect(pdf.includes('/Subtype /Image')).toBe(false);
    });

    it('draws Data Matrix and PDF417 codes (zbar reads neither): dark modules where the code is', async () => {
      const template = buildTemplate({
        components: [component('barcode', { symbology: 'datamatrix', value: 'FW-2026-014' }), component('barcode', { symbology: 'pdf417', value: 'Formwork invoice 2026-014' })],
      });
      const page = await pdfPixels(await render(template));
      let dark = 0;
      for (let y = 0; y < page.height; y += 1) for (let x = 0; x < page.width; x += 1) if (page.rgb(x, y)[0] < 60) dark += 1;
      expect(dark).toBeGreaterThan(500);
    });

    it('refuses a value the symbology cannot encode, naming the component: on save for a literal, at render for data', async () => {
      const literal = validateTemplateSchema({ pageSize: 'A4', sections: [{ id: 's', components: [component('barcode', { symbology: 'ean13', value: '12345' }, 'bad-ean')] }] }, 'pdf');
      expect(literal.errors).toEqual([{ path: 'sections[0].components[0].props.value', message: expect.stringContaining('EAN-13 must be 12 or 13 digits') }]);
      const fromData = buildTemplate({ components: [component('barcode', { symbology: 'upca', value: '{{code}}' }, 'bad-upc')], variables: [{ name: 'code', type: 'string', required: true }] });
      expect(validateTemplateSchema(fromData.schema, 'pdf').valid).toBe(true);
      await expect(render(fromData, { code: 'not digits' })).rejects.toMatchObject({ code: 'ERR_TMPL_008', relatedInfo: { componentId: 'bad-upc', symbology: 'upca' } });
    });

    it('puts a barcode into a workbook as a picture', async () => {
      const template = buildTemplate({ components: [component('barcode', { symbology: 'code128', value: 'ABC-123' })] });
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load((await render(template, {}, 'excel')) as unknown as ExcelJS.Buffer);
      expect(workbook.worksheets[0].getImages()).toHaveLength(1);
    });
  });

  describe('markdown and html', () => {
    it('renders markdown: headings, emphasis, lists, a table; raw HTML and the values stay text', async () => {
      const template = buildTemplate({
        components: [
          component('markdown', {
            text: '## Terms for {{customer}}\n\nPay **within 14 days**.\n\n- one\n- two\n\n| Item | Qty |\n|---|---|\n| Pen | 2 |\n\n<b>raw</b> and [a link](javascript:alert(1)) and ![pic](http://127.0.0.1:9/x.png)',
          }),
        ],
        variables: [{ name: 'customer', type: 'string', required: true }],
      });
      const pdf = await render(template, { customer: '*Ada* <i>Lovelace</i>' });
      const { words } = await pdfWords(pdf);
      const line = words.map((w) => w.text).join(' ');
      // The value's markdown and HTML print as typed; the template's raw HTML too.
      expect(line).toContain('Terms for *Ada* <i>Lovelace</i>');
      expect(line).toContain('Pay within 14 days.');
      expect(line).toContain('<b>raw</b>');
      // The table's cells sit side by side; the heading is larger than the body text.
      expect(Math.abs(word(words, 'Pen').yMin - word(words, '2').yMin)).toBeLessThan(1);
      expect(word(words, 'Terms').yMax - word(words, 'Terms').yMin).toBeGreaterThan(word(words, 'Pay').yMax - word(words, 'Pay').yMin);
      const html = (await buildHtml(template.schema, { customer: 'x' })).html;
      expect(html).not.toMatch(/href="javascript|<img/);
    });

    it('cleans an html fragment: allowed markup renders, scripts, handlers, external references and url() go, values are escaped', async () => {
      const fragment =
        '<h3 style="color:#b00000">Dear {{name}}</h3><p onclick="x()">Total <strong>€10</strong></p>' +
        '<script>document.write("INJECTED")</script><img src="http://127.0.0.1:9/x.png" onerror="alert(1)">' +
        '<p style="background:url(http://127.0.0.1:9/y.png);color:#00a000">styled</p><iframe src="http://127.0.0.1:9/"></iframe>' +
        '<table><tr><td colspan="2">cell</td></tr></table>';
      const template = buildTemplate({ components: [component('html', { html: fragment })], variables: [{ name: 'name', type: 'string', required: true }] });
      const html = (await buildHtml(template.schema, { name: '<script>x</script>' })).html;
      const body = html.slice(html.indexOf('<body>'));
      expect(body).not.toMatch(/<script|onclick|onerror|<iframe|url\(|127\.0\.0\.1/);
      expect(body).toContain('Dear &lt;script&gt;x&lt;/script&gt;');
      expect(body).toContain('<td colspan="2">cell</td>');
      const line = (await pdfWords(await render(template, { name: 'Ada' }))).words.map((w) => w.text).join(' ');
      expect(line).toContain('Dear Ada Total €10');
      expect(line).toContain('styled');
      expect(line).not.toContain('INJECTED');
    });

    it('bounds hostile markdown and html: 20,000 characters at most, and the worst of them cost little CPU', async () => {
      const long = validateTemplateSchema({ pageSize: 'A4', sections: [{ id: 's', components: [component('markdown', { text: 'x'.repeat(20_001) }, 'long')] }] }, 'pdf');
      expect(long.errors).toEqual([{ path: 'sections[0].components[0].props.text', message: expect.stringContaining('20000') }]);
      const hostile = [
        component('markdown', { text: '['.repeat(20_000) }),
        component('markdown', { text: '*a'.repeat(10_000) }),
        component('markdown', { text: '|a'.repeat(4_500) + '|\n' + '|-'.repeat(4_500) + '|\n' }),
        component('html', { html: '<div>'.repeat(4_000) }),
        component('html', { html: `<p style="${'color:red;'.repeat(1_900)}">x</p>` }),
      ];
      // The same amount of honest markdown and html, measured in turns with the hostile five.
      const honest = [
        component('markdown', { text: 'a [b](https://example.com) *c* '.repeat(600) }),
        component('html', { html: '<p>plain <b>bold</b> text</p>'.repeat(600) }),
      ];
      // CPU time of this whole process, the least of three rounds: a collection or other work of the process
      // during one round is left out (once, in a loaded CI run, a single measurement took 2.8 s; about 0.2 s alone).
      const { cpuMs, baselineMs } = await cpuMsBesideAsync(
        () => buildHtml(buildTemplate({ components: hostile }).schema, {}),
        () => buildHtml(buildTemplate({ components: honest }).schema, {}),
      );
      expect({ cpuMs, baselineMs, within: cpuMs < Math.max(2_000, 10 * baselineMs) }).toMatchObject({ within: true });
    });

    it('writes markdown into a workbook as rich text and html as lines of text', async () => {
      const template = buildTemplate({
        components: [component('markdown', { text: '# Title\n\nSome **bold** text\n\n- item' }), component('html', { html: '<p>First &amp; second</p><p>Next<br>line</p><script>x</script>' })],
      });
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load((await render(template, {}, 'excel')) as unknown as ExcelJS.Buffer);
      const texts: string[] = [];
      workbook.worksheets[0].eachRow((row) => row.eachCell((cell) => texts.push(cell.text)));
      expect(texts).toEqual(['Title', 'Some bold text', '• item', 'First & second', 'Next', 'line']);
    });
  });

  describe('the invoice example (docs/examples/invoice.json)', () => {
    const example = JSON.parse(readFileSync(join(__dirname, '../../../docs/examples/invoice.json'), 'utf8')) as { definition: TemplateDefinition; sampleData: Record<string, unknown> };

    it('is a valid template that puts the parties side by side, the totals at the margin, the discount and a payment barcode', async () => {
      expect(validateTemplate(example.definition, 'pdf')).toMatchObject({ valid: true, errors: [] });
      const pdf = await render(example.definition, example.sampleData);
      const { words } = await pdfWords(pdf);
      expect(Math.abs(word(words, 'SELLER').yMin - word(words, 'BILL').yMin)).toBeLessThan(1);
      expect(word(words, 'BILL').xMin).toBeGreaterThan(PAGE_WIDTH / 2);
      // 900 + 340 - 40 = 1,200.00; VAT 19 % = 228.00; total 1,428.00: right edges at the margin.
      const totals = ['€1,200.00', '€228.00'].map((t) => word(words, t).xMax);
      const total = Math.max(...words.filter((w) => w.text === '€1,428.00').map((w) => w.xMax));
      for (const x of [...totals, total]) expect(Math.abs(x - RIGHT_EDGE)).toBeLessThan(2);
      expect(words.map((w) => w.text).join(' ')).toContain('Includes a loyalty discount of €40.00.');
      expect(await decodeBarcodes(pdf)).toEqual(['CODE-128:INV-2026-014']);
      const without = (await pdfWords(await render(example.definition, { ...example.sampleData, discount: 0 }))).words.map((w) => w.text).join(' ');
      expect(without).not.toContain('loyalty discount');
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load((await render(example.definition, example.sampleData, 'excel')) as unknown as ExcelJS.Buffer);
      expect(workbook.worksheets[0].rowCount).toBeGreaterThan(5);
    });

    it('looks as it did: page 1 at 50 dpi within a tolerance of the committed reference image', async () => {
      const reference = PNG.sync.read(readFileSync(join(__dirname, '../../fixtures/reference/invoice-example-p1-50dpi.png')));
      const page = await pdfPixels(await render(example.definition, example.sampleData), 1, 50);
      expect([page.width, page.height]).toEqual([reference.width, reference.height]);
      // A pixel differs when a channel moved by more than a quarter of its range; antialiasing noise stays below.
      let differing = 0;
      const actual = new PNG({ width: page.width, height: page.height });
      for (let y = 0; y < page.height; y += 1) {
        for (let x = 0; x < page.width; x += 1) {
          const i = (y * page.width + x) * 4;
          const rgb = page.rgb(x, y);
          actual.data.set([...rgb, 255], i);
          if (rgb.some((v, c) => Math.abs(v - reference.data[i + c]) > 64)) differing += 1;
        }
      }
      const share = differing / (page.width * page.height);
      // What it looks like now, next to the test's other output, to compare by eye (and to commit when a change is meant).
      if (share > 0.002) writeFileSync(join(testOutputDir(), 'invoice-example-p1-50dpi.actual.png'), PNG.sync.write(actual));
      expect(share).toBeLessThan(0.002);
    });
  });

  describe('the other examples (docs/examples: quote, report, certificate)', () => {
    const load = (name: string) => JSON.parse(readFileSync(join(__dirname, `../../../docs/examples/${name}.json`), 'utf8')) as { definition: TemplateDefinition; sampleData: Record<string, unknown> };
    const text = (words: PdfWord[]) => words.map((w) => w.text).join(' ');

    it('each renders to a workbook too: its text in cells, its codes and charts as pictures, the report its table and contents links', async () => {
      const workbookOf = async (name: string) => {
        const { definition, sampleData } = load(name);
        expect(validateTemplate(definition, 'excel')).toMatchObject({ valid: true, errors: [] });
        const workbook = new ExcelJS.Workbook();
        await workbook.xlsx.load((await render(definition, sampleData, 'excel')) as unknown as ExcelJS.Buffer);
        const sheet = workbook.worksheets[0];
        const cells: string[] = [];
        sheet.eachRow((row) => row.eachCell((cell) => cells.push(cell.text)));
        return { sheet, cells };
      };
      const quote = await workbookOf('quote');
      expect(quote.cells).toEqual(expect.arrayContaining(['Quote Q-2026-031', 'Priority support, 12 months']));
      expect(quote.sheet.getImages()).toHaveLength(1);
      const report = await workbookOf('report');
      expect(report.cells).toContain('Formwork Ltd sales report');
      expect(report.cells.filter((c) => /^Customer \d{3}$/.test(c))).toHaveLength(140);
      expect(report.sheet.getImages()).toHaveLength(2);
      expect(report.sheet.getCell('A4').value).toMatchObject({ formula: expect.stringContaining('HYPERLINK') });
      const certificate = await workbookOf('certificate');
      expect(certificate.cells).toContain('Katherine Johnson');
      expect(certificate.sheet.getImages()).toHaveLength(1);
    });

    it('quote: parties side by side, optional add-ons only when chosen, totals at the margin, an acceptance QR code', async () => {
      const { definition, sampleData } = load('quote');
      expect(validateTemplate(definition, 'pdf')).toMatchObject({ valid: true, errors: [] });
      const pdf = await render(definition, sampleData);
      const { words } = await pdfWords(pdf);
      expect(Math.abs(word(words, 'FROM').yMin - word(words, 'PREPARED').yMin)).toBeLessThan(1);
      expect(word(words, 'PREPARED').xMin).toBeGreaterThan(PAGE_WIDTH / 2);
      expect(text(words)).toContain('Optional add-ons');
      // 2,400 + 1,700 + 1,500 = 5,600.00; tax 8.75 % = 490.00; total 6,090.00, flush with the margin.
      for (const amount of ['$5,600.00', '$490.00']) expect(Math.abs(word(words, amount).xMax - RIGHT_EDGE)).toBeLessThan(2);
      expect(Math.abs(Math.max(...words.filter((w) => w.text === '$6,090.00').map((w) => w.xMax)) - RIGHT_EDGE)).toBeLessThan(2);
      const codes = (await Promise.all([1, 2].map((p) => decodeBarcodes(pdf, p).catch(() => [])))).flat();
      expect(codes).toContain('QR-Code:https://formwork.example/q/Q-2026-031');
      const without = await pdfText(await render(definition, { ...sampleData, options: [] }));
      expect(without).not.toContain('Optional add-ons');
    });

    it('report: contents with real page numbers, charts, no header on page 1, the transactions table across pages with its header', async () => {
      const { definition, sampleData } = load('report');
      expect(validateTemplate(definition, 'pdf')).toMatchObject({ valid: true, errors: [] });
      const pdf = await render(definition, sampleData);
      const pages = (await pdfInfo(pdf)).pages;
      expect(pages).toBeGreaterThanOrEqual(5);
      const words = await Promise.all(Array.from({ length: pages }, (_, i) => pdfWords(pdf, i + 1).then((p) => p.words)));
      expect(text(words[0])).not.toContain('Formwork Ltd · 2026');
      expect(text(words[1])).toContain('Formwork Ltd · 2026');
      expect(text(words[1])).toContain(`Page 2 of ${pages}`);
      // The contents list Summary, the two chart headings and Transactions with the pages they are on.
      for (const heading of ['Summary', 'Transactions']) {
        const entry = words[0].find((w) => w.text === heading)!;
        const number = words[0].filter((w) => Math.abs(w.yMin - entry.yMin) < 2 && /^\d+$/.test(w.text)).pop()!;
        const landed = words.findIndex((page, p) => p > 0 && page.some((w) => w.text === heading)) + 1;
        expect(`${heading} ${number.text}`).toBe(`${heading} ${landed}`);
      }
      // Charts are drawn: the bar chart's title and a region on its axis.
      expect(text(words[1])).toContain('Revenue by region');
      // The header row is on every page of the long table.
      const tablePages = words.filter((page) => page.some((w) => w.text === 'Enterprise'));
      expect(tablePages.length).toBeGreaterThanOrEqual(3);
      for (const page of tablePages) expect(text(page)).toContain('Date Region Customer Product Amount');
    });

    it('certificate: a landscape page, the recipient centred', async () => {
      const { definition, sampleData } = load('certificate');
      expect(validateTemplate(definition, 'pdf')).toMatchObject({ valid: true, errors: [] });
      const pdf = await render(definition, sampleData);
      expect((await pdfInfo(pdf)).pages).toBe(1);
      const { width, height, words } = await pdfWords(pdf);
      expect(width).toBeGreaterThan(height);
      const name = words.filter((w) => w.text === 'Katherine' || w.text === 'Johnson');
      const centre = (Math.min(...name.map((w) => w.xMin)) + Math.max(...name.map((w) => w.xMax))) / 2;
      expect(Math.abs(centre - width / 2)).toBeLessThan(4);
      expect(await decodeBarcodes(pdf)).toEqual(['QR-Code:https://formwork.example/verify/FW-2026-00421']);
    });
  });
});
