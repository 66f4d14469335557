import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { renderDocument } from '../../../adapters/rendering/render-document';
import { validateTemplate } from '../../../domain/templates/template.schema';
import { COMPONENT_TYPES, type Component, type TemplateDefinition } from '../../../domain/templates/template.types';
import { PNG_1PX, pdfText, testPool } from '../../support/rendering-pdf';
import { useEvaluator } from '../../support/evaluation';

const evaluator = useEvaluator();

/**
 * docs/templates.md promises one example per component "that renders": this takes the definition
 * example and every component example out of the page and renders them, to PDF and to Excel.
 */
const doc = readFileSync(join(__dirname, '../../../docs/templates.md'), 'utf8');
const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]);
const parsed = blocks.flatMap((b) => {
  try {
    return [JSON.parse(b)];
  } catch {
    return [];
  }
});
const definition = parsed.find((p) => p.schema && p.variables) as TemplateDefinition;
const components = parsed.filter((p) => typeof p.type === 'string' && p.props) as Component[];

const SAMPLE = {
  invoiceNumber: 'INV-7',
  customer: 'Ωmega Ltd',
  issuedOn: '2026-03-01',
  items: [{ description: 'Consulting', qty: 2, price: 150, shippedOn: '2026-02-27' }],
  logo: `data:image/png;base64,${PNG_1PX.toString('base64')}`,
  tasks: [{ title: 'Sign the contract' }],
  total: 360,
  orders: [{ reference: 'PO-1', lines: [{ name: 'Widget', amount: 12.5 }] }],
};

describe('the documented template examples', () => {
  const pool = testPool();
  afterAll(() => pool.close());

  it('finds the definition and one example of every component type', () => {
    expect(definition).toBeDefined();
    // Every type the catalogue knows has its example in docs/templates.md.
    expect(new Set(components.map((c) => c.type))).toEqual(new Set(COMPONENT_TYPES));
  });

  it('renders the definition example and every component example, to PDF and Excel', async () => {
    // The component examples use a few variables the definition example does not declare.
    const template: TemplateDefinition = {
      ...definition,
      variables: [
        ...(definition.variables ?? []),
        { name: 'logo', type: 'image', required: false },
        { name: 'tasks', type: 'array', required: false, defaultValue: [] },
        { name: 'orders', type: 'array', required: false, defaultValue: [] },
      ],
      schema: {
        ...definition.schema,
        // Ids are unique per template; both the definition and the heading example use `title`.
        sections: [...definition.schema.sections, { id: 'catalogue', title: 'Catalogue', components: components.map((c) => ({ ...c, id: `example-${c.id}` })) }],
      },
    };
    const check = validateTemplate(template, 'pdf');
    expect(check.errors).toEqual([]);

    const pdf = await renderDocument({ evaluator, pdfRenderer: pool }, { tenant: 'test', template, variables: SAMPLE, format: 'pdf' });
    const text = await pdfText(pdf.body);
    for (const expected of ['Invoice for Ωmega Ltd', 'Dear Ωmega Ltd', 'Consulting', 'Sign the contract', 'Order 1: PO-1', 'Widget', 'Contents']) {
      expect(text).toContain(expected);
    }
    expect(text).toMatch(/Page 1 of [23]/);

    const xlsx = await renderDocument({ evaluator, pdfRenderer: pool }, { tenant: 'test', template, variables: SAMPLE, format: 'excel' });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(xlsx.body as unknown as ArrayBuffer);
    const cells = wb.worksheets.flatMap((ws) => ws.getSheetValues().flat().filter((v) => v !== undefined && v !== null));
    expect(cells).toContain('Consulting');
    expect(cells).toContain(150);
  });
});
