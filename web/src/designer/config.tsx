import type { ComponentConfig, Config, Field, Fields, Slot } from '@puckeditor/core';
import { createContext, useContext, type ReactNode } from 'react';
import { JsonField } from '../JsonField';
import { fieldFor, fieldsFor, labelOf, pictureField } from './fields';
import { COLUMN, SECTION, type ComponentTypeInfo, type JsonSchema } from './model';

/**
 * Puck's configuration built from the component catalogue (GET /api/templates/component-types):
 * one block per component type with fields generated from its props schema, `section` and `column`
 * blocks for the template's sections and a `columns` component's columns, and the root holding the
 * page settings, header, footer, variables, constants and calculated variables. What a block draws
 * in the canvas is a sketch of its structure; the PDF beside it is the truth.
 */

/** Problems the API reported, by the id of the block they concern (model.ts problemOwner). */
export const ProblemsContext = createContext<ReadonlyMap<string, string[]>>(new Map());

type Props = Record<string, unknown> & { id: string };
type SlotRender = Slot extends unknown ? (props: { className?: string; minEmptyHeight?: number }) => ReactNode : never;

function Sketch({ id, label, children }: { id: string; label: string; children?: ReactNode }) {
  const problems = useContext(ProblemsContext).get(id);
  return (
    <div className="sketch" data-invalid={problems ? 'true' : undefined}>
      <div className="sketch-label">{label}</div>
      {children}
      {problems && (
        <ul className="sketch-problems" aria-label={`Problems of ${id}`}>
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

/** What each type draws in the canvas: its texts, or a line saying what it is. */
function sketchOf(type: string, p: Props): ReactNode {
  switch (type) {
    case 'heading':
      return <div className={`sketch-heading sketch-h${Number(p.level ?? 1)}`}>{str(p.text)}</div>;
    case 'text':
    case 'markdown':
      return <div className="sketch-text">{str(p.text)}</div>;
    case 'html':
      return <div className="sketch-text">{str(p.html)}</div>;
    case 'table': {
      const columns = Array.isArray(p.columns) ? (p.columns as { header?: string }[]) : [];
      return (
        <div className="sketch-table">
          {columns.map((c, i) => (
            <span key={i}>{c.header}</span>
          ))}
          <em>a row per element of {str(p.dataSource)}</em>
        </div>
      );
    }
    case 'image':
      return <div className="sketch-box">Picture: {str(p.alt) || str(p.src).slice(0, 40)}</div>;
    case 'list':
      return <div className="sketch-text">{Array.isArray(p.items) ? (p.items as unknown[]).map(str).join(' · ') : `an item per element of ${str(p.items)}`}</div>;
    case 'keyValue':
      return (
        <div className="sketch-text">
          {(Array.isArray(p.items) ? (p.items as { label?: string; value?: string }[]) : []).map((i, n) => (
            <div key={n}>
              {i.label}: {i.value}
            </div>
          ))}
        </div>
      );
    case 'divider':
      return <hr className="sketch-rule" />;
    case 'pageBreak':
      return <div className="sketch-break">page break</div>;
    case 'spacer':
      return <div className="sketch-box">space of {str(p.height) || '10mm'}</div>;
    case 'qrcode':
      return <div className="sketch-box">QR code of {str(p.value)}</div>;
    case 'barcode':
      return <div className="sketch-box">{str(p.symbology)} barcode of {str(p.value)}</div>;
    case 'chart':
      return <div className="sketch-box">{str(p.chartType)} chart of {str(p.dataSource)}{p.title ? `: ${str(p.title)}` : ''}</div>;
    case 'toc':
      return <div className="sketch-box">{str(p.title) || 'Table of contents'}</div>;
    default:
      return null;
  }
}

/** Values a block starts with when it is added from the palette: valid where the type allows. */
const DEFAULTS: Record<string, Record<string, unknown>> = {
  heading: { text: 'Heading', level: 2 },
  text: { text: 'Text' },
  markdown: { text: '**Bold** and _italic_' },
  html: { html: '<p>Text</p>' },
  table: { dataSource: 'items', columns: [{ header: 'Name', field: 'name' }] },
  image: { src: '', alt: 'Picture' },
  list: { items: ['First item'] },
  keyValue: { items: [{ label: 'Label', value: 'Value' }] },
  spacer: { height: '10mm' },
  qrcode: { value: 'https://example.com' },
  barcode: { value: '123456', symbology: 'code128' },
  chart: { chartType: 'bar', dataSource: 'items', x: 'name', series: [{ field: 'value' }] },
  repeat: { dataSource: 'items', components: [] },
  box: { components: [] },
  columns: { columns: [{ type: COLUMN, props: { components: [] } }, { type: COLUMN, props: { components: [] } }] },
};

/** Where blocks may go: sections only at the top, columns only in a `columns`, components anywhere else. */
const inComponents: Field = { type: 'slot', disallow: [SECTION, COLUMN] };

function componentConfig(info: ComponentTypeInfo): ComponentConfig<Props> {
  const slots = info.children === 'components' ? ['components'] : info.children === 'columns' ? ['columns'] : [];
  const fields: Fields = fieldsFor(info.props, slots);
  if (info.children === 'components') fields.components = inComponents;
  if (info.children === 'columns') fields.columns = { type: 'slot', allow: [COLUMN] };
  if (info.type === 'image') fields.src = pictureField;
  return {
    label: labelOf(info.type),
    fields: fields as ComponentConfig<Props>['fields'],
    defaultProps: (DEFAULTS[info.type] ?? {}) as Props,
    render: (props) => {
      const p = props as unknown as Props;
      const label = `${labelOf(info.type)} · ${p.id}`;
      if (info.children === 'components') {
        const Components = p.components as unknown as SlotRender;
        const repeat = info.type === 'repeat' ? ` for each ${str(p.as) || 'item'} of ${str(p.dataSource)}` : '';
        return (
          <Sketch id={p.id} label={label + repeat}>
            <Components className="sketch-slot" minEmptyHeight={40} />
          </Sketch>
        );
      }
      if (info.children === 'columns') {
        const Columns = p.columns as unknown as SlotRender;
        return (
          <Sketch id={p.id} label={label}>
            <Columns className="sketch-columns" minEmptyHeight={40} />
          </Sketch>
        );
      }
      return (
        <Sketch id={p.id} label={label}>
          {sketchOf(info.type, p)}
        </Sketch>
      );
    },
  };
}

const sectionConfig: ComponentConfig<Props> = {
  label: 'Section',
  fields: {
    sectionId: fieldFor('sectionId', { type: 'string' }, false),
    title: fieldFor('title', { type: 'string' }, false),
    components: inComponents,
  } as ComponentConfig<Props>['fields'],
  render: (props) => {
    const p = props as unknown as Props;
    const Components = p.components as unknown as SlotRender;
    return (
      <Sketch id={p.id} label={`Section · ${str(p.title) || str(p.sectionId) || 'new'}`}>
        <Components className="sketch-slot" minEmptyHeight={60} />
      </Sketch>
    );
  },
};

const widthSchema: JsonSchema = { anyOf: [{ type: 'string' }, { type: 'number' }] };
const columnConfig: ComponentConfig<Props> = {
  label: 'Column',
  fields: { width: fieldFor('width', widthSchema, false), components: inComponents } as ComponentConfig<Props>['fields'],
  render: (props) => {
    const p = props as unknown as Props;
    const Components = p.components as unknown as SlotRender;
    return (
      <div className="sketch-column">
        <Components className="sketch-slot" minEmptyHeight={40} />
      </div>
    );
  },
};

const lengthSchema: JsonSchema = { anyOf: [{ type: 'number' }, { type: 'string' }] };
const THEME_COLORS = ['primary', 'text', 'muted', 'border', 'background'] as const;
const themeSchema: JsonSchema = {
  type: 'object',
  properties: {
    fontFamily: { type: 'string' },
    fontSize: { type: 'number', minimum: 4, maximum: 96 },
    colors: { type: 'object', properties: Object.fromEntries(THEME_COLORS.map((c) => [c, { type: 'string', format: 'color' }])) },
  },
};
const marginsSchema: JsonSchema = { type: 'object', properties: Object.fromEntries(['top', 'right', 'bottom', 'left'].map((side) => [side, lengthSchema])) };
const areaTextSchema: JsonSchema = { type: 'object', properties: { left: { type: 'string' }, center: { type: 'string' }, right: { type: 'string' } } };

function areaFields(area: 'header' | 'footer'): Fields {
  const name = labelOf(area);
  return {
    [`${area}Form`]: {
      type: 'select',
      label: name,
      options: [
        { label: `No ${area}`, value: 'none' },
        { label: 'Three texts (left, centre, right)', value: 'text' },
        { label: 'Components', value: 'components' },
      ],
    },
    [`${area}Text`]: fieldFor(`${area}Text`, areaTextSchema, false),
    [area]: inComponents,
    [`${area}FirstPage`]: {
      type: 'custom',
      label: `${name} on the first page`,
      render: ({ value, onChange, readOnly }) => <JsonField label={`${name} on the first page`} description="JSON: texts or components; empty prints the same as the other pages" value={value} onChange={onChange} readOnly={readOnly} />,
    },
  };
}

const variableItem: JsonSchema = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean', 'date', 'array', 'object', 'image'] },
    required: { type: 'boolean' },
    description: { type: 'string' },
    defaultValue: {},
    items: {},
  },
};

function Page({ children }: { children: ReactNode }) {
  return <div className="sketch-page">{children}</div>;
}

/** The designer's Puck configuration for a catalogue. */
export function designerConfig(catalogue: readonly ComponentTypeInfo[]): Config {
  const components: Record<string, ComponentConfig<Props>> = { [SECTION]: sectionConfig, [COLUMN]: columnConfig };
  for (const info of catalogue) components[info.type] = componentConfig(info);
  const byGroup = (types: string[]) => types.filter((t) => t in components);
  return {
    categories: {
      text: { title: 'Text', components: byGroup(['heading', 'text', 'markdown', 'html', 'list', 'keyValue', 'toc']) },
      data: { title: 'Data', components: byGroup(['table', 'chart', 'repeat']) },
      layout: { title: 'Layout', components: byGroup([SECTION, 'columns', COLUMN, 'box', 'divider', 'spacer', 'pageBreak']) },
      media: { title: 'Pictures and codes', components: byGroup(['image', 'qrcode', 'barcode']) },
    },
    components: components as Config['components'],
    root: {
      fields: {
        pageSize: { type: 'select', label: 'Page size', options: ['A4', 'Letter', 'Legal', 'A3', 'A5'].map((v) => ({ label: v, value: v })) },
        orientation: fieldFor('orientation', { type: 'string', enum: ['portrait', 'landscape'] }, false),
        margins: fieldFor('margins', marginsSchema, false),
        theme: fieldFor('theme', themeSchema, false),
        locale: fieldFor('locale', { type: 'string' }, false),
        currency: fieldFor('currency', { type: 'string' }, false),
        ...areaFields('header'),
        ...areaFields('footer'),
        variables: fieldFor('variables', { type: 'array', items: variableItem }, false),
        constants: fieldFor('constants', { type: 'object' }, false),
        calculatedVariables: fieldFor('calculatedVariables', { type: 'array', items: { type: 'object', required: ['name', 'expression'], properties: { name: { type: 'string' }, expression: { type: 'string' } } } }, false),
        css: fieldFor('css', { type: 'string' }, false),
        sections: { type: 'slot', allow: [SECTION] },
      } as Fields,
      render: (props: Record<string, unknown>) => {
        const p = props;
        const Header = p.header as SlotRender;
        const Sections = p.sections as SlotRender;
        const Footer = p.footer as SlotRender;
        return (
          <Page>
            {p.headerForm === 'components' && (
              <div className="sketch-area">
                <div className="sketch-label">Header</div>
                <Header className="sketch-slot" minEmptyHeight={30} />
              </div>
            )}
            <Sections className="sketch-sections" minEmptyHeight={80} />
            {p.footerForm === 'components' && (
              <div className="sketch-area">
                <div className="sketch-label">Footer</div>
                <Footer className="sketch-slot" minEmptyHeight={30} />
              </div>
            )}
          </Page>
        );
      },
    },
  };
}
