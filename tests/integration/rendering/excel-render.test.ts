import ExcelJS from 'exceljs';
import { renderDocument } from '../../../adapters/rendering/render-document';
import type { PdfRenderer } from '../../../adapters/rendering/pdf-renderer';
import { buildInvoiceTemplate, buildTemplate, component, invoiceVariables } from '../../support/rendering-fixtures';
import { PNG_1PX } from '../../support/rendering-pdf';
import { useEvaluator } from '../../support/evaluation';
import { startLoopProbe } from '../../support/loop-probe';

const evaluator = useEvaluator();

/** Workbooks are re-read with ExcelJS: types, tables and layout as a spreadsheet user sees them. */

const noPdf: PdfRenderer = {
  renderPdf: () => Promise.reject(new Error('Excel rendering must not print a PDF')),
  close: () => Promise.resolve(),
};

async function renderWorkbook(template = buildInvoiceTemplate(), variables = invoiceVariables(), extra = {}) {
  const out = await renderDocument({ evaluator, pdfRenderer: noPdf }, { tenant: 'test', template, variables, format: 'excel', ...extra });
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(out.body as unknown as ExcelJS.Buffer);
  return { out, wb };
}

function findRow(ws: ExcelJS.Worksheet, firstCell: ExcelJS.CellValue): ExcelJS.Row {
  let found: ExcelJS.Row | undefined;
  ws.eachRow((row) => {
    if (!found && row.getCell(1).value === firstCell) found = row;
  });
  if (!found) throw new Error(`no row starting with ${String(firstCell)}`);
  return found;
}

