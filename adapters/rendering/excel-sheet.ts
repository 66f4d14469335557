import type ExcelJS from 'exceljs';
import { AppError } from '../../domain/errors';
import { excelNumFmt, roundCurrency, type CellValue, type FormatOptions, formatValue } from '../../domain/templates/format';
import type { ColumnFormat } from '../../domain/templates/template.types';
import { loadExcelJS, type StreamWorkbook } from './excel-stream-workbook';

/**
 * Writes rows into one worksheet top to bottom, keeping what Excel needs: column widths fitted to
 * the content, unique table names, and the workbook-wide row limit.
 */

/** Rows written across the whole workbook; the limit bounds the work, not just one sheet. */
export class RowBudget {
  private used = 0;

  constructor(readonly max: number) {}

  take(n: number): void {
    this.used += n;
    if (this.used > this.max) {
      throw new AppError('ERR_LIMIT_003', `Workbook exceeds the limit of ${this.max} rows`, { limit: this.max });
    }
  }
}

const HEADING_SIZES = [18, 15, 13, 12, 11, 11];
const PX_PER_ROW = 20;
/** Excel's default column (8.43 characters): how many columns a picture is taken to cover. */
const PX_PER_COLUMN = 64;
const MIN_WIDTH = 8;
const MAX_WIDTH = 60;
/** Streamed table rows between yields: the zip and the output catch up, so unwritten XML never piles up. */
const ROWS_PER_TURN = 500;

/** A heading's font size in points, by level (1–6). */
export const headingSize = (level: number): number => HEADING_SIZES[Math.min(5, Math.max(0, level - 1))];

export interface ImageInfo {
  buffer: Buffer;
  extension: 'png' | 'jpeg' | 'gif';
  width: number;
  height: number;
}

/** How a cell looks beyond its value: a component's `align` and `style` (excel-renderer.ts `cellStyle`). */
export interface CellStyle {
  font?: Partial<ExcelJS.Font>;
  alignment?: Partial<ExcelJS.Alignment>;
  fill?: ExcelJS.Fill;
}

/** A box's frame: the border sides' look and the fill of its range. */
export interface BoxFrame {
  border?: Partial<ExcelJS.Border>;
  fill?: ExcelJS.Fill;
}

/** A table's rows: all at hand, or batches read as they come (a stored query result), once per pass. */
export type TableRows = CellValue[][] | { batches(): AsyncIterable<CellValue[][]> };

/**
 * Where a SheetWriter's rows go. `memory`: ExcelJS's in-memory workbook (workbooks with pictures,
 * which the streaming writer cannot place). `measure`: nowhere; the first of two passes, which
 * finds the column widths and each table's row count, since a streamed sheet must write its
 * widths before its first row. `stream`: the second pass, into the streaming writer, each row
 * committed once the next one starts (the last stays open for a page break).
 */
export type SheetTarget =
  | { kind: 'memory'; workbook: ExcelJS.Workbook; sheet: ExcelJS.Worksheet }
  | { kind: 'measure' }
  | { kind: 'stream'; book: StreamWorkbook; sheet: ExcelJS.Worksheet; measured: SheetMeasure; turn: () => Promise<void> };

/** What the measuring pass of one sheet found. */
export interface SheetMeasure {
  widths: number[];
  /** Data rows of each table, in the order they were written. */
  tableRows: number[];
}

/**
 * Containers (`columns`, `box`) write blocks: a block starts at the current row, `left` columns in
 * from column A, and is as wide as the rightmost column it wrote. Side-by-side columns write one
 * block after the other from the same top row, so rows are not finished in order; the in-memory
 * sheet takes cells anywhere, but a streamed sheet only goes down, so while a container is open
 * its cells go to a scratch sheet (`held`), emitted in row order when the outermost container
 * closes. What is held is bounded by the row limit: each block's rows count (a measuring pass has
 * refused more before the streaming pass holds any), and a stored query result (a RowSource) is
 * only ever a section-level table, never inside a container (canStreamVariable).
 */
export class SheetWriter {
  private row = 1;
  /** Columns left of the current block (0: the block starts in column A). */
  private left = 0;
  /** The rightmost column written since the current block started. */
  private right = 0;
  /** Containers open around the current component. */
  private depth = 0;
  /** Streaming only: the rows of the open containers, until they close. */
  private held: ExcelJS.Worksheet | undefined;
  private readonly widths: number[] = [];
  private readonly tableRows: number[] = [];
  private tableIndex = 0;

