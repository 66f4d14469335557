import ExcelJS from 'exceljs';
import { AppError } from '../../domain/errors';
import { DEFAULT_WATERMARK, formatOptionsOf, limitsOf } from '../../domain/templates/build-html';
import type { DataContext } from '../../domain/templates/components/context';
import { imageSource } from '../../domain/templates/components/image';
import { keyValueCell, keyValueRows } from '../../domain/templates/components/key-value';
import { listItems } from '../../domain/templates/components/list';
import { qrcodePng, qrcodeText } from '../../domain/templates/components/qrcode';
import { isComponentType, normalizeProps } from '../../domain/templates/components/registry';
import { repeatScopes } from '../../domain/templates/components/repeat';
import { tableData } from '../../domain/templates/components/table';
import { toCellValue } from '../../domain/templates/format';
import { interpolateText, isRegexSpace } from '../../domain/templates/interpolate';
import { LoopBudget } from '../../domain/templates/loop-budget';
import type {
  Component,
  HeaderFooter,
  HeadingProps,
  ImageProps,
  KeyValueProps,
  ListProps,
  QrCodeProps,
  RenderLimits,
  RepeatProps,
  ResolvedData,
  TableProps,
  TemplateSchema,
  TextProps,
} from '../../domain/templates/template.types';
import { decodeDataImage, RowBudget, SheetWriter } from './excel-sheet';

/**
 * The same component tree as the PDF, as a workbook: one worksheet per section, tables as real
 * Excel tables, numbers, dates and booleans as typed cells. Excel has no page flow, so dividers
 * and spacers become blank rows and page breaks become print page breaks.
 */

export interface ExcelRenderOptions {
  limits?: Partial<RenderLimits>;
  imageAllowlist?: readonly string[];
  watermark?: boolean | string;
  title?: string;
}

const MM_TO_PX = 96 / 25.4;

function widthPx(width: ImageProps['width'], fallback?: number): number | undefined {
  if (typeof width === 'number') return Math.round(width * MM_TO_PX);
  const m = typeof width === 'string' ? /^(\d+(?:\.\d+)?)(mm|cm|in|px|pt)$/.exec(width) : null;
  if (!m) return fallback;
  const factor = { mm: MM_TO_PX, cm: MM_TO_PX * 10, in: 96, px: 1, pt: 96 / 72 }[m[2] as 'mm' | 'cm' | 'in' | 'px' | 'pt'];
  return Math.round(Number(m[1]) * factor);
}

interface Walk {
  writer: SheetWriter;
  ctx: DataContext;
  imageAllowlist: readonly string[];
}

async function writeComponents(components: Component[], w: Walk): Promise<void> {
  const { writer, ctx } = w;
  for (const c of components) {
    if (!isComponentType(c.type)) throw new AppError('ERR_TMPL_008', `Unknown component type '${String(c.type)}'`, { componentId: c.id });
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
        const { columns, rows } = tableData(c.id, props as unknown as TableProps, ctx);
        const formats = columns.map((col) => col.format);
        writer.table(c.id, columns.map((col) => col.header), rows.map((r) => r.map((v, i) => toCellValue(v, formats[i]))), formats);
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
      case 'qrcode': {
        const p = props as unknown as QrCodeProps;
        const text = qrcodeText(p, ctx);
        if (text) writer.image(decodeDataImage(`data:image/png;base64,${(await qrcodePng(text)).toString('base64')}`)!, widthPx(p.size, 113));
        break;
      }
      case 'repeat': {
        const p = props as unknown as RepeatProps;
        for (const scope of repeatScopes(c.id, p, ctx.scope, ctx.budget)) await writeComponents(p.components, { ...w, ctx: { ...ctx, scope } });
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

/** Excel header/footer codes: &L &C &R slots, &P page, &N pages; a literal & is doubled. */
function headerFooterCode(hf: HeaderFooter | undefined, scope: ResolvedData, o: ReturnType<typeof formatOptionsOf>, extraCenter?: string): string {
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

export async function renderExcel(schema: TemplateSchema, data: ResolvedData, options: ExcelRenderOptions = {}): Promise<Buffer> {
  const limits = limitsOf(options.limits);
  const format = formatOptionsOf(schema);
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'Formwork';
  workbook.created = new Date();
  if (options.title) workbook.title = options.title;
  const watermark = options.watermark === true ? DEFAULT_WATERMARK : options.watermark || undefined;
  if (watermark) workbook.subject = watermark;

  const rows = new RowBudget(limits.maxExcelRows);
  const budget = new LoopBudget(limits.maxLoopIterations);
  const names = new Set<string>();
  const tableNames = new Set<string>();
  for (const section of schema.sections) {
    const title = section.title ? interpolateText(section.title, data, format) : '';
    const sheet = workbook.addWorksheet(sheetName(title || section.id, names), {
      pageSetup: {
        // OOXML paper codes; ExcelJS's const enum omits Letter (1) and A3 (8).
        paperSize: ({ A4: 9, Letter: 1, Legal: 5, A3: 8, A5: 11 } as const)[schema.pageSize] as unknown as ExcelJS.PaperSize,
        orientation: schema.orientation ?? 'portrait',
        fitToPage: true,
        fitToWidth: 1,
        fitToHeight: 0,
      },
    });
    sheet.headerFooter.oddHeader = headerFooterCode(schema.header, data, format, watermark);
    sheet.headerFooter.oddFooter = headerFooterCode(schema.footer, data, format);
    const writer = new SheetWriter(workbook, sheet, rows, format, tableNames);
    if (title) {
      writer.heading(title, 1);
      writer.blank();
    }
    await writeComponents(section.components, { writer, ctx: { scope: data, format, budget }, imageAllowlist: options.imageAllowlist ?? [] });
    writer.finish();
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
