import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { componentTypes } from '../../../api/templates/component-catalogue';
import { validateTemplate } from '../../../domain/templates/template.schema';
import { problemOwner, sameDefinition, toDefinition, toPuck, type Block, type Definition } from '../../../web/src/designer/model';

/**
 * The designer's model mapping (web/src/designer/model.ts): a template opened in the designer and
 * saved without a change is the template it was. The catalogue is the one GET
 * /api/templates/component-types answers.
 */
const catalogue = componentTypes().data;

/** One component of every type, containers holding others, in a header, a footer and two sections. */
const everyType: Definition = {
  schema: {
    pageSize: 'A4',
    orientation: 'portrait',
    margins: { top: '20mm', right: 15, bottom: '2cm', left: '15mm' },
    theme: { fontFamily: 'Inter', fontSize: 10, colors: { primary: '#0b7285', muted: '#868e96' } },
    css: '.total { font-weight: bold; }',
    locale: 'de-DE',
    currency: 'EUR',
    format: 'invoice',
    header: { left: '{{company}}', right: 'Invoice {{number}}', firstPage: { components: [] } },
    footer: {
      components: [{ id: 'page', type: 'text', props: { text: 'Page {page} of {pages}', align: 'right' } }],
      firstPage: { center: 'First page' },
    },
    sections: [
      {
        id: 'main',
        title: 'Invoice',
        components: [
          { id: 'toc', type: 'toc', props: { levels: 2, title: 'Contents' } },
          { id: 'title', type: 'heading', props: { text: 'Invoice {{number}}', level: 1, align: 'center', style: { color: 'primary', uppercase: true } } },
          { id: 'intro', type: 'text', props: { text: 'Dear {{company}},\n\nthanks.', visibleIf: 'company != ""', keepTogether: true } },
          { id: 'lines', type: 'table', props: { dataSource: 'items', columns: [{ header: 'Item', field: 'name' }, { header: 'Price', field: 'price', format: 'currency', align: 'right' }], keepRowsTogether: false } },
          { id: 'logo', type: 'image', props: { src: 'data:image/png;base64,iVBORw0KGgo=', width: 40, alt: 'Logo' } },
          { id: 'notes', type: 'list', props: { items: ['one', 'two {{number}}'], ordered: true } },
          { id: 'names', type: 'list', props: { items: 'items', field: 'name' } },
          { id: 'summary', type: 'keyValue', props: { items: [{ label: 'Total', value: '{{total}}', format: 'currency' }], align: 'left', valueAlign: 'right' } },
          { id: 'rule', type: 'divider', props: {} },
          { id: 'gap', type: 'spacer', props: { height: '8mm' } },
          { id: 'break', type: 'pageBreak', props: { pageBreak: 'after' } },
          { id: 'pay', type: 'qrcode', props: { value: 'https://pay.example.com/{{number}}', size: '25mm' } },
        ],
      },
      {
        id: 'details',
        components: [
          {
            id: 'orders',
            type: 'repeat',
            props: {
              dataSource: 'items',
              as: 'line',
              components: [
                {
                  id: 'line-box',
                  type: 'box',
                  props: {
                    border: { width: '0.5mm', color: '#cccccc', style: 'dashed' },
                    background: '#f0f4f8',
                    radius: '2mm',
                    padding: 3,
                    components: [{ id: 'line-name', type: 'text', props: { text: '{{line.name}}' } }],
                  },
                },
              ],
            },
          },
          {
            id: 'parties',
            type: 'columns',
            props: {
              gap: '8mm',
              columns: [
                { width: '2fr', components: [{ id: 'seller', type: 'markdown', props: { text: '**Seller**' } }] },
                { components: [{ id: 'buyer', type: 'html', props: { html: '<p>Buyer</p>' } }, { id: 'code', type: 'barcode', props: { value: '12345', symbology: 'code128', height: 12, showText: false } }] },
                { width: 30, components: [] },
              ],
            },
          },
          { id: 'sales', type: 'chart', props: { chartType: 'bar', dataSource: 'items', x: 'name', series: [{ field: 'price', label: 'Price' }], title: 'Sales', height: 60 } },
        ],
      },
    ],
  },
  variables: [
    { name: 'number', type: 'string', required: true },
    { name: 'company', type: 'string', required: false, defaultValue: 'ACME' },
    { name: 'items', type: 'array', required: true, items: { type: 'object', properties: [{ name: 'name', type: 'string', required: true }, { name: 'price', type: 'number', required: true }] } },
  ],
  constants: { vat: 0.2 },
  calculatedVariables: [{ name: 'total', expression: '$sum(items.price)' }],
};

