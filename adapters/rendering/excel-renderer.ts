import { PassThrough, type Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { AppError } from '../../domain/errors';
import { DEFAULT_WATERMARK, formatOptionsOf, limitsOf } from '../../domain/templates/build-html';
import { lengthMm, type DataContext } from '../../domain/templates/components/context';
import { barcodePng, barcodeText } from '../../domain/templates/components/barcode';
import { chartData, drawChartSvg, type ChartData } from '../../domain/templates/components/chart';
import { imageSource } from '../../domain/templates/components/image';
import { htmlTextLines, markdownTokens } from '../../domain/templates/components/rich-text';
import { keyValueCell, keyValueRows } from '../../domain/templates/components/key-value';
import { listItems } from '../../domain/templates/components/list';
import { qrcodePng, qrcodeText } from '../../domain/templates/components/qrcode';
import { anyComponent, childLists, isComponentType, normalizeProps } from '../../domain/templates/components/registry';
import { repeatScopes, repeatSegment } from '../../domain/templates/components/repeat';
import { bareDataPath } from '../../domain/templates/components/props';
import { themeCss } from '../../domain/templates/components/style';
import { tableCell, tableColumns, tableData } from '../../domain/templates/components/table';
import { toCellValue } from '../../domain/templates/format';
import { interpolateText, isRegexSpace } from '../../domain/templates/interpolate';
import { LoopBudget } from '../../domain/templates/loop-budget';
import type {
  Align,
  BarcodeProps,
  BoxProps,
  ChartProps,
  ColorValue,
  ColumnsProps,
  Component,
  PageArea,
  HeadingProps,
  HtmlProps,
  ImageProps,
  KeyValueProps,
  ListProps,
  MarkdownProps,
  QrCodeProps,
  RenderLimits,
  RepeatProps,
  ResolvedData,
  TableProps,
  TemplateSchema,
  TemplateTheme,
  TextProps,
  TextStyle,
  TocProps,
} from '../../domain/templates/template.types';
import {
  decodeDataImage,
  headingSize,
  RowBudget,
  SheetWriter,
  type BoxFrame,
  type CellStyle,
  type ImageInfo,
  type SheetMeasure,
  type SheetTarget,
  type TableRows,
} from './excel-sheet';
import { loadExcelJS, streamWorkbook } from './excel-stream-workbook';

/**
 * The same component tree as the PDF, as a workbook: one worksheet per section, tables as real
 * Excel tables, numbers, dates and booleans as typed cells. Excel has no page flow, so dividers
 * and spacers become blank rows and page breaks become print page breaks.
 *
 * Workbooks are written with ExcelJS's streaming writer, in two passes over the components: the
 * first measures (column widths, each table's rows, the row limit: ERR_LIMIT_003 before a byte is
 * written), the second writes and commits each row as it goes, so a 100,000-row table is never
 * held as cells. A table whose dataSource is a `RowSource` reads its rows in batches in both
 * passes, so they are never all held either. Workbooks with pictures (charts among them) use the
 * in-memory writer, which alone places images. Containers are cell ranges: `columns` side by side,
 * `box` framed by a border (excel-sheet.ts SheetWriter.columns, .box).
 */

/**
 * The elements of a top-level array variable, read in batches instead of held (a stored query
 * result): each call starts a fresh pass from the first element.
 */
export type RowSource = () => AsyncIterable<unknown[]>;

export interface ExcelRenderOptions {
  limits?: Partial<RenderLimits>;
  /** Paths of component instances whose `visibleIf` is false (domain/templates/visibility.ts). */
  hidden?: readonly string[];
  imageAllowlist?: readonly string[];
  /** The project's image assets the template names, as data URLs (render-assets.ts). */
  assetImages?: Readonly<Record<string, string>>;
  watermark?: boolean | string;
  title?: string;
}

const MM_TO_PX = 96 / 25.4;

/**
 * Chart pictures per workbook; later charts are their data table alone. Each costs up to a few
 * tenths of a second to rasterise (the system fonts are read for each) and its PNG stays in memory
 * until the workbook is written, so a chart in a long repeat must not multiply that unchecked.
 */
const MAX_CHART_PICTURES = 20;
/** A chart without a width of its own is as wide as an A4 page's text (170 mm). */
const CHART_WIDTH_PX = Math.round(170 * MM_TO_PX);
/** Widest a chart picture is shown (px): a wider `width` is drawn at this width. */
const CHART_MAX_WIDTH_PX = 960;
/** Pixels of one chart's PNG: twice the shown size for sharp zoom and print, less when that is more. */
const CHART_MAX_PIXELS = 2_500_000;
const CODE_FONT = 'Courier New';
const LINK_ARGB = 'FF0B5CAD';

type Resvg = typeof import('@resvg/resvg-js');
/** resvg, loaded when a chart is first drawn: a process that merely imports the renderer does not load the native module. */
const loadResvg = (): Resvg => require('@resvg/resvg-js') as Resvg;

function widthPx(width: ImageProps['width'], fallback?: number): number | undefined {
  const mm = lengthMm(width);
  return mm === undefined ? fallback : Math.round(mm * MM_TO_PX);
}

interface Walk {
  /** The instance path of the components being written (visibility.ts). */
  path: string;
  hidden: ReadonlySet<string>;
  writer: SheetWriter;
  ctx: DataContext;
  imageAllowlist: readonly string[];
  assetImages: Readonly<Record<string, string>>;
  sources: Readonly<Record<string, RowSource>>;
  /** The workbook's sheet names, one per section: what a table of contents lists. */
  sheetNames: readonly string[];
  /** The theme's colours by token (themeColors). */
  colors: ThemeColors;
  /** Chart pictures placed so far in this workbook (MAX_CHART_PICTURES). */
  charts: { pictures: number };
}

/** `#rrggbb` (or `#rgb`, `#rrggbbaa`) by theme token. */
type ThemeColors = Readonly<Record<string, string>>;

/** The theme's colours, its defaults filled in: read from the theme's CSS, the one place the defaults are spelled. */
function themeColors(theme: TemplateTheme | undefined): ThemeColors {
  const colors: Record<string, string> = {};
  for (const [, token, hex] of themeCss(theme, '').matchAll(/--fw-([a-z]+):(#[0-9a-fA-F]+)/g)) colors[token] = hex;
  return colors;
}

/** A colour prop as ExcelJS's ARGB: a token is the theme's colour, `transparent` none. */
function argb(value: ColorValue | undefined, colors: ThemeColors): string | undefined {
  if (!value || value === 'transparent') return undefined;
  const hex = (Object.prototype.hasOwnProperty.call(colors, value) ? colors[value] : value).slice(1);
  const full = hex.length === 3 ? [...hex].map((ch) => ch + ch).join('') : hex;
  return (full.length === 8 ? full.slice(6) + full.slice(0, 6) : `FF${full}`).toUpperCase();
}

const solid = (color: string): ExcelJS.Fill => ({ type: 'pattern', pattern: 'solid', fgColor: { argb: color } });

/** A font size (points, or a length with pt, px or mm) in points. */
function points(size: TextStyle['fontSize']): number | undefined {
  if (typeof size === 'number') return size;
  const mm = lengthMm(size);
  return mm === undefined ? undefined : Math.round(((mm * 72) / 25.4) * 10) / 10;
}

/** `align` and `style` as a cell's alignment, font and fill (what a cell can show of them: no margins, spacing or families). */
function cellStyle(style: TextStyle | undefined, align: Align | undefined, colors: ThemeColors): CellStyle {
  const font: Partial<ExcelJS.Font> = {};
  const size = points(style?.fontSize);
  if (size) font.size = size;
  if (style?.fontWeight !== undefined) font.bold = style.fontWeight === 'bold' || (typeof style.fontWeight === 'number' && style.fontWeight >= 600);
  if (style?.italic) font.italic = true;
  if (style?.underline) font.underline = true;
  const color = argb(style?.color, colors);
  if (color) font.color = { argb: color };
  const fill = argb(style?.background, colors);
  return {
    ...(Object.keys(font).length > 0 ? { font } : {}),
    ...(align ? { alignment: { horizontal: align } } : {}),
    ...(fill ? { fill: solid(fill) } : {}),
  };
}

/** Headings are in the theme's primary colour unless their style names one. */
function headingStyle(style: CellStyle, colors: ThemeColors): CellStyle {
  return { ...style, font: { color: { argb: argb('primary', colors) }, ...style.font } };
}

/** A box's border (none for `border: false`; thin, or medium from 0.6 mm; the theme's border colour by default) and background. */
function boxFrame(p: BoxProps, colors: ThemeColors): BoxFrame {
  const spec = p.border === false ? undefined : p.border === true || p.border === undefined ? {} : p.border;
  const fill = argb(p.background, colors);
  const style = spec?.style === 'dashed' || spec?.style === 'dotted' ? spec.style : (lengthMm(spec?.width) ?? 0.3) >= 0.6 ? 'medium' : 'thin';
  return {
    ...(spec ? { border: { style, color: { argb: argb(spec.color ?? 'border', colors) } } } : {}),
    ...(fill ? { fill: solid(fill) } : {}),
  };
}

/**
 * The chart as a PNG (resvg, the system's fonts for its text on a white ground): its `width` (at
 * most CHART_MAX_WIDTH_PX) and `height` shown, drawn at up to twice that within CHART_MAX_PIXELS.
 */
function chartPicture(p: ChartProps, data: ChartData, ctx: DataContext): { img: ImageInfo; widthPx: number } {
  const width = Math.min(CHART_MAX_WIDTH_PX, Math.max(120, widthPx(p.width, CHART_WIDTH_PX)!));
  const height = Math.round((p.height ?? 80) * MM_TO_PX);
  const scale = Math.min(2, Math.sqrt(CHART_MAX_PIXELS / (width * height)));
  const svg = drawChartSvg(p, data, ctx, width);
  const image = new (loadResvg().Resvg)(svg, { fitTo: { mode: 'width', value: Math.floor(width * scale) }, background: '#ffffff', font: { loadSystemFonts: true } }).render();
  return { img: { buffer: image.asPng(), extension: 'png', width: image.width, height: image.height }, widthPx: width };
}

type MarkdownToken = ReturnType<typeof markdownTokens>[number];

const sameFont = (a: Partial<ExcelJS.Font> | undefined, b: Partial<ExcelJS.Font> | undefined): boolean => JSON.stringify(a) === JSON.stringify(b);

/** `text` before the runs: part of the first run when it has the same look (a cell of one run is plain text). */
function prepend(runs: ExcelJS.RichText[], text: string, font: Partial<ExcelJS.Font>): void {
  if (runs.length > 0 && sameFont(runs[0].font, font)) runs[0] = { ...runs[0], text: text + runs[0].text };
  else runs.unshift({ text, font });
}

/** An inline token's children as lines (a hard break starts the next) of rich text runs: bold, italic, struck, code and links kept. */
function inlineRuns(children: MarkdownToken[], font: Partial<ExcelJS.Font>): ExcelJS.RichText[][] {
  const lines: ExcelJS.RichText[][] = [[]];
  const open = { strong: 0, em: 0, s: 0, link: 0 };
  const push = (text: string, code = false) => {
    const runFont: Partial<ExcelJS.Font> = {
      ...font,
      ...(open.strong > 0 ? { bold: true } : {}),
      ...(open.em > 0 ? { italic: true } : {}),
      ...(open.s > 0 ? { strike: true } : {}),
      ...(open.link > 0 ? { underline: true, color: { argb: LINK_ARGB } } : {}),
      ...(code ? { name: CODE_FONT } : {}),
    };
    const line = lines[lines.length - 1];
    const last = line[line.length - 1];
    // Neighbouring text of one look is one run (markdown-it splits text at soft breaks and the like).
    if (last && sameFont(last.font, runFont)) last.text += text;
    else if (text) line.push({ text, font: runFont });
  };
  for (const t of children) {
    const tag = t.type.replace(/_(open|close)$/, '') as keyof typeof open;
    if (t.nesting !== 0 && Object.prototype.hasOwnProperty.call(open, tag)) open[tag] += t.nesting;
    else if (t.type === 'text') push(t.content);
    else if (t.type === 'code_inline') push(t.content, true);
    else if (t.type === 'softbreak') push(' ');
    else if (t.type === 'hardbreak') lines.push([]);
  }
  return lines;
}

/**
 * Markdown as rows of rich text, from markdown-it's tokens: a row per paragraph, heading, list item,
 * code line (a hard break starts another), a markdown table's row as cells side by side. Headings
 * are bold, larger and in the theme's primary colour; list items start with a bullet or their
 * number; nested lists and quotes are indented.
 */
function writeMarkdown(writer: SheetWriter, tokens: MarkdownToken[], style: CellStyle, colors: ThemeColors): void {
  const base = style.font ?? {};
  const lists: boolean[] = [];
  let quotes = 0;
  let heading = 0;
  let marker: string | undefined;
  let tableRow: ExcelJS.RichText[][] | undefined;
  let header = false;
  const indented = (): CellStyle => {
    const indent = Math.max(0, lists.length - 1) + quotes;
    return indent > 0 ? { ...style, alignment: { ...style.alignment, indent } } : style;
  };
  for (const t of tokens) {
    switch (t.type) {
      case 'bullet_list_open':
      case 'ordered_list_open':
        lists.push(t.type === 'ordered_list_open');
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        break;
      case 'list_item_open':
        marker = lists[lists.length - 1] ? `${t.info}${t.markup} ` : '• ';
        break;
      case 'list_item_close':
        // An item with no text of its own still shows its bullet.
        if (marker) writer.richRow([[{ text: marker.trim(), font: base }]], indented());
        marker = undefined;
        break;
      case 'blockquote_open':
      case 'blockquote_close':
        quotes += t.nesting;
        break;
      case 'heading_open':
        heading = Number(t.tag.slice(1));
        break;
      case 'heading_close':
        heading = 0;
        break;
      case 'thead_open':
      case 'thead_close':
        header = t.nesting > 0;
        break;
      case 'tr_open':
        tableRow = [];
        break;
      case 'tr_close':
        writer.richRow(tableRow ?? [], indented());
        tableRow = undefined;
        break;
      case 'inline': {
        const font = heading > 0 ? { bold: true, size: headingSize(heading), color: { argb: argb('primary', colors) }, ...base } : header ? { ...base, bold: true } : base;
        const lines = inlineRuns(t.children ?? [], font);
        if (tableRow) {
          tableRow.push(lines.flat());
          break;
        }
        for (const runs of lines) {
          if (marker) prepend(runs, marker, base);
          marker = undefined;
          writer.richRow([runs], indented());
        }
        break;
      }
      case 'fence':
      case 'code_block':
        for (const line of t.content.replace(/\n$/, '').split('\n')) writer.richRow([[{ text: line, font: { ...base, name: CODE_FONT } }]], indented());
        break;
      case 'hr':
        writer.blank();
        break;
    }
  }
}

/** A streamed table's rows as cell values, the loop budget charged per batch. */
function sourceRows(source: RowSource, id: string, fields: string[], formats: TableProps['columns'][number]['format'][], ctx: DataContext): TableRows {
  return {
    async *batches() {
      for await (const batch of source()) {
        ctx.budget.consume(batch.length, id);
        yield batch.map((row) => fields.map((f, i) => toCellValue(tableCell(row, f), formats[i])));
      }
    },
  };
}

async function writeComponents(components: Component[], w: Walk): Promise<void> {
  const { writer, ctx } = w;
  for (const c of components) {
    if (!isComponentType(c.type)) throw new AppError('ERR_TMPL_008', `Unknown component type '${String(c.type)}'`, { componentId: c.id });
    if (w.hidden.has(w.path + c.id)) continue;
    const props = normalizeProps(c);
    switch (c.type) {
      case 'heading': {
        const p = props as unknown as HeadingProps;
        writer.heading(interpolateText(p.text, ctx.scope, ctx.format), p.level, headingStyle(cellStyle(p.style, p.align, w.colors), w.colors));
        break;
      }
      case 'text': {
        const p = props as unknown as TextProps;
        writer.text(interpolateText(p.text, ctx.scope, ctx.format), cellStyle(p.style, p.align, w.colors));
        break;
      }
      case 'table': {
        const p = props as unknown as TableProps;
        const styles = p.columns.map((col) => (col.align ? { alignment: { horizontal: col.align } } : undefined));
        const source = Object.prototype.hasOwnProperty.call(w.sources, bareDataPath(p.dataSource)) ? w.sources[bareDataPath(p.dataSource)] : undefined;
        if (source) {
          const columns = tableColumns(p, ctx);
          const formats = columns.map((col) => col.format);
          const fields = columns.map((col) => col.field);
          await writer.table(c.id, columns.map((col) => col.header), sourceRows(source, c.id, fields, formats, ctx), formats, styles);
          break;
        }
        const { columns, rows } = tableData(c.id, p, ctx);
        const formats = columns.map((col) => col.format);
        await writer.table(c.id, columns.map((col) => col.header), rows.map((r) => r.map((v, i) => toCellValue(v, formats[i]))), formats, styles);
        break;
      }
      case 'list': {
        const p = props as unknown as ListProps;
        writer.list(listItems(c.id, p, ctx), Boolean(p.ordered));
        break;
      }
      case 'keyValue': {
        const p = props as unknown as KeyValueProps;
        const entries = keyValueRows(p, ctx).map((r) => ({ ...r, value: keyValueCell(r) }));
        writer.keyValue(entries, cellStyle(p.style, p.align, w.colors), cellStyle(p.style, p.valueAlign ?? p.align, w.colors));
        break;
      }
      case 'image': {
        const p = props as unknown as ImageProps;
        const src = imageSource(p, { ...ctx, imageAllowlist: w.imageAllowlist, assetUrl: (id) => (Object.prototype.hasOwnProperty.call(w.assetImages, id) ? w.assetImages[id] : undefined) });
        const img = src ? decodeDataImage(src) : undefined;
        // Workbooks never fetch: a remote or unsupported image is represented by its alt text.
        if (img) writer.image(img, widthPx(p.width));
        else if (p.alt) writer.text(p.alt);
        break;
      }
      case 'chart': {
        // The chart as a picture, its data as a table under it.
        const p = props as unknown as ChartProps;
        const data = chartData(c.id, p, ctx);
        if (w.charts.pictures < MAX_CHART_PICTURES) {
          w.charts.pictures += 1;
          const { img, widthPx: shown } = chartPicture(p, data, ctx);
          writer.image(img, shown);
        }
        const headers = [p.x, ...data.series.map((s) => s.name)];
        const rows = data.categories.map((cat, i) => [cat, ...data.series.map((s) => s.values[i])]);
        await writer.table(c.id, headers, rows, [undefined, ...data.series.map(() => 'number' as const)]);
        break;
      }
      case 'markdown': {
        const p = props as unknown as MarkdownProps;
        writeMarkdown(writer, markdownTokens(p, ctx), cellStyle(p.style, p.align, w.colors), w.colors);
        break;
      }
      case 'html':
        for (const line of htmlTextLines(props as unknown as HtmlProps, ctx)) writer.text(line);
        break;
      case 'barcode': {
        const p = props as unknown as BarcodeProps;
        const text = barcodeText(p, ctx);
        if (text) writer.image(decodeDataImage(`data:image/png;base64,${(await barcodePng(c.id, p, text)).toString('base64')}`)!, widthPx(p.width, 227));
        break;
      }
      case 'qrcode': {
        const p = props as unknown as QrCodeProps;
        const text = qrcodeText(p, ctx);
        if (text) writer.image(decodeDataImage(`data:image/png;base64,${(await qrcodePng(text)).toString('base64')}`)!, widthPx(p.size, 113));
        break;
      }
      case 'repeat': {
        const p = props as unknown as RepeatProps;
        for (const [i, scope] of repeatScopes(c.id, p, ctx.scope, ctx.budget).entries()) {
          await writeComponents(p.components, { ...w, path: w.path + repeatSegment(c.id, i), ctx: { ...ctx, scope } });
        }
        break;
      }
      case 'columns':
        await writer.columns((props as unknown as ColumnsProps).columns.map((column) => () => writeComponents(column.components, w)));
        break;
      case 'box': {
        const p = props as unknown as BoxProps;
        await writer.box(() => writeComponents(p.components, w), boxFrame(p, w.colors));
        break;
      }
      case 'toc': {
        // A workbook has sheets, not pages: its table of contents links to each sheet.
        const p = props as unknown as TocProps;
        if (p.title) writer.heading(interpolateText(p.title, ctx.scope, ctx.format), 2, headingStyle({}, w.colors));
        writer.sheetLinks(w.sheetNames);
        break;
      }
      case 'divider':
      case 'spacer':
        writer.blank();
        break;
      case 'pageBreak':
        writer.pageBreak();
        break;
    }
  }
}

/**
 * A component area's words for a workbook's print header: its headings' and texts' text, joined, in
 * the centre slot (those `visibleIf` hides left out).
 */
function areaSlots(hf: PageArea | undefined, hidden: ReadonlySet<string>): PageArea | undefined {
  if (!hf?.components) return hf;
  const texts: string[] = [];
  const walk = (components: Component[]) => {
    for (const c of components) {
      if (hidden.has(c.id)) continue;
      const props = (c.props ?? {}) as Record<string, unknown>;
      if ((c.type === 'text' || c.type === 'heading') && typeof props.text === 'string') texts.push(props.text);
      if (isComponentType(c.type)) for (const children of childLists(c.type, props)) walk(children as Component[]);
    }
  };
  walk(hf.components);
  return { center: texts.join(' · ') };
}

/** Excel header/footer codes: &L &C &R slots, &P page, &N pages; a literal & is doubled. */
function headerFooterCode(hf: PageArea | undefined, scope: ResolvedData, o: ReturnType<typeof formatOptionsOf>, extraCenter?: string): string {
  const slot = (text: string | undefined) =>
    (text ?? '')
      .split(/(?<!\{)\{(pages?)\}(?!\})/)
      .map((part, i) => (i % 2 === 1 ? (part === 'page' ? '&P' : '&N') : interpolateText(part, scope, o).replace(/&/g, '&&')))
      .join('');
  const center = [slot(hf?.center), extraCenter?.replace(/&/g, '&&')].filter(Boolean).join(' · ');
  const parts = [hf?.left ? `&L${slot(hf.left)}` : '', center ? `&C${center}` : '', hf?.right ? `&R${slot(hf.right)}` : ''];
  return parts.join('');
}

/** Whitespace and apostrophes: what a worksheet name may not start or end with (Excel refuses `'` there). */
function isNameEdge(code: number): boolean {
  return code === 0x27 || isRegexSpace(code);
}

/** `text` without edge characters at either end: one scan from each side, no backtracking. */
function trimNameEdges(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isNameEdge(text.charCodeAt(start))) start += 1;
  while (end > start && isNameEdge(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(start, end);
}

/**
 * A valid, unique worksheet name: at most 31 characters, none of []:*?/\ , no apostrophe or
 * space at either end (also after the cut to 31). Linear in the title, which is tenant text
 * (the `/^'+|'+$/g` this replaces took seconds on a title of 100,000 apostrophes).
 */
export function sheetName(wanted: string, used: Set<string>): string {
  const base = trimNameEdges(trimNameEdges(wanted.replace(/[[\]:*?/\\]/g, ' ')).slice(0, 31)) || 'Sheet';
  let name = base;
  for (let n = 2; used.has(name.toLowerCase()); n++) name = `${trimNameEdges(base.slice(0, 31 - String(n).length - 1))} ${n}`;
  used.add(name.toLowerCase());
  return name;
}

/** Picture components anywhere in the tree (repeats included): they need the in-memory writer. */
function hasPictures(schema: TemplateSchema): boolean {
  return anyComponent(
    schema.sections.map((s) => s.components),
    (c) => c.type === 'image' || c.type === 'qrcode' || c.type === 'barcode' || c.type === 'chart',
  );
}

function isNameChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || code === 0x24;
}

/**
 * Whether `variable` can be a RowSource for this schema: no pictures, and the variable is named
 * nowhere but as the whole dataSource of section-level tables (a heading that counts it, a repeat
 * or list over it, a table inside a repeat all need the elements at hand). Conservative: any other
 * occurrence of the name as a word in the schema's text, even in plain prose, answers false, and
 * the caller then reads the rows into memory as before. Linear in the schema.
 */
export function canStreamVariable(schema: TemplateSchema, variable: string): boolean {
  if (hasPictures(schema) || variable === '') return false;
  let tables = 0;
  const rest = {
    ...schema,
    sections: schema.sections.map((s) => ({
      ...s,
      components: s.components.map((c) => {
        const props = (c.props ?? {}) as unknown as Partial<TableProps>;
        if (c.type !== 'table' || typeof props.dataSource !== 'string' || bareDataPath(props.dataSource) !== variable) return c;
        tables += 1;
        return { ...c, props: { ...c.props, dataSource: '' } };
      }),
    })),
  };
  if (tables === 0) return false;
  const text = JSON.stringify(rest);
  for (let at = text.indexOf(variable); at !== -1; at = text.indexOf(variable, at + 1)) {
    const before = at === 0 ? 0 : text.charCodeAt(at - 1);
    const after = at + variable.length >= text.length ? 0 : text.charCodeAt(at + variable.length);
    if (!isNameChar(before) && !isNameChar(after)) return false;
  }
  return true;
}

interface Pass {
  target: (section: number) => SheetTarget;
  sheet?: (section: number, title: string) => void;
}

/** One walk over the sections; the rows and loop budgets are the pass's own. */
async function walkSections(
  schema: TemplateSchema,
  data: ResolvedData,
  options: ExcelRenderOptions,
  sources: Readonly<Record<string, RowSource>>,
  sheetNames: readonly string[],
  pass: Pass,
): Promise<SheetMeasure[]> {
  const limits = limitsOf(options.limits);
  const format = formatOptionsOf(schema);
  const rows = new RowBudget(limits.maxExcelRows);
  const budget = new LoopBudget(limits.maxLoopIterations);
  const tableNames = new Set<string>();
  const hidden = new Set(options.hidden ?? []);
  const measures: SheetMeasure[] = [];
  const colors = themeColors(schema.theme);
  const charts = { pictures: 0 };
  for (const [i, section] of schema.sections.entries()) {
    const title = section.title ? interpolateText(section.title, data, format) : '';
    const writer = new SheetWriter(pass.target(i), rows, format, tableNames);
    if (title) {
      writer.heading(title, 1, headingStyle({}, colors));
      writer.blank();
    }
    const walk: Walk = { path: '', hidden, writer, ctx: { scope: data, format, budget }, imageAllowlist: options.imageAllowlist ?? [], assetImages: options.assetImages ?? {}, sources, sheetNames, colors, charts };
    await writeComponents(section.components, walk);
    measures.push(writer.finish());
  }
  return measures;
}

function sheetOptions(schema: TemplateSchema): Partial<ExcelJS.AddWorksheetOptions> {
  return {
    pageSetup: {
      // OOXML paper codes; ExcelJS's const enum omits Letter (1) and A3 (8).
      paperSize: ({ A4: 9, Letter: 1, Legal: 5, A3: 8, A5: 11 } as const)[schema.pageSize] as unknown as ExcelJS.PaperSize,
      orientation: schema.orientation ?? 'portrait',
      fitToPage: true,
      fitToWidth: 1,
      fitToHeight: 0,
    },
  };
}

/** The workbook's sheets: names and print headers and footers, the same for both writers. */
function sheetsOf(schema: TemplateSchema, data: ResolvedData, watermark: string | undefined, hidden: ReadonlySet<string>) {
  const format = formatOptionsOf(schema);
  const names = new Set<string>();
  return schema.sections.map((section) => {
    const title = section.title ? interpolateText(section.title, data, format) : '';
    const code = (area: PageArea | undefined, extra?: string) => headerFooterCode(areaSlots(area, hidden), data, format, extra);
    const differentFirst = Boolean(schema.header?.firstPage || schema.footer?.firstPage);
    return {
      name: sheetName(title || section.id, names),
      headerFooter: {
        oddHeader: code(schema.header, watermark),
        oddFooter: code(schema.footer),
        // A first-page variant prints on each sheet's first printed page (Excel's "different first page").
        ...(differentFirst
          ? { differentFirst, firstHeader: code(schema.header?.firstPage ?? schema.header, watermark), firstFooter: code(schema.footer?.firstPage ?? schema.footer) }
          : {}),
      },
    };
  });
}

function describe(workbook: { creator: string; created: Date; title: string; subject: string }, options: ExcelRenderOptions, watermark: string | undefined): void {
  workbook.creator = 'Formwork';
  workbook.created = new Date();
  if (options.title) workbook.title = options.title;
  if (watermark) workbook.subject = watermark;
}

/** Gives the zip and `out` a turn whenever `out` is full, so written XML never piles up in memory. */
function drained(out: Writable): () => Promise<void> {
  return async () => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (out.writableNeedDrain && !out.destroyed) await new Promise<void>((resolve) => out.once('drain', resolve).once('close', resolve));
  };
}

/**
 * Writes the workbook to `out` (ended when the workbook is complete) as it is built. `sources`
 * stream the named top-level array variables (see canStreamVariable; the caller checked).
 */
export async function renderExcelTo(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions, out: Writable, sources: Readonly<Record<string, RowSource>> = {}): Promise<void> {
  const watermark = options.watermark === true ? DEFAULT_WATERMARK : options.watermark || undefined;
  const sheets = sheetsOf(schema, data, watermark, new Set(options.hidden ?? []));
  const names = sheets.map((s) => s.name);
  if (hasPictures(schema)) {
    const workbook = new (loadExcelJS().Workbook)();
    describe(workbook, options, watermark);
    const targets = sheets.map((s): SheetTarget => {
      const sheet = workbook.addWorksheet(s.name, sheetOptions(schema));
      Object.assign(sheet.headerFooter, s.headerFooter);
      return { kind: 'memory', workbook, sheet };
    });
    await walkSections(schema, data, options, sources, names, { target: (i) => targets[i] });
    out.end(Buffer.from(await workbook.xlsx.writeBuffer()));
    return;
  }
  const measured = await walkSections(schema, data, options, sources, names, { target: () => ({ kind: 'measure' }) });
  const book = streamWorkbook(out);
  describe(book.workbook, options, watermark);
  const turn = drained(out);
  let open: ExcelJS.Worksheet | undefined;
  await walkSections(schema, data, options, sources, names, {
    target: (i) => {
      // A sheet is complete when the next one starts (the streaming writer writes one at a time).
      open?.commit();
      open = book.addWorksheet(sheets[i].name, sheetOptions(schema));
      Object.assign(open.headerFooter, sheets[i].headerFooter);
      return { kind: 'stream', book, sheet: open, measured: measured[i], turn };
    },
  });
  open?.commit();
  await book.workbook.commit();
}

/** The whole workbook as one buffer (documents: their variables are at hand). */
export async function renderExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions = {}): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => out.once('end', resolve).once('error', reject));
  await renderExcelTo(schema, data, options, out);
  await ended;
  return Buffer.concat(chunks);
}
