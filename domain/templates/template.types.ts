/**
 * The template definition (contract §3). Stored as JSON; validated by template.schema.ts before
 * it is saved, and trusted by the renderers only after that validation.
 */

export const PAGE_SIZES = ['A4', 'Letter', 'Legal', 'A3', 'A5'] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

export const VARIABLE_TYPES = ['string', 'number', 'integer', 'boolean', 'date', 'array', 'object', 'image'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export type TemplateType = 'pdf' | 'excel';

/** CSS lengths (`20mm`, `0.5in`, `12px`) or plain numbers read as millimetres. */
export type Length = string | number;

export interface Margins {
  top?: Length;
  right?: Length;
  bottom?: Length;
  left?: Length;
}

/**
 * What a page header or footer prints: three interpolated text slots (`{page}` and `{pages}` become
 * the current page number and the page count, filled in by Chromium at print time), or a full-width
 * component area (docs/templates.md "Header and footer"): any components, `{page}` and `{pages}` in
 * their texts.
 */
export interface PageArea {
  left?: string;
  center?: string;
  right?: string;
  components?: Component[];
}

/** A page header or footer, with an optional variant printed on the first page instead. */
export interface HeaderFooter extends PageArea {
  firstPage?: PageArea;
}

export interface Component {
  id: string;
  type: ComponentType;
  props: Record<string, unknown>;
}

export interface Section {
  id: string;
  title?: string;
  components: Component[];
}

/** Text alignment of text-bearing components and table columns. */
export type Align = 'left' | 'center' | 'right' | 'justify';

/** A colour: `#rgb`, `#rrggbb`, `#rrggbbaa`, `transparent`, or a theme token. */
export type ColorValue = string;

/** The documented style set of text-bearing components and containers (components/style.ts). */
export interface TextStyle {
  /** Points, or a length with pt, px or mm. */
  fontSize?: number | string;
  fontWeight?: 'normal' | 'bold' | number;
  italic?: boolean;
  underline?: boolean;
  uppercase?: boolean;
  fontFamily?: string;
  color?: ColorValue;
  background?: ColorValue;
  lineHeight?: number;
  letterSpacing?: string;
  marginTop?: Length;
  marginBottom?: Length;
  padding?: Length;
}

/** The schema-level theme: the whole document's font and colours, which `style` colours may name. */
export interface TemplateTheme {
  fontFamily?: string;
  /** Points. */
  fontSize?: number;
  colors?: Partial<Record<'primary' | 'text' | 'muted' | 'border' | 'background', string>>;
}

export interface TemplateSchema {
  pageSize: PageSize;
  theme?: TemplateTheme;
  /** The author's own CSS, after the stylesheet and the theme (checked by components/style.ts `cssSchema`). */
  css?: string;
  orientation?: 'portrait' | 'landscape';
  margins?: Margins;
  header?: HeaderFooter;
  footer?: HeaderFooter;
  /** BCP 47 tag used to format numbers, currencies and dates; default `en-US`. */
  locale?: string;
  /** ISO 4217 code for the `currency` format; default `USD`. */
  currency?: string;
  /** Seen in stored templates of the original product; informational only. */
  format?: string;
  /**
   * The project's PDF assets appended, in order, after every PDF this template renders (terms and
   * conditions; docs/documents.md "Merging and appended PDFs"). Checked as the project's PDF assets when saved.
   */
  appendPdfs?: string[];
  sections: Section[];
}

/** Describes one field of an array element or object (for tables, loops and automation fields). */
export interface VariableField {
  name: string;
  type: VariableType;
  required?: boolean;
  description?: string;
}

export interface ArrayItems {
  type: VariableType;
  properties?: VariableField[];
}

export interface TemplateVariable {
  name: string;
  type: VariableType;
  required: boolean;
  defaultValue?: unknown;
  description?: string;
  items?: ArrayItems;
}

export interface CalculatedVariable {
  name: string;
  /** JSONata, evaluated over variables + constants + earlier calculated variables. */
  expression: string;
}

export type Constants = Record<string, unknown>;

export interface TemplateDefinition {
  schema: TemplateSchema;
  variables?: TemplateVariable[];
  constants?: Constants;
  calculatedVariables?: CalculatedVariable[];
}

export const COMPONENT_TYPES = [
  'heading',
  'text',
  'table',
  'image',
  'list',
  'keyValue',
  'divider',
  'spacer',
  'pageBreak',
  'qrcode',
  'repeat',
  'columns',
  'box',
  'barcode',
  'markdown',
  'html',
  'chart',
  'toc',
] as const;
export type ComponentType = (typeof COMPONENT_TYPES)[number];

export const COLUMN_FORMATS = ['number', 'currency', 'date', 'percent', 'boolean'] as const;
export type ColumnFormat = (typeof COLUMN_FORMATS)[number];

export interface TableColumn {
  header: string;
  field: string;
  format?: ColumnFormat;
  align?: Align;
}

/** What every text-bearing component takes beside its own props. */
export interface Styled {
  align?: Align;
  style?: TextStyle;
}

export interface HeadingProps extends Styled {
  text: string;
  level: 1 | 2 | 3 | 4 | 5 | 6;
}
export interface TextProps extends Styled {
  text: string;
}
export interface TableProps {
  dataSource: string;
  columns: TableColumn[];
  /** Rows never split across pages (default true). */
  keepRowsTogether?: boolean;
  style?: TextStyle;
}
export interface ImageProps {
  src: string;
  width?: Length;
  alt?: string;
}
export interface ListProps {
  items: string | unknown[];
  ordered?: boolean;
  field?: string;
}
export interface KeyValueProps extends Styled {
  items: Array<{ label: string; value: unknown; format?: ColumnFormat }>;
  /** Alignment of the value column (labels stay left). */
  valueAlign?: Align;
}
export interface SpacerProps {
  height: Length;
}
export interface QrCodeProps {
  value: string;
  size?: Length;
}
export interface TocProps {
  /** Heading levels listed: 1 to `levels` (default 3). */
  levels: number;
  title?: string;
}

export interface ChartProps {
  chartType: 'bar' | 'line' | 'pie' | 'area';
  dataSource: string;
  /** The field of each row that names its category (x axis, pie slice). */
  x: string;
  series: Array<{ field: string; label?: string }>;
  title?: string;
  width?: Length;
  /** Millimetres. */
  height?: number;
}
export interface MarkdownProps extends Styled {
  text: string;
}
export interface HtmlProps {
  html: string;
  style?: TextStyle;
}
export interface BarcodeProps {
  value: string;
  symbology: 'code128' | 'ean13' | 'upca' | 'qrcode' | 'datamatrix' | 'pdf417';
  width?: Length;
  height?: number;
  showText?: boolean;
}
export interface ColumnsProps {
  columns: Array<{ width?: Length; components: Component[] }>;
  gap?: Length;
  style?: TextStyle;
}
export interface BoxProps {
  components: Component[];
  padding?: Length;
  border?: boolean | { width?: Length; color?: ColorValue; style?: 'solid' | 'dashed' | 'dotted' };
  background?: ColorValue;
  radius?: Length;
  style?: TextStyle;
}
/** Props every component takes (components/registry.ts `COMMON_PROPS`). */
export interface CommonProps {
  /** The component is not split across pages (it moves to the next page whole when it fits). */
  keepTogether?: boolean;
  /** A page break before or after the component. */
  pageBreak?: 'before' | 'after';
}
export interface RepeatProps {
  dataSource: string;
  /** Name the current element is bound to; default `item` (rename it for nested loops). */
  as?: string;
  components: Component[];
}

/** Containers (repeat, columns, box) inside one another: at most this many levels (repeats alone: 5). */
export const MAX_NESTING_DEPTH = 8;

export interface RenderLimits {
  maxPdfPages: number;
  maxExcelRows: number;
  maxLoopIterations: number;
  /** Largest HTML (UTF-8 bytes, page plus header and footer) a template may produce for Chromium (ERR_LIMIT_009). */
  maxHtmlBytes: number;
  /** Largest rendered file (PDF or XLSX bytes) a render may return (ERR_LIMIT_011). */
  maxOutputBytes: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  maxPdfPages: 200,
  maxExcelRows: 100_000,
  maxLoopIterations: 10_000,
  maxHtmlBytes: 10 * 1024 * 1024,
  maxOutputBytes: 50 * 1024 * 1024,
};

export interface ValidationIssue {
  path: string;
  message: string;
}

export interface ValidationResult {
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
}

/** Variables, constants and calculated values after resolution: what `{{path}}` reads. */
export type ResolvedData = Record<string, unknown>;
