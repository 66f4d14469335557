import ExcelJS from 'exceljs';
import type { ChromiumPool } from '../../../adapters/rendering/chromium-pool';
import { startTestApp, type TestApp } from '../../support/app';
import { signUp, type SignedUpUser } from '../../support/factories';
import { pdfText } from '../../support/rendering-pdf';
import { buildInvoiceBody, createTemplate } from '../../support/templates';

/**
 * POST /api/templates/:id/preview: the draft rendered on the render task queue (here the app's
 * in-process worker, with the app's warm Chromium pool; render-worker-process.test.ts shows the
 * render worker role doing it in a process of its own).
 */
describe('Templates: preview', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  beforeAll(async () => {
    // Small limits so each limit error is reachable with a small template.
    app = await startTestApp({ env: { PDF_MAX_PAGES: '3', EXCEL_MAX_ROWS: '20', LOOP_MAX_ITERATIONS: '50' } });
    alice = await signUp(app);
  });
  afterAll(() => app.close());

  async function preview(ref: string, body: unknown, prefix = '/api/templates') {
    const res = await fetch(`${app.url}${prefix}/${ref}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(bytes.toString('utf8')) : undefined;
    return { res, bytes, json };
  }

  const invoiceVariables = {
    invoiceNumber: 'INV-2041',
    customer: 'Ada Lovelace',
    issuedOn: '2026-03-14',
    items: [
      { description: 'Analytical engine', qty: 2, price: 1500.5 },
      { description: 'Punched cards', qty: 10, price: 3 },
    ],
  };

  it('renders the draft to PDF (default format) with the variables interpolated, inline as <slug>.pdf', async () => {
    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody({ name: 'Preview Invoice' }));
    const pool = app.services.pdfRenderer as ChromiumPool;
    const before = pool.stats.documents;
    const { res, bytes } = await preview(t.shortId, { variables: invoiceVariables });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="preview-invoice.pdf"');
    expect(res.headers.get('x-page-count')).toBe('1');
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(bytes);
    expect(text).toContain('Invoice for Ada Lovelace');
    expect(text).toContain('Analytical engine');
    expect(text).toContain('Punched cards');
    // The calculated total (2 × 1500.50 + 10 × 3) in the template's currency, and a constant.
    expect(text).toContain('€3,031.00');
    expect(text).toContain('Formwork GmbH');
    // Previews are free, so they carry the free-quota watermark (rotated, so its letters come in pieces).
    expect((await pdfText(bytes, { mode: 'raw' })).replace(/\s+/g, '')).toContain('FORMWORKFREE');
    // Printed by the app's one pool (Services.pdfRenderer), which stays warm for the next preview.
    expect(pool.stats.documents).toBe(before + 1);
    const generation = pool.browserGeneration;
    await preview(t.id, { variables: invoiceVariables });
    expect(pool.browserGeneration).toBe(generation);
  });

  it('renders the draft, not the published version', async () => {
    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody());
    await app.request('POST', `/api/templates/${t.id}/publish`, { token: alice.accessToken, body: {} });
    const schema = buildInvoiceBody().schema as { sections: Array<{ components: Array<{ props: Record<string, unknown> }> }> };
    schema.sections[0].components[0].props.text = 'Draft heading for {{customer}}';
    await app.request('PUT', `/api/templates/${t.id}`, { token: alice.accessToken, body: { schema } });
    const text = await pdfText((await preview(t.id, { variables: invoiceVariables, format: 'pdf' })).bytes);
    expect(text).toContain('Draft heading for Ada Lovelace');
  });

  it('renders to Excel as <slug>.xlsx: numbers stay numbers, dates stay dates', async () => {
    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody({ name: 'Sheet Invoice' }));
    const items = [{ ...invoiceVariables.items[0], shippedOn: '2026-03-10' }, invoiceVariables.items[1]];
    const { res, bytes } = await preview(t.slug, { variables: { ...invoiceVariables, items }, format: 'excel' }, '/api/templates/attachment');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="sheet-invoice.xlsx"');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
    const values: unknown[] = [];
    workbook.worksheets[0].eachRow((row) => row.eachCell((cell) => values.push(cell.value)));
    expect(values).toContain('Analytical engine');
    expect(values).toContain(1500.5);
    expect(values).toContain(10);
    const dates = values.filter((v): v is Date => v instanceof Date);
    expect(dates.map((d) => d.toISOString().slice(0, 10))).toContain('2026-03-10');
    expect(values.some((v) => typeof v === 'string' && v.includes('Ada Lovelace'))).toBe(true);
  });

  it('answers an excel preview as a grid: the cells as their formats show them, fonts and table styles; capped, and refused for a pdf-only template', async () => {
    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody({ name: 'Grid Invoice' }));
    const post = (ref: string, body: unknown) => app.request('POST', `/api/templates/${ref}/preview/grid`, { token: alice.accessToken, body });
    const res = await post(t.id, { variables: invoiceVariables });
    expect(res.status).toBe(200);
    const [sheet] = res.body.sheets;
    expect(res.body.truncated).toBe(false);
    expect(sheet.truncated).toBe(false);
    const cells = sheet.rows.flatMap((r: { row: number; cells: Array<Record<string, unknown>> }) => r.cells.map((c) => ({ row: r.row, ...c })));
    const find = (text: string) => cells.find((c: { text: string }) => c.text.includes(text));
    expect(find('Ada Lovelace')).toBeDefined();
    // The same workbook /preview makes, read back: a number shown through its format, right-aligned.
    const file = await preview(t.id, { variables: invoiceVariables, format: 'excel' });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(file.bytes as unknown as ArrayBuffer);
    let priced: ExcelJS.Cell | undefined;
    workbook.worksheets[0].eachRow((row) => row.eachCell((cell) => (priced ??= cell.value === 1500.5 ? cell : undefined)));
    const shown = cells.find((c: { row: number; column: number }) => c.row === Number(priced!.row) && c.column === Number(priced!.col));
    expect(priced!.numFmt).toBeTruthy();
    expect(shown).toMatchObject({ align: 'right' });
    expect(shown.text).toMatch(/1,500\.50/);
    expect(sheet.rowCount).toBe(workbook.worksheets[0].rowCount);
    // Header cells keep their bold and fill.
    // A heading's bold and colour; the items table's header in the look of its table style.
    expect(find('Invoice for Ada Lovelace')).toMatchObject({ bold: true, color: expect.stringMatching(/^#[0-9a-f]{6}$/) });
    expect(cells.find((c: { text: string }) => c.text === 'Description')).toMatchObject({ bold: true, color: '#ffffff', fill: '#4472c4' });

    // EXCEL_MAX_ROWS (20 here) holds for the grid as for the file.
    const rows = Array.from({ length: 30 }, (_, i) => ({ description: `Line ${i}`, qty: 1, price: 1 }));
    const over = await post(t.id, { variables: { ...invoiceVariables, items: rows } });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('ERR_LIMIT_003');

    const pdfOnly = await createTemplate(app, alice.accessToken, buildInvoiceBody({ outputFormats: ['pdf'] }));
    const refused = await post(pdfOnly.id, { variables: invoiceVariables });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'ERR_TMPL_009', relatedInfo: { field: 'format' } });
    expect((await post(t.id, { variables: 'not an object' })).status).toBe(400);
  });

  it('keeps the render errors\' codes: ERR_VALID_005 (missing), ERR_VALID_002 (wrong type)', async () => {
    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody());
    const { customer: _c, ...missing } = invoiceVariables;
    let out = await preview(t.id, { variables: missing });
    expect(out.res.status).toBe(400);
    expect(out.json).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'customer' } });
    out = await preview(t.id, { variables: { ...invoiceVariables, issuedOn: 'next tuesday' } });
    expect(out.res.status).toBe(400);
    expect(out.json).toMatchObject({ code: 'ERR_VALID_002', relatedInfo: { field: 'issuedOn' } });
    out = await preview(t.id, {});
    expect(out.json.code).toBe('ERR_VALID_005');
  });

  it('keeps the limit codes: ERR_LIMIT_001 (pages), ERR_LIMIT_003 (Excel rows), ERR_LIMIT_007 (loop iterations)', async () => {
    const pageBreaks = Array.from({ length: 4 }, (_, i) => [
      { id: `p${i}`, type: 'text', props: { text: `Page ${i + 1}` } },
      { id: `b${i}`, type: 'pageBreak', props: {} },
    ]).flat();
    const long = await createTemplate(app, alice.accessToken, {
      schema: { pageSize: 'A4', sections: [{ id: 's', components: pageBreaks }] },
      variables: [],
      constants: {},
      calculatedVariables: [],
    });
    let out = await preview(long.id, {});
    expect(out.res.status).toBe(400);
    expect(out.json.code).toBe('ERR_LIMIT_001');

    const t = await createTemplate(app, alice.accessToken, buildInvoiceBody());
    const rows = Array.from({ length: 30 }, (_, i) => ({ description: `Line ${i}`, qty: 1, price: 1 }));
    out = await preview(t.id, { variables: { ...invoiceVariables, items: rows }, format: 'excel' });
    expect(out.res.status).toBe(400);
    expect(out.json.code).toBe('ERR_LIMIT_003');

    const loop = await createTemplate(app, alice.accessToken, {
      schema: { pageSize: 'A4', sections: [{ id: 's', components: [{ id: 'r', type: 'repeat', props: { dataSource: 'rows', components: [{ id: 'x', type: 'text', props: { text: '{{item}}' } }] } }] }] },
      variables: [{ name: 'rows', type: 'array', required: true, items: { type: 'string' } }],
      constants: {},
      calculatedVariables: [],
    });
    out = await preview(loop.id, { variables: { rows: Array.from({ length: 60 }, (_, i) => `row ${i}`) } });
    expect(out.res.status).toBe(400);
    expect(out.json.code).toBe('ERR_LIMIT_007');
  });

  it('refuses a format the template does not render to, or no format at all (400 ERR_TMPL_009)', async () => {
    const pdfOnly = await createTemplate(app, alice.accessToken, buildInvoiceBody({ outputFormats: ['pdf'] }));
    let out = await preview(pdfOnly.id, { variables: invoiceVariables, format: 'excel' });
    expect(out.res.status).toBe(400);
    expect(out.json).toMatchObject({ code: 'ERR_TMPL_009', relatedInfo: { field: 'format', outputFormats: ['pdf'] } });
    out = await preview(pdfOnly.id, { variables: invoiceVariables, format: 'docx' });
    expect(out.json).toMatchObject({ code: 'ERR_TMPL_009', relatedInfo: { field: 'format' } });
    // An Excel-only template previews as Excel when no format is asked for.
    const excelOnly = await createTemplate(app, alice.accessToken, buildInvoiceBody({ outputFormats: ['excel'] }));
    out = await preview(excelOnly.id, { variables: invoiceVariables });
    expect(out.res.status).toBe(200);
    expect(out.res.headers.get('content-disposition')).toMatch(/\.xlsx"$/);
    out = await preview('no-such-template', {});
    expect(out.json.code).toBe('ERR_TMPL_001');
  });
});
