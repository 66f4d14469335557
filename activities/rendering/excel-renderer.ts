import { PassThrough, type Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { AppError } from '../../domain/errors';
import { DEFAULT_WATERMARK, formatOptionsOf, limitsOf } from '../../domain/templates/build-html';
import { lengthMm, type DataContext } from '../../domain/templates/components/context';
import { barcodePng, barcodeText } from '../../domain/templates/components/barcode';
import { chartData } from '../../domain/templates/components/chart';
import { imageSource } from '../../domain/templates/components/image';
import { htmlTextLines, markdownLines } from '../../domain/templates/components/rich-text';
import { keyValueCell, keyValueRows } from '../../domain/templates/components/key-value';
import { listItems } from '../../domain/templates/components/list';
import { qrcodePng, qrcodeText } from '../../domain/templates/components/qrcode';
import { anyComponent, childLists, isComponentType, normalizeProps } from '../../domain/templates/components/registry';
import { repeatScopes, repeatSegment } from '../../domain/templates/components/repeat';
import { bareDataPath } from '../../domain/templates/components/props';
import { tableCell, tableColumns, tableData } from '../../domain/templates/components/table';
import { toCellValue } from '../../domain/templates/format';
import { interpolateText, isRegexSpace } from '../../domain/templates/interpolate';
import { LoopBudget } from '../../domain/templates/loop-budget';
import type {
  BarcodeProps,
  ChartProps,
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
  TextProps,
  TocProps,
} from '../../domain/templates/template.types';
import { decodeDataImage, RowBudget, SheetWriter, type SheetMeasure, type SheetTarget, type TableRows } from './excel-sheet';
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
 * passes, so they are never all held either. Workbooks with pictures use the in-memory writer,
 * which alone places images.
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
  watermark?: boolean | string;
  title?: string;
}

const MM_TO_PX = 96 / 25.4;

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
  sources: Readonly<Record<string, RowSource>>;
  /** The workbook's sheet names, one per section: what a table of contents lists. */
  sheetNames: readonly string[];
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
        writer.heading(interpolateText(p.text, ctx.scope, ctx.format), p.level);
        break;
      }
      case 'text':
        writer.text(interpolateText((props as unknown as TextProps).text, ctx.scope, ctx.format));
        break;
      case 'table': {
        const p = props as unknown as TableProps;
        const source = Object.prototype.hasOwnProperty.call(w.sources, bareDataPath(p.dataSource)) ? w.sources[bareDataPath(p.dataSource)] : undefined;
        if (source) {
          const columns = tableColumns(p, ctx);
          const formats = columns.map((col) => col.format);
          const fields = columns.map((col) => col.field);
          await writer.table(c.id, columns.map((col) => col.header), sourceRows(source, c.id, fields, formats, ctx), formats);
          break;
        }
        const { columns, rows } = tableData(c.id, p, ctx);
        const formats = columns.map((col) => col.format);
        await writer.table(c.id, columns.map((col) => col.header), rows.map((r) => r.map((v, i) => toCellValue(v, formats[i]))), formats);
        break;
      }
      case 'list': {
        const p = props as unknown as ListProps;
        writer.list(listItems(c.id, p, ctx), Boolean(p.ordered));
        break;
      }
      case 'keyValue':
        writer.keyValue(keyValueRows(props as unknown as KeyValueProps, ctx).map((r) => ({ ...r, value: keyValueCell(r) })));
        break;
      case 'image': {
        const p = props as unknown as ImageProps;
        const src = imageSource(p, { ...ctx, imageAllowlist: w.imageAllowlist });
        const img = src ? decodeDataImage(src) : undefined;
        // Workbooks never fetch: a remote or unsupported image is represented by its alt text.
        if (img) writer.image(img, widthPx(p.width));
        else if (p.alt) writer.text(p.alt);
        break;
      }
      case 'chart': {
        // The chart's data as a table (the picture of the chart in a workbook is still to come).
        const p = props as unknown as ChartProps;
        const data = chartData(c.id, p, ctx);
        const headers = [p.x, ...data.series.map((s) => s.name)];
        const rows = data.categories.map((cat, i) => [cat, ...data.series.map((s) => s.values[i])]);
        await writer.table(c.id, headers, rows, [undefined, ...data.series.map(() => 'number' as const)]);
        break;
      }
      case 'markdown':
        for (const line of markdownLines(props as unknown as MarkdownProps, ctx)) writer.text(line);
        break;
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
      // Containers in a workbook: their children in order, one column's after the other's (docs/templates.md "In workbooks").
      case 'columns':
      case 'box':
        for (const children of childLists(c.type, props)) await writeComponents(children as Component[], w);
        break;
      case 'toc': {
        // A workbook has sheets, not pages: its table of contents links to each sheet.
        const p = props as unknown as TocProps;
        if (p.title) writer.heading(interpolateText(p.title, ctx.scope, ctx.format), 2);
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
    (c) => c.type === 'image' || c.type === 'qrcode' || c.type === 'barcode',
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
  for (const [i, section] of schema.sections.entries()) {
    const title = section.title ? interpolateText(section.title, data, format) : '';
    const writer = new SheetWriter(pass.target(i), rows, format, tableNames);
    if (title) {
      writer.heading(title, 1);
      writer.blank();
    }
    await writeComponents(section.components, { path: '', hidden, writer, ctx: { scope: data, format, budget }, imageAllowlist: options.imageAllowlist ?? [], sources, sheetNames });
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