  constructor(
    private readonly target: SheetTarget,
    private readonly rows: RowBudget,
    private readonly format: FormatOptions,
    private readonly tableNames: Set<string>,
  ) {
    if (target.kind === 'stream') applyWidths(target.sheet, target.measured.widths);
  }

  /** The row to write next, or undefined while measuring. */
  private nextRow(): ExcelJS.Row | undefined {
    this.rows.take(1);
    return this.rowAt(this.row++);
  }

  private rowAt(n: number): ExcelJS.Row | undefined {
    const t = this.target;
    if (t.kind === 'measure') return undefined;
    if (this.held) return this.held.getRow(n);
    if (t.kind === 'stream') {
      // Rows before the previous one are final: commit them (ExcelJS commits every earlier row too).
      const done = (t.sheet as unknown as { findRow(n: number): ExcelJS.Row | undefined }).findRow(n - 2);
      done?.commit();
    }
    return t.sheet.getRow(n);
  }

  /** Column `c` of the current block as a sheet column, noted as used (the same in every pass: blocks are placed by it). */
  private col(c: number): number {
    const col = this.left + c;
    this.right = Math.max(this.right, col);
    return col;
  }

  private fit(col: number, text: string): void {
    const longest = text.includes('\n') ? Math.max(...text.split('\n').map((l) => l.length)) : text.length;
    this.widths[col] = Math.max(this.widths[col] ?? 0, longest);
  }

  /**
   * Prose (headings, text) overflows into the empty cells to its right and so leaves column A's
   * width alone; in a container the next block may stand there, so there it widens its column.
   */
  private fitProse(col: number, text: string): void {
    if (this.depth > 0) this.fit(col, text);
  }

  private setCell(row: ExcelJS.Row | undefined, c: number, given: CellValue, format?: ColumnFormat, style?: CellStyle): void {
    // A currency amount is the currency's minor unit, as the PDF prints it (no 22971.140000000003 in a cell or a sum).
    const value = format === 'currency' && typeof given === 'number' ? roundCurrency(given, this.format) : given;
    const col = this.col(c);
    if (row) {
      const cell = row.getCell(col);
      cell.value = value;
      const numFmt = excelNumFmt(format, this.format) ?? (value instanceof Date ? excelNumFmt('date', this.format) : undefined);
      if (numFmt && value !== null && typeof value !== 'string') cell.numFmt = numFmt;
      applyStyle(cell, style);
    }
    this.fit(col, displayText(value, format, this.format));
  }

  /** Bold and by level larger; `style` (its font size, colour, alignment, fill) over that. */
  heading(text: string, level: number, style: CellStyle = {}): void {
    const row = this.nextRow();
    const col = this.col(1);
    this.fitProse(col, text);
    if (!row) return;
    const font = { bold: true, size: headingSize(level), ...style.font };
    row.getCell(col).value = text;
    applyStyle(row.getCell(col), { ...style, font });
    row.height = Math.max(15, (font.size ?? 11) * 1.5);
  }

  /** One row per line. */
  text(text: string, style?: CellStyle): void {
    for (const line of text.split(/\r?\n/)) {
      const row = this.nextRow();
      const col = this.col(1);
      this.fitProse(col, line);
      if (!row) continue;
      row.getCell(col).value = line;
      applyStyle(row.getCell(col), style);
      tallEnough(row, style?.font?.size);
    }
  }

  /**
   * One row of cells from the current block's first column (a markdown paragraph, or a markdown
   * table's row), each rich text: runs with their own fonts. A cell of one run is plain text with
   * the run's font as the cell's.
   */
  richRow(cells: ExcelJS.RichText[][], style?: CellStyle): void {
    const row = this.nextRow();
    cells.forEach((runs, i) => {
      const col = this.col(i + 1);
      this.fitProse(col, runs.map((r) => r.text).join(''));
      if (!row) return;
      const cell = row.getCell(col);
      if (runs.length === 1) {
        cell.value = runs[0].text;
        applyStyle(cell, { ...style, font: ownFont(runs[0].font) });
      } else if (runs.length > 1) {
        cell.value = { richText: runs.map((r) => (ownFont(r.font) ? r : { text: r.text })) };
        applyStyle(cell, { ...style, font: undefined });
      }
    });
    if (row) tallEnough(row, Math.max(0, ...cells.flat().map((r) => r.font?.size ?? 0)));
  }

  blank(): void {
    this.nextRow();
  }

  /** A print page break under the last row; none inside a container, where it would cut the neighbouring blocks too. */
  pageBreak(): void {
    if (this.row > 1 && this.depth === 0 && this.target.kind !== 'measure') this.target.sheet.getRow(this.row - 1).addPageBreak();
  }