describe('Excel rendering', () => {
  it('writes one sheet per section with a real table of typed cells', async () => {
    const { out, wb } = await renderWorkbook();
    expect(out).toMatchObject({ fileExtension: 'xlsx', contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    expect(out.body.subarray(0, 2).toString()).toBe('PK');
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Invoice INV-2024-001']);
    const ws = wb.worksheets[0];

    const tables = ws.getTables() as unknown as Array<{ table: { name: string; tableRef: string; headerRow: boolean } }>;
    expect(tables).toHaveLength(1);
    const header = findRow(ws, 'Description');
    expect(tables[0].table).toMatchObject({ name: 'T_lines', headerRow: true, tableRef: `A${header.number}:E${header.number + 2}` });
    expect((header.values as unknown[]).slice(1)).toEqual(['Description', 'Qty', 'Price', 'Shipped', 'Taxable']);

    const line = findRow(ws, 'Analytical engine');
    expect(line.getCell(2).value).toBe(2);
    expect(line.getCell(2).type).toBe(ExcelJS.ValueType.Number);
    expect(line.getCell(3).value).toBe(1250.5);
    expect(line.getCell(3).numFmt).toContain('€');
    expect(line.getCell(4).value).toEqual(new Date('2024-02-20T00:00:00Z'));
    expect(line.getCell(4).type).toBe(ExcelJS.ValueType.Date);
    // The template's date format (its locale's medium date, as the PDF prints "Feb 20, 2024"), on a real date cell.
    expect(line.getCell(4).numFmt).toBe('mmm d, yyyy');
    expect(line.getCell(5).value).toBe(true);
    expect(line.getCell(5).type).toBe(ExcelJS.ValueType.Boolean);
    expect(findRow(ws, 'Punch cards').getCell(5).value).toBe(false);
  });

  it("follows the template's formats: dates in its locale's date format, currency rounded to the currency's minor unit", async () => {
    const template = buildTemplate({
      schema: {
        pageSize: 'A4',
        locale: 'de-DE',
        currency: 'JPY',
        sections: [
          {
            id: 'main',
            components: [
              component('keyValue', { items: [{ label: 'Summe', value: '{{total | currency}}' }, { label: 'Datum', value: '{{issued | date}}' }] }),
              component('table', { dataSource: 'rows', columns: [{ header: 'Betrag', field: 'amount', format: 'currency' }, { header: 'Tag', field: 'day', format: 'date' }] }),
            ],
          },
        ],
      },
    });
    const { wb } = await renderWorkbook(template, { total: 22971.140000000003, issued: '2024-03-01', rows: [{ amount: 1234.5, day: '2024-11-29' }] });
    const ws = wb.worksheets[0];
    const sum = findRow(ws, 'Summe').getCell(2);
    // The symbol as the locale writes it (de-DE: ¥), no decimals: the yen has no minor unit.
    expect({ value: sum.value, type: sum.type, numFmt: sum.numFmt }).toEqual({ value: 22971, type: ExcelJS.ValueType.Number, numFmt: '"¥"#,##0;-"¥"#,##0' });
    const day = findRow(ws, 'Datum').getCell(2);
    expect({ value: day.value, type: day.type, numFmt: day.numFmt }).toEqual({ value: new Date('2024-03-01T00:00:00Z'), type: ExcelJS.ValueType.Date, numFmt: 'dd.mm.yyyy' });
    const row = findRow(ws, 1235);
    expect(row.getCell(1).numFmt).toBe('"¥"#,##0;-"¥"#,##0');
    expect({ value: row.getCell(2).value, type: row.getCell(2).type, numFmt: row.getCell(2).numFmt }).toEqual({ value: new Date('2024-11-29T00:00:00Z'), type: ExcelJS.ValueType.Date, numFmt: 'dd.mm.yyyy' });

    // In US dollars the float residue of a sum is rounded to the cent.
    const usd = buildTemplate({ schema: { pageSize: 'A4', currency: 'USD', sections: [{ id: 'main', components: [component('keyValue', { items: [{ label: 'Total', value: '{{total | currency}}' }] })] }] } });
    const cell = findRow((await renderWorkbook(usd, { total: 22971.140000000003 })).wb.worksheets[0], 'Total').getCell(2);
    expect({ value: cell.value, numFmt: cell.numFmt }).toEqual({ value: 22971.14, numFmt: '"$"#,##0.00;-"$"#,##0.00' });
  });

  it('writes headings bold and larger, key values as typed two-column rows', async () => {
    const { wb } = await renderWorkbook();
    const ws = wb.worksheets[0];
    const heading = findRow(ws, 'Invoice for Ada Lovelace').getCell(1);
    expect(heading.font).toMatchObject({ bold: true, size: 18 });
    expect(findRow(ws, 'Total').getCell(2).value).toBe(2526);
    expect(findRow(ws, 'Issued').getCell(2).value).toEqual(new Date('2024-03-01T00:00:00Z'));
    expect(findRow(ws, 'Paid').getCell(2).value).toBe(true);
    expect(findRow(ws, 'Total').getCell(1).font).toMatchObject({ bold: true });
  });

  it('fits column widths to the content', async () => {
    const long = 'An unusually long product description that needs room';
    const { wb } = await renderWorkbook(undefined, invoiceVariables({ items: [{ description: long, qty: 1, price: 1 }] }));
    const ws = wb.worksheets[0];
    expect(ws.getColumn(1).width).toBe(long.length + 2);
    expect(ws.getColumn(2).width).toBeGreaterThanOrEqual(8);
    expect(ws.getColumn(2).width).toBeLessThan(ws.getColumn(1).width!);
  });

  it('writes lists as rows, repeats per element, images and QR codes as pictures', async () => {
    const t = buildTemplate({
      schema: {
        pageSize: 'A4',
        footer: { center: 'Page {page} of {pages} & more' },
        sections: [
          { id: 'first', title: 'Lists', components: [component('list', { items: 'tags', ordered: true }), component('list', { items: ['a', '{{tags.0}}'] })] },
          {
            id: 'second',
            components: [
              component('repeat', { dataSource: 'people', components: [component('text', { text: '{{loop.number}}: {{item.name}}' })] }),
              component('image', { src: `data:image/png;base64,${PNG_1PX.toString('base64')}`, width: '10mm' }),
              component('qrcode', { value: 'https://example.com' }),
              component('image', { src: 'https://elsewhere.example/logo.png', alt: 'Logo (remote)' }),
            ],
          },
        ],
      },
    });
    const { wb } = await renderWorkbook(t, { tags: ['red', 'green'], people: [{ name: 'Ann' }, { name: 'Bob' }] });
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Lists', 'second']);
    const [lists, second] = wb.worksheets;
    expect(findRow(lists, 1).getCell(2).value).toBe('red');
    expect(findRow(lists, 2).getCell(2).value).toBe('green');
    expect(findRow(lists, 'a')).toBeDefined();
    expect(findRow(lists, 'red')).toBeDefined();
    expect(findRow(second, '1: Ann')).toBeDefined();
    expect(findRow(second, '2: Bob')).toBeDefined();
    expect(findRow(second, 'Logo (remote)')).toBeDefined();
    expect(second.getImages()).toHaveLength(2);
    expect(lists.headerFooter.oddFooter).toBe('&CPage &P of &N && more');
  });

  it('marks free-quota workbooks in the print header', async () => {
    const { wb } = await renderWorkbook(undefined, undefined, { watermark: true });
    expect(wb.worksheets[0].headerFooter.oddHeader).toBe('&CFORMWORK FREE&RInvoice INV-2024-001');
  });

  it('refuses a workbook over the row limit with ERR_LIMIT_003', async () => {
    const t = buildInvoiceTemplate();
    const items = Array.from({ length: 50 }, (_, i) => ({ description: `Item ${i}`, qty: 1, price: i }));
    const render = (maxExcelRows: number) =>
      renderDocument({ evaluator, pdfRenderer: noPdf, limits: { maxExcelRows } }, { tenant: 'test', template: t, variables: invoiceVariables({ items }), format: 'excel' });
    await expect(render(60)).resolves.toMatchObject({ fileExtension: 'xlsx' });
    await expect(render(50)).rejects.toMatchObject({ code: 'ERR_LIMIT_003', status: 400, relatedInfo: { limit: 50 } });
  });

  it('builds a 99,990-row workbook off the event loop: a 10 ms probe is never held half a second, and numbers stay numbers', async () => {
    const t = buildTemplate({
      components: [
        component('table', {
          dataSource: 'rows',
          columns: [
            { header: 'Name', field: 'name' },
            { header: 'Qty', field: 'qty', format: 'number' },
            { header: 'Price', field: 'price', format: 'currency' },
          ],
        }),
      ],
    });
    const n = 99_990;
    const rows = Array.from({ length: n }, (_, i) => ({ name: `Row ${i}`, qty: i, price: i * 1.5 }));
    const probe = startLoopProbe(10);
    const out = await renderDocument(
      { evaluator, pdfRenderer: noPdf, limits: { maxExcelRows: 100_000, maxLoopIterations: 100_000 } },
      { tenant: 'test', template: t, variables: { rows }, format: 'excel' },
    ).finally(() => probe.stop());
    const loop = probe.stop();
    // The build takes seconds and the loop ticked through all of it. Built on this thread, one gap
    // lasted the whole build (about 10 s, 5 s of it this thread's CPU time). Off it, this thread
    // only hands the rows over in pieces of a few milliseconds each and receives the file; what
    // else holds it is garbage collection of this test's large heap, which on a loaded CI machine
    // once took 100 ms of this thread's CPU between two ticks. So the bound is half a second of
    // this thread's CPU in one gap, a tenth of the build on it, and a gap of a second or more is
    // tolerated only where this thread was mostly off the CPU: the machine was busy, not the loop.
    expect(loop.ticks).toBeGreaterThan(100);
    expect(loop.maxBusyMs).toBeLessThan(500);
    expect(loop.longGaps.filter(([gap, busy]) => gap >= 1000 && busy >= gap / 2)).toEqual([]);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(out.body as unknown as ExcelJS.Buffer);
    const ws = wb.worksheets[0];
    expect((ws.getRow(1).values as unknown[]).slice(1)).toEqual(['Name', 'Qty', 'Price']);
    expect(ws.actualRowCount).toBe(n + 1);
    for (const i of [0, 1, 54_321, n - 1]) {
      const row = ws.getRow(i + 2);
      expect(row.getCell(1).value).toBe(`Row ${i}`);
      expect(row.getCell(2).value).toBe(i);
      expect(row.getCell(2).type).toBe(ExcelJS.ValueType.Number);
      expect(row.getCell(3).value).toBe(i * 1.5);
      expect(row.getCell(3).type).toBe(ExcelJS.ValueType.Number);
    }
  });

  it('applies the loop limit to workbooks too', async () => {
    const t = buildTemplate({ components: [component('repeat', { dataSource: 'xs', components: [component('text', { text: '{{item}}' })] })] });
    await expect(
      renderDocument({ evaluator, pdfRenderer: noPdf, limits: { maxLoopIterations: 5 } }, { tenant: 'test', template: t, variables: { xs: [1, 2, 3, 4, 5, 6] }, format: 'excel' }),
    ).rejects.toMatchObject({ code: 'ERR_LIMIT_007' });
  });
});
