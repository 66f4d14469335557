import { Resvg } from '@resvg/resvg-js';
import ExcelJS from 'exceljs';
import { canStreamVariable } from '../../../adapters/rendering/excel-renderer';
import type { PdfRenderer } from '../../../adapters/rendering/pdf-renderer';
import { renderDocument, streamExcelDocument } from '../../../adapters/rendering/render-document';
import type { RenderLimits, TemplateDefinition } from '../../../domain/templates/template.types';
import { useEvaluator } from '../../support/evaluation';
import { buildTemplate, component } from '../../support/rendering-fixtures';
import { PNG_1PX } from '../../support/rendering-pdf';

const evaluator = useEvaluator();

/**
 * The layout components in a workbook (docs/templates.md "columns", "box", "chart", "markdown",
 * "Alignment and style in workbooks"), re-read with ExcelJS as a spreadsheet user sees them: which
 * cell holds what, borders, fills, fonts, pictures. A workbook without pictures is written by the
 * streaming writer, one with a picture by the in-memory writer; layouts are checked in both.
 */

const noPdf: PdfRenderer = {
  renderPdf: () => Promise.reject(new Error('Excel rendering must not print a PDF')),
  close: () => Promise.resolve(),
};

async function load(body: Buffer): Promise<ExcelJS.Worksheet> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(body as unknown as ExcelJS.Buffer);
  return workbook.worksheets[0];
}

async function render(template: TemplateDefinition, variables: Record<string, unknown> = {}, limits: Partial<RenderLimits> = {}): Promise<ExcelJS.Worksheet> {
  const out = await renderDocument({ evaluator, pdfRenderer: noPdf, limits }, { tenant: 'test', template, variables, format: 'excel' });
  return load(out.body);
}

/** The template for a writer: as it is for the streaming one; with a picture at its end, which needs the in-memory one. */
function forWriter(template: TemplateDefinition, inMemory: boolean): TemplateDefinition {
  if (!inMemory) return template;
  const picture = component('image', { src: `data:image/png;base64,${PNG_1PX.toString('base64')}`, width: '2mm' }, 'force-memory');
  const [section] = template.schema.sections;
  return { ...template, schema: { ...template.schema, sections: [{ ...section, components: [...section.components, picture] }] } };
}

/** Every cell with a value, by address. */
function cells(ws: ExcelJS.Worksheet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  ws.eachRow((row) => row.eachCell((cell) => (out[cell.address] = cell.value)));
  return out;
}