  /** A real Excel table (header row, filter buttons, banded rows) with typed cells; `styles` per column (their alignment). */
  async table(id: string, headers: string[], rows: TableRows, formats: Array<ColumnFormat | undefined>, styles: Array<CellStyle | undefined> = []): Promise<void> {
    const t = this.target;
    if (t.kind === 'memory') {
      this.memoryTable(t.sheet, id, headers, Array.isArray(rows) ? rows : await collect(rows), formats, styles);
      return;
    }
    const top = this.row;
    let count = 0;
    if (t.kind === 'measure') {
      if (Array.isArray(rows)) this.rows.take(Math.max(1, rows.length) + 1);
      for await (const batch of batchesOf(rows)) {
        for (const values of batch) values.forEach((v, c) => this.setCell(undefined, c + 1, v, formats[c]));
        count += batch.length;
      }
      if (!Array.isArray(rows)) this.rows.take(Math.max(1, count) + 1);
      this.tableRows.push(count);
    } else {
      const expected = t.measured.tableRows[this.tableIndex++];
      this.rows.take(Math.max(1, expected) + 1);
      const names = uniqueNames(headers);
      const header = this.rowAt(top)!;
      names.forEach((name, c) => {
        const cell = header.getCell(this.col(c + 1));
        cell.value = name;
        applyStyle(cell, styles[c]);
      });
      t.book.addTable(t.sheet, { name: this.tableName(id), top, left: this.left + 1, columns: names, rows: Math.max(1, expected) });
      for await (const batch of batchesOf(rows)) {
        for (const values of batch) {
          const row = this.rowAt(top + 1 + count++);
          values.forEach((v, c) => this.setCell(row, c + 1, v, formats[c], styles[c]));
          if (count % ROWS_PER_TURN === 0) await t.turn();
        }
      }
      if (count !== expected) throw new Error(`Table ${id} had ${expected} rows when measured and ${count} when written`);
    }
    headers.forEach((h, c) => this.fit(this.col(c + 1), h));
    // Excel needs at least one data row in a table; an empty source gets one blank row.
    if (count === 0) {
      const row = this.rowAt(top + 1);
      headers.forEach((_, c) => this.setCell(row, c + 1, null, formats[c], styles[c]));
    }
    this.row = top + Math.max(1, count) + 1;
  }

  private memoryTable(
    sheet: ExcelJS.Worksheet,
    id: string,
    headers: string[],
    rows: CellValue[][],
    formats: Array<ColumnFormat | undefined>,
    styles: Array<CellStyle | undefined>,
  ): void {
    const data = rows.length > 0 ? rows : [headers.map(() => null)];
    this.rows.take(data.length + 1);
    const top = this.row;
    sheet.addTable({
      name: this.tableName(id),
      ref: `${sheet.getColumn(this.left + 1).letter}${top}`,
      headerRow: true,
      style: { theme: 'TableStyleMedium2', showRowStripes: true },
      columns: uniqueNames(headers).map((name) => ({ name, filterButton: true })),
      rows: data,
    });
    headers.forEach((h, c) => {
      this.fit(this.col(c + 1), h);
      applyStyle(sheet.getRow(top).getCell(this.left + c + 1), styles[c]);
    });
    data.forEach((values, r) => {
      const row = sheet.getRow(top + 1 + r);
      values.forEach((v, c) => this.setCell(row, c + 1, v, formats[c], styles[c]));
    });
    this.row = top + data.length + 1;
  }

  /** Label in the block's first column (bold), typed value in the second. */
  keyValue(entries: Array<{ label: string; value: CellValue; format?: ColumnFormat }>, labelStyle: CellStyle = {}, valueStyle?: CellStyle): void {
    const label = { ...labelStyle, font: { bold: true, ...labelStyle.font } };
    for (const e of entries) {
      const row = this.nextRow();
      this.setCell(row, 1, e.label, undefined, label);
      this.setCell(row, 2, e.value, e.format, valueStyle);
    }
  }

  list(items: string[], ordered: boolean): void {
    items.forEach((text, i) => {
      const row = this.nextRow();
      if (ordered) {
        this.setCell(row, 1, i + 1);
        this.setCell(row, 2, text);
      } else {
        this.setCell(row, 1, text);
      }
    });
  }