function typesIn(definition: Definition): Set<string> {
  const seen = new Set<string>();
  JSON.stringify(definition, (_k, v: unknown) => {
    if (v && typeof v === 'object' && 'type' in v && 'props' in v) seen.add(String((v as { type: unknown }).type));
    return v;
  });
  return seen;
}

function examples(): [string, Definition][] {
  return ['invoice', 'quote', 'report', 'certificate'].map((key) => {
    const file = JSON.parse(readFileSync(join(__dirname, '../../../docs/examples', `${key}.json`), 'utf8')) as { definition: Definition };
    return [key, file.definition];
  });
}

describe('designer model mapping', () => {
  it('holds one component of every type the catalogue lists, and the API accepts it', () => {
    expect([...typesIn(everyType)].sort()).toEqual(catalogue.map((c) => c.type).sort());
    const checked = validateTemplate(everyType as never, 'pdf');
    expect(checked.errors).toEqual([]);
  });

  it('maps every component type to Puck and back unchanged', () => {
    const document = toPuck(everyType, catalogue);
    expect(toDefinition(document, catalogue)).toEqual(everyType);
    // Through JSON too (Puck's state is plain data): nothing rides on object identity.
    expect(toDefinition(JSON.parse(JSON.stringify(document)), catalogue)).toEqual(everyType);
  });

  it.each(examples())('maps the %s example to Puck and back unchanged', (_key, definition) => {
    expect(sameDefinition(toDefinition(toPuck(definition, catalogue), catalogue), definition)).toBe(true);
    expect(toDefinition(toPuck(definition, catalogue), catalogue)).toEqual(definition);
  });

  it('gives every block an id unique in the document, sections apart from components', () => {
    const clash: Definition = { schema: { pageSize: 'A4', sections: [{ id: 'intro', components: [{ id: 'intro', type: 'text', props: { text: 'x' } }] }] } };
    const ids: string[] = [];
    JSON.stringify(toPuck(clash, catalogue), (_k, v: unknown) => {
      if (v && typeof v === 'object' && 'type' in v && 'props' in v) ids.push((v as Block).props.id);
      return v;
    });
    expect(ids).toEqual(['section~intro', 'intro']);
    expect(toDefinition(toPuck(clash, catalogue), catalogue)).toEqual(clash);
  });

  it('writes what the designer changed: a moved component, a cleared field, a new section and column', () => {
    const document = toPuck(everyType, catalogue);
    const sections = document.root.props.sections as Block[];
    const [first, second] = sections;
    const moved = (first.props.components as Block[]).splice(1, 1)[0];
    (second.props.components as Block[]).unshift(moved);
    // A cleared optional field is undefined in the editor's state: it is left out, not saved as null.
    (first.props.components as Block[])[0].props.title = undefined;
    sections.push({ type: 'section', props: { id: 'section-4f2a', components: [] } });
    const parties = (second.props.components as Block[]).find((b) => b.props.id === 'parties')!;
    (parties.props.columns as Block[]).push({ type: 'column', props: { id: 'column-9', components: [] } });
    const saved = toDefinition(document, catalogue) as { schema: { sections: { id: string; components: { id: string; props: Record<string, unknown> }[] }[] } };
    expect(saved.schema.sections.map((s) => s.id)).toEqual(['main', 'details', 'section-4f2a']);
    expect(saved.schema.sections[1].components[0].id).toBe('title');
    expect(saved.schema.sections[0].components[0].props).toEqual({ levels: 2 });
    const columns = saved.schema.sections[1].components.find((c) => c.id === 'parties')!.props.columns as unknown[];
    expect(columns).toHaveLength(4);
    expect(columns[3]).toEqual({ components: [] });
  });

  it('finds the component an API problem concerns, in containers, columns and the footer', () => {
    expect(problemOwner('schema.sections[1].components[1].props.columns[1].components[1].props.value', everyType)).toBe('code');
    expect(problemOwner('sections[1].components[0].props.components[0].props.components[0].props.text', everyType)).toBe('line-name');
    expect(problemOwner('schema.footer.components[0].props.text', everyType)).toBe('page');
    expect(problemOwner('schema.sections[1].title', everyType)).toBe('section~details');
    expect(problemOwner('schema.pageSize', everyType)).toBeUndefined();
    expect(problemOwner('variables[0].name', everyType)).toBeUndefined();
  });
});