/** A PNG's RGBA pixels, decoded by resvg (an SVG holding just the picture). */
function pngPixels(png: Buffer): { width: number; height: number; rgba: Buffer } {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><image href="data:image/png;base64,${png.toString('base64')}" width="${width}" height="${height}"/></svg>`;
  return { width, height, rgba: new Resvg(svg).render().pixels };
}

const party = (id: string, title: string, lines: string[]) =>
  component('box', { components: [component('heading', { text: title, level: 3 }), component('text', { text: lines.join('\n') })] }, id);

const months = [
  { month: 'Jan', revenue: 120, costs: 80 },
  { month: 'Feb', revenue: 150, costs: 95 },
  { month: 'Mar', revenue: 90, costs: 100 },
];
const chart = (props: Record<string, unknown> = {}, id = 'sales') =>
  component('chart', { chartType: 'bar', dataSource: 'months', x: 'month', series: [{ field: 'revenue', label: 'Revenue' }, { field: 'costs', label: 'Costs' }], title: 'Sales 2024', ...props }, id);

describe('workbook layout: columns, boxes, charts, markdown, alignment and style', () => {
  describe.each([
    ['the streaming writer', false],
    ['the in-memory writer', true],
  ])('%s', (_writer, inMemory) => {
    const pick = (template: TemplateDefinition) => forWriter(template, inMemory);

    it('puts columns side by side from the same row, each box framed, what follows below the tallest', async () => {
      const template = buildTemplate({
        components: [
          component('heading', { text: 'Invoice', level: 1 }),
          component('columns', {
            columns: [
              { components: [party('seller', 'Seller', ['Formwork GmbH', 'Hauptstraße 1'])] },
              { components: [party('buyer', 'Buyer', ['Ada Lovelace', 'St James Square', 'London'])] },
            ],
          }),
          component('text', { text: 'Thank you' }),
        ],
      });
      const ws = await render(pick(template));
      expect(cells(ws)).toMatchObject({
        A1: 'Invoice',
        A2: 'Seller',
        A3: 'Formwork GmbH',
        A4: 'Hauptstraße 1',
        C2: 'Buyer',
        C3: 'Ada Lovelace',
        C4: 'St James Square',
        C5: 'London',
        // Below the buyer's column, the taller one.
        A6: 'Thank you',
      });
      expect(ws.getCell('B2').value).toBeNull();
      // The seller's box is A2:A4, the buyer's C2:C5: a thin border around each range, none between them.
      expect(ws.getCell('A2').border).toMatchObject({ top: { style: 'thin' }, left: { style: 'thin' }, right: { style: 'thin' } });
      expect(ws.getCell('A2').border.bottom).toBeUndefined();
      expect(ws.getCell('A4').border).toMatchObject({ bottom: { style: 'thin' }, left: { style: 'thin' } });
      expect(ws.getCell('C5').border).toMatchObject({ bottom: { style: 'thin' }, right: { style: 'thin' } });
      expect(ws.getCell('C3').border).toMatchObject({ left: { style: 'thin' }, right: { style: 'thin' } });
      expect(ws.getCell('C3').border.top).toBeUndefined();
      expect(ws.getCell('B3').border ?? {}).toEqual({});
      expect(ws.getCell('A6').border ?? {}).toEqual({});
      // Each column is as wide as its longest line.
      expect(ws.getColumn(3).width).toBe('St James Square'.length + 2);
    });

    it('places a table inside a column as a real Excel table at its offset, the neighbour beside it', async () => {
      const template = buildTemplate({
        components: [
          component('columns', {
            columns: [
              { components: [component('keyValue', { items: [{ label: 'Total', value: '{{total}}', format: 'currency' }, { label: 'Paid', value: 'no' }] })] },
              {
                components: [
                  component('table', { dataSource: 'lines', columns: [{ header: 'Item', field: 'item' }, { header: 'Qty', field: 'qty', format: 'number', align: 'center' }] }, 'lines'),
                ],
              },
            ],
          }),
          component('text', { text: 'After' }),
        ],
      });
      const lines = [
        { item: 'Pen', qty: 2 },
        { item: 'Ink', qty: 5 },
        { item: 'Paper', qty: 500 },
      ];
      const ws = await render(pick(template), { total: 12.5, lines });
      expect(cells(ws)).toMatchObject({ A1: 'Total', B1: 12.5, A2: 'Paid', B2: 'no', D1: 'Item', E1: 'Qty', D2: 'Pen', E2: 2, D4: 'Paper', E4: 500, A5: 'After' });
      const tables = ws.getTables() as unknown as Array<{ table: { name: string; tableRef: string } }>;
      expect(tables.map((t) => t.table)).toEqual([expect.objectContaining({ name: 'T_lines', tableRef: 'D1:E4' })]);
      expect(ws.getCell('E3').alignment).toMatchObject({ horizontal: 'center' });
      expect(ws.getCell('E1').alignment).toMatchObject({ horizontal: 'center' });
      expect(ws.getCell('E3').type).toBe(ExcelJS.ValueType.Number);
    });

    it('a box takes its border colour and style and its background, theme tokens resolved', async () => {
      const template = buildTemplate({
        components: [
          component('box', {
            border: { color: '#c00000', style: 'dashed' },
            background: 'primary',
            components: [component('keyValue', { items: [{ label: 'IBAN', value: 'DE00 1234' }] }), component('text', { text: 'Due in 14 days' })],
          }),
        ],
      });
      template.schema.theme = { colors: { primary: '#123456' } };
      const ws = await render(pick(template));
      // The range is A1:B2: the key-value block is two columns wide.
      expect(ws.getCell('A1').border).toMatchObject({ top: { style: 'dashed', color: { argb: 'FFC00000' } }, left: { style: 'dashed' } });
      expect(ws.getCell('B2').border).toMatchObject({ bottom: { style: 'dashed' }, right: { style: 'dashed' } });
      expect(ws.getCell('B2').value).toBeNull();
      for (const address of ['A1', 'B1', 'A2', 'B2']) expect(ws.getCell(address).fill).toMatchObject({ type: 'pattern', pattern: 'solid', fgColor: { argb: 'FF123456' } });
    });

    it('writes markdown as rich text: bold, italic and code runs, larger headings, bullets and numbers', async () => {
      const template = buildTemplate({
        components: [
          component('markdown', {
            text: '## Terms for {{customer}}\n\nPay **within 14 days**, *please*, to `IBAN`.\n\n- one\n- two\n  - nested\n\n3. third\n4. fourth\n\n| Item | Qty |\n|---|---|\n| Pen | **2** |',
            align: 'justify',
          }),
        ],
        variables: [{ name: 'customer', type: 'string', required: true }],
      });
      const ws = await render(pick(template), { customer: '*Ada*' });
      // A value's markdown stays text.
      expect(ws.getCell('A1').value).toBe('Terms for *Ada*');
      expect(ws.getCell('A1').font).toMatchObject({ bold: true, size: 15, color: { argb: 'FF102A43' } });
      const runs = (ws.getCell('A2').value as ExcelJS.CellRichTextValue).richText;
      expect(runs.map((r) => r.text).join('')).toBe('Pay within 14 days, please, to IBAN.');
      expect(runs.find((r) => r.text === 'within 14 days')?.font).toMatchObject({ bold: true });
      expect(runs.find((r) => r.text === 'Pay ')?.font?.bold).toBeFalsy();
      expect(runs.find((r) => r.text === 'please')?.font).toMatchObject({ italic: true });
      expect(runs.find((r) => r.text === 'IBAN')?.font).toMatchObject({ name: 'Courier New' });
      expect(ws.getCell('A2').alignment).toMatchObject({ horizontal: 'justify' });
      const text = (address: string) => ws.getCell(address).text;
      expect(['A3', 'A4', 'A5', 'A6', 'A7'].map(text)).toEqual(['• one', '• two', '• nested', '3. third', '4. fourth']);
      expect(ws.getCell('A5').alignment).toMatchObject({ indent: 1 });
      // The markdown table: its cells side by side, the header bold.
      expect(['A8', 'B8', 'A9', 'B9'].map(text)).toEqual(['Item', 'Qty', 'Pen', '2']);
      expect(ws.getCell('B8').font).toMatchObject({ bold: true });
      expect(ws.getCell('B9').font).toMatchObject({ bold: true });
      expect(ws.getCell('A9').font?.bold).toBeFalsy();
    });

    it('applies align and style to headings, text, key values and table columns', async () => {
      const template = buildTemplate({
        components: [
          component('heading', { text: 'Centred', level: 2, align: 'center', style: { color: 'primary' } }),
          component('text', { text: 'Loud', align: 'right', style: { fontSize: 16, italic: true, fontWeight: 700, color: '#00f', background: 'muted' } }),
          component('keyValue', { align: 'right', valueAlign: 'center', style: { fontSize: '9pt' }, items: [{ label: 'Total', value: '{{total}}', format: 'currency' }] }),
          component('table', { dataSource: 'lines', columns: [{ header: 'Item', field: 'item' }, { header: 'Amount', field: 'amount', format: 'number', align: 'left' }] }),
        ],
      });
      template.schema.theme = { colors: { primary: '#aa0000' } };
      const ws = await render(pick(template), { total: 10, lines: [{ item: 'Pen', amount: 3 }] });
      expect(ws.getCell('A1').alignment).toMatchObject({ horizontal: 'center' });
      expect(ws.getCell('A1').font).toMatchObject({ bold: true, size: 15, color: { argb: 'FFAA0000' } });
      expect(ws.getCell('A2').value).toBe('Loud');
      expect(ws.getCell('A2').alignment).toMatchObject({ horizontal: 'right' });
      expect(ws.getCell('A2').font).toMatchObject({ size: 16, italic: true, bold: true, color: { argb: 'FF0000FF' } });
      // `muted` is the theme's default (#627d98): this theme names only `primary`.
      expect(ws.getCell('A2').fill).toMatchObject({ fgColor: { argb: 'FF627D98' } });
      expect(ws.getRow(2).height).toBeGreaterThanOrEqual(24);
      expect(ws.getCell('A3').alignment).toMatchObject({ horizontal: 'right' });
      expect(ws.getCell('A3').font).toMatchObject({ bold: true, size: 9 });
      expect(ws.getCell('B3').value).toBe(10);
      expect(ws.getCell('B3').alignment).toMatchObject({ horizontal: 'center' });
      expect(ws.getCell('B5').value).toBe(3);
      expect(ws.getCell('B5').alignment).toMatchObject({ horizontal: 'left' });
      expect(ws.getCell('A5').alignment?.horizontal).toBeUndefined();
    });
  });

  it('draws a chart into the workbook as a picture (text included) above its data table', async () => {
    const ws = await render(buildTemplate({ components: [chart({ width: '120mm', height: 60 })] }), { months });
    const images = ws.getImages();
    expect(images).toHaveLength(1);
    const image = ws.workbook.getImage(Number(images[0].imageId));
    expect(image.extension).toBe('png');
    const { width, height, rgba } = pngPixels(image.buffer as unknown as Buffer);
    // Drawn at twice its shown size (120 mm is 454 px; 60 mm 227 px).
    expect([width, height]).toEqual([908, 454]);
    let coloured = 0;
    let title = 0;
    for (let i = 0; i < rgba.length; i += 4) {
      const [r, g, b] = [rgba[i], rgba[i + 1], rgba[i + 2]];
      if (r < 240 || g < 240 || b < 240) coloured += 1;
      // The top band holds the title alone, drawn in dark grey (#464646): without a font it stays white.
      if (i < width * Math.floor(height * 0.15) * 4 && r < 100 && Math.abs(r - g) < 12 && Math.abs(g - b) < 12) title += 1;
    }
    expect(coloured / (width * height)).toBeGreaterThan(0.05);
    expect(title).toBeGreaterThan(300);
    // The picture stands at A1; the data table starts below it.
    expect(images[0].range.tl).toMatchObject({ nativeCol: 0, nativeRow: 0 });
    const header = ws.getTables()[0] as unknown as { table: { tableRef: string } };
    const top = Number(/^A(\d+):/.exec(header.table.tableRef)![1]);
    expect(top).toBeGreaterThanOrEqual(Math.ceil(227 / 20));
    expect((ws.getRow(top).values as unknown[]).slice(1)).toEqual(['month', 'Revenue', 'Costs']);
    expect((ws.getRow(top + 3).values as unknown[]).slice(1)).toEqual(['Mar', 90, 100]);
  });

  it('puts a chart in a column beside its neighbour, and bounds a huge chart picture', async () => {
    const template = buildTemplate({
      components: [component('columns', { columns: [{ components: [chart({ width: '2000mm', height: 250 }, 'huge')] }, { components: [component('text', { text: 'Beside' })] }] })],
    });
    const ws = await render(template, { months });
    const [image] = ws.getImages();
    const png = ws.workbook.getImage(Number(image.imageId)).buffer as unknown as Buffer;
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    // Shown at most 960 px wide; drawn within 2.5 million pixels.
    expect(width * height).toBeLessThanOrEqual(2_500_000);
    expect(width).toBeGreaterThan(960);
    // The text stands right of the picture (960 px cover 15 default columns), on the picture's first row.
    const beside = Object.entries(cells(ws)).find(([, v]) => v === 'Beside')![0];
    expect(beside).toMatch(/^[A-Z]+1$/);
    expect(ws.getCell(beside).col).toBeGreaterThanOrEqual(16);
  });

  it('draws at most 20 chart pictures per workbook; every chart keeps its data table', async () => {
    const template = buildTemplate({ components: [component('repeat', { dataSource: 'regions', components: [chart({ chartType: 'line', title: '{{item}}', height: 20 }, 'regional')] })] });
    const regions = Array.from({ length: 22 }, (_, i) => `Region ${i}`);
    const ws = await render(template, { months, regions });
    expect(ws.getImages()).toHaveLength(20);
    expect(ws.getTables()).toHaveLength(22);
  });

  it('stops six columns of long repeats at the row limit (each column counts), and writes them side by side below it', async () => {
    const column = { components: [component('repeat', { dataSource: 'xs', components: [component('text', { text: '{{item}}' })] })] };
    const template = buildTemplate({ components: [component('columns', { columns: Array.from({ length: 6 }, () => column) })] });
    const xs = (n: number) => Array.from({ length: n }, (_, i) => `x${i}`);
    // 6 × 2,000 rows written: over 10,000, refused by the measuring pass before the streaming pass holds a row.
    await expect(render(template, { xs: xs(2_000) }, { maxExcelRows: 10_000, maxLoopIterations: 100_000 })).rejects.toMatchObject({ code: 'ERR_LIMIT_003', relatedInfo: { limit: 10_000 } });
    const ws = await render(template, { xs: xs(1_500) }, { maxExcelRows: 10_000, maxLoopIterations: 100_000 });
    expect(ws.rowCount).toBe(1_500);
    expect(['A', 'C', 'E', 'G', 'I', 'K'].map((col) => ws.getCell(`${col}1500`).value)).toEqual(Array(6).fill('x1499'));
  });

  it('streams a report: columns side by side above a 20,000-row table read in batches', async () => {
    const template = buildTemplate({
      components: [
        component('columns', { columns: [{ components: [party('from', 'From', ['Formwork GmbH'])] }, { components: [party('to', 'To', ['Ada Lovelace', 'London'])] }] }),
        component('table', { dataSource: 'rows', columns: [{ header: 'Name', field: 'name' }, { header: 'Qty', field: 'qty', format: 'number', align: 'right' }] }, 'report-lines'),
      ],
    });
    expect(canStreamVariable(template.schema, 'rows')).toBe(true);
    const n = 20_000;
    let batches = 0;
    const chunks: Buffer[] = [];
    await streamExcelDocument(
      { evaluator, pdfRenderer: noPdf, limits: { maxLoopIterations: 100_000 } },
      {
        tenant: 'test',
        template,
        variables: { rows: [] },
        sources: {
          rows: async function* () {
            for (let at = 0; at < n; at += 1_000) {
              batches += 1;
              yield Array.from({ length: 1_000 }, (_, i) => ({ name: `Row ${at + i}`, qty: at + i }));
            }
          },
        },
      },
      async (chunk) => {
        chunks.push(chunk);
      },
    );
    // Two passes over the source, a batch at a time.
    expect(batches).toBe(40);
    const ws = await load(Buffer.concat(chunks));
    expect(cells(ws)).toMatchObject({ A1: 'From', A2: 'Formwork GmbH', C1: 'To', C2: 'Ada Lovelace', C3: 'London', A4: 'Name', B4: 'Qty', A5: 'Row 0', B20004: 19_999 });
    expect(ws.getCell('C3').border).toMatchObject({ bottom: { style: 'thin' } });
    expect(ws.getCell('B100').alignment).toMatchObject({ horizontal: 'right' });
    const tables = ws.getTables() as unknown as Array<{ table: { tableRef: string } }>;
    expect(tables[0].table.tableRef).toBe('A4:B20004');
  });
});