  /**
   * One row per sheet, each a link to its sheet's first cell. A HYPERLINK formula rather than a
   * cell hyperlink: ExcelJS writes internal cell links that some spreadsheet programs open as
   * external addresses. The names are literals inside the formula: `'` doubled for the sheet
   * reference, `"` doubled for the string.
   */
  sheetLinks(names: readonly string[]): void {
    for (const name of names) {
      const row = this.nextRow();
      const col = this.col(1);
      this.fit(col, name);
      if (!row) continue;
      const literal = (text: string) => `"${text.replace(/"/g, '""')}"`;
      row.getCell(col).value = { formula: `HYPERLINK(${literal(`#'${name.replace(/'/g, "''")}'!A1`)},${literal(name)})`, result: name };
      row.getCell(col).font = { color: { argb: 'FF0B5CAD' }, underline: true };
    }
  }

  /** Places an image at the current row of the block and moves below it (in-memory workbooks only: see SheetTarget). */
  image(img: ImageInfo, widthPx?: number): void {
    const t = this.target;
    if (t.kind !== 'memory') throw new Error('Pictures need the in-memory workbook (hasPictures)');
    const width = widthPx ?? Math.min(img.width, 400);
    const height = img.width > 0 ? Math.round((width * img.height) / img.width) : width;
    const id = t.workbook.addImage({ buffer: img.buffer as unknown as ExcelJS.Buffer, extension: img.extension });
    const rows = Math.max(1, Math.ceil(height / PX_PER_ROW));
    this.rows.take(rows);
    t.sheet.addImage(id, { tl: { col: this.left, row: this.row - 1 }, ext: { width, height } });
    // The columns it covers are the block's: a neighbouring block starts right of the picture.
    this.col(Math.max(1, Math.ceil(width / PX_PER_COLUMN)));
    this.row += rows;
  }

  /**
   * Blocks side by side (a `columns` component): each written by its callback from the current
   * row, in the columns right of the block before and one empty column between; what follows
   * starts below the tallest. Each block's rows count towards the row limit.
   */
  async columns(blocks: Array<() => Promise<void>>): Promise<void> {
    await this.contained(async () => {
      const top = this.row;
      const outer = { left: this.left, right: this.right };
      let bottom = top;
      let next = this.left;
      for (const write of blocks) {
        this.row = top;
        this.left = next;
        this.right = next;
        await write();
        bottom = Math.max(bottom, this.row);
        // An empty block still takes a column, so the layout does not shift with the data.
        next = Math.max(this.right, next + 1) + 1;
      }
      this.right = Math.max(outer.right, next - 1);
      this.left = outer.left;
      this.row = bottom;
    });
  }

  /** A block framed (a `box` component): a border around the range its rows and columns cover, `fill` where its cells have none. */
  async box(write: () => Promise<void>, frame: BoxFrame): Promise<void> {
    await this.contained(async () => {
      const top = this.row;
      const outerRight = this.right;
      this.right = this.left;
      await write();
      const first = this.left + 1;
      const last = Math.max(this.right, first);
      this.right = Math.max(outerRight, last);
      if (this.target.kind === 'measure' || (!frame.border && !frame.fill)) return;
      for (let r = top; r < this.row; r++) {
        const row = this.rowAt(r)!;
        for (let c = first; c <= last; c++) {
          const edge = { top: r === top, bottom: r === this.row - 1, left: c === first, right: c === last };
          if (!frame.fill && !Object.values(edge).some(Boolean)) continue;
          const cell = row.getCell(c);
          if (frame.fill && !cell.fill) cell.fill = frame.fill;
          if (frame.border) {
            const sides = (Object.keys(edge) as Array<keyof typeof edge>).filter((side) => edge[side]);
            if (sides.length > 0) cell.border = { ...cell.border, ...Object.fromEntries(sides.map((side) => [side, frame.border])) };
          }
        }
      }
    });
  }

  /** Runs a container's writing; streamed, the outermost one's rows are held and emitted in order when it closes. */
  private async contained(write: () => Promise<void>): Promise<void> {
    const t = this.target;
    const top = this.row;
    const holds = t.kind === 'stream' && !this.held;
    if (holds) this.held = new (loadExcelJS().Workbook)().addWorksheet('held');
    this.depth += 1;
    try {
      await write();
    } finally {
      this.depth -= 1;
    }
    if (!holds || t.kind !== 'stream') return;
    const held = this.held!;
    this.held = undefined;
    for (let r = top; r < this.row; r++) {
      const from = held.findRow(r);
      const to = this.rowAt(r)!;
      if (from) {
        if (from.height) to.height = from.height;
        from.eachCell({ includeEmpty: true }, (cell, c) => {
          const out = to.getCell(c);
          out.value = cell.value;
          out.style = cell.style;
        });
      }
      if ((r - top + 1) % ROWS_PER_TURN === 0) await t.turn();
    }
  }

  /** Ends the sheet: the in-memory sheet gets its fitted widths; a measuring pass returns what it found. */
  finish(): SheetMeasure {
    if (this.target.kind === 'memory') applyWidths(this.target.sheet, this.widths);
    return { widths: this.widths, tableRows: this.tableRows };
  }

  private tableName(id: string): string {
    const base = `T_${id.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 200);
    let name = base;
    for (let n = 2; this.tableNames.has(name.toLowerCase()); n++) name = `${base}_${n}`;
    this.tableNames.add(name.toLowerCase());
    return name;
  }
}

/** A run's font when it says anything: an empty one would be written as a font of no size. */
const ownFont = (font: Partial<ExcelJS.Font> | undefined): Partial<ExcelJS.Font> | undefined => (font && Object.keys(font).length > 0 ? font : undefined);

/** `style` onto a cell, over what the cell has (a table's alignment keeps a number format, a label's bold keeps its colour). */
function applyStyle(cell: ExcelJS.Cell, style: CellStyle | undefined): void {
  if (!style) return;
  if (style.font) cell.font = cell.font ? { ...cell.font, ...style.font } : style.font;
  if (style.alignment) cell.alignment = cell.alignment ? { ...cell.alignment, ...style.alignment } : style.alignment;
  if (style.fill) cell.fill = style.fill;
}

/** A row whose font is larger than a default row fits gets its height: not every reader works it out from the text. */
function tallEnough(row: ExcelJS.Row, size: number | undefined): void {
  if (size && size > 11) row.height = Math.max(row.height ?? 15, size * 1.5);
}

function applyWidths(sheet: ExcelJS.Worksheet, widths: number[]): void {
  widths.forEach((w, col) => {
    if (w !== undefined && col > 0) sheet.getColumn(col).width = Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, w + 2));
  });
}

async function* batchesOf(rows: TableRows): AsyncIterable<CellValue[][]> {
  if (Array.isArray(rows)) yield rows;
  else yield* rows.batches();
}

async function collect(rows: TableRows): Promise<CellValue[][]> {
  const all: CellValue[][] = [];
  for await (const batch of batchesOf(rows)) for (const r of batch) all.push(r);
  return all;
}

/** The text Excel will show, near enough to size the column by. */
function displayText(value: CellValue, format: ColumnFormat | undefined, o: FormatOptions): string {
  if (value instanceof Date) return formatValue(value, 'date', o);
  return typeof value === 'string' ? value : formatValue(value, format, o);
}

/** Excel table columns need distinct, non-empty names. */
function uniqueNames(headers: string[]): string[] {
  const seen = new Set<string>();
  return headers.map((h, i) => {
    const base = h.trim() || `Column ${i + 1}`;
    let name = base;
    for (let n = 2; seen.has(name.toLowerCase()); n++) name = `${base} ${n}`;
    seen.add(name.toLowerCase());
    return name;
  });
}

/** Pixel size of a PNG, JPEG or GIF data URL; undefined for formats Excel cannot embed. */
export function decodeDataImage(src: string): ImageInfo | undefined {
  const m = /^data:image\/(png|jpe?g|gif);base64,(.+)$/is.exec(src.trim());
  if (!m) return undefined;
  const buffer = Buffer.from(m[2].replace(/\s+/g, ''), 'base64');
  const extension = m[1].toLowerCase() === 'png' ? 'png' : m[1].toLowerCase() === 'gif' ? 'gif' : 'jpeg';
  let width = 0;
  let height = 0;
  if (extension === 'png' && buffer.length >= 24) {
    width = buffer.readUInt32BE(16);
    height = buffer.readUInt32BE(20);
  } else if (extension === 'gif' && buffer.length >= 10) {
    width = buffer.readUInt16LE(6);
    height = buffer.readUInt16LE(8);
  } else if (extension === 'jpeg') {
    // Walk the segments to the first start-of-frame marker, which carries the dimensions.
    for (let i = 2; i + 9 < buffer.length; ) {
      if (buffer[i] !== 0xff) break;
      const marker = buffer[i + 1];
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        height = buffer.readUInt16BE(i + 5);
        width = buffer.readUInt16BE(i + 7);
        break;
      }
      i += 2 + buffer.readUInt16BE(i + 2);
    }
  }
  return { buffer, extension, width: width || 100, height: height || 100 };
}
