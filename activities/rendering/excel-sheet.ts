import type ExcelJS from 'exceljs';
import { AppError } from '../../domain/errors';
import { excelNumFmt, type CellValue, type FormatOptions, formatValue } from '../../domain/templates/format';
import type { ColumnFormat } from '../../domain/templates/template.types';
import type { StreamWorkbook } from './excel-stream-workbook';

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
const MIN_WIDTH = 8;
const MAX_WIDTH = 60;
/** Streamed table rows between yields: the zip and the output catch up, so unwritten XML never piles up. */
const ROWS_PER_TURN = 500;

export interface ImageInfo {
  buffer: Buffer;
  extension: 'png' | 'jpeg' | 'gif';
  width: number;
  height: number;
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

export class SheetWriter {
  private row = 1;
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
    if (t.kind === 'stream') {
      // Rows before the previous one are final: commit them (ExcelJS commits every earlier row too).
      const done = (t.sheet as unknown as { findRow(n: number): ExcelJS.Row | undefined }).findRow(n - 2);
      done?.commit();
    }
    return t.sheet.getRow(n);
  }

  private fit(col: number, text: string): void {
    const longest = text.includes('\n') ? Math.max(...text.split('\n').map((l) => l.length)) : text.length;
    this.widths[col] = Math.max(this.widths[col] ?? 0, longest);
  }

  private setCell(row: ExcelJS.Row | undefined, col: number, value: CellValue, format?: ColumnFormat): void {
    if (row) {
      const cell = row.getCell(col);
      cell.value = value;
      const numFmt = excelNumFmt(format, this.format) ?? (value instanceof Date ? excelNumFmt('date', this.format) : undefined);
      if (numFmt && value !== null && typeof value !== 'string') cell.numFmt = numFmt;
    }
    this.fit(col, displayText(value, format, this.format));
  }

  heading(text: string, level: number): void {
    const row = this.nextRow();
    if (!row) return;
    row.getCell(1).value = text;
    row.getCell(1).font = { bold: true, size: HEADING_SIZES[Math.min(5, Math.max(0, level - 1))], color: { argb: 'FF102A43' } };
    row.height = Math.max(15, HEADING_SIZES[level - 1] * 1.5);
  }

  text(text: string): void {
    for (const line of text.split(/\r?\n/)) {
      const row = this.nextRow();
      if (row) row.getCell(1).value = line;
    }
  }

  blank(): void {
    this.nextRow();
  }

  pageBreak(): void {
    if (this.row > 1 && this.target.kind !== 'measure') this.target.sheet.getRow(this.row - 1).addPageBreak();
  }

  /** A real Excel table (header row, filter buttons, banded rows) with typed cells. */
  async table(id: string, headers: string[], rows: TableRows, formats: Array<ColumnFormat | undefined>): Promise<void> {
    const t = this.target;
    if (t.kind === 'memory') {
      this.memoryTable(t.sheet, id, headers, Array.isArray(rows) ? rows : await collect(rows), formats);
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
      names.forEach((name, c) => (header.getCell(c + 1).value = name));
      t.book.addTable(t.sheet, { name: this.tableName(id), top, columns: names, rows: Math.max(1, expected) });
      for await (const batch of batchesOf(rows)) {
        for (const values of batch) {
          const row = this.rowAt(top + 1 + count++);
          values.forEach((v, c) => this.setCell(row, c + 1, v, formats[c]));
          if (count % ROWS_PER_TURN === 0) await t.turn();
        }
      }
      if (count !== expected) throw new Error(`Table ${id} had ${expected} rows when measured and ${count} when written`);
    }
    headers.forEach((h, c) => this.fit(c + 1, h));
    // Excel needs at least one data row in a table; an empty source gets one blank row.
    if (count === 0) {
      const row = this.rowAt(top + 1);
      headers.forEach((_, c) => this.setCell(row, c + 1, null, formats[c]));
    }
    this.row = top + Math.max(1, count) + 1;
  }

  private memoryTable(sheet: ExcelJS.Worksheet, id: string, headers: string[], rows: CellValue[][], formats: Array<ColumnFormat | undefined>): void {
    const data = rows.length > 0 ? rows : [headers.map(() => null)];
    this.rows.take(data.length + 1);
    const top = this.row;
    sheet.addTable({
      name: this.tableName(id),
      ref: `A${top}`,
      headerRow: true,
      style: { theme: 'TableStyleMedium2', showRowStripes: true },
      columns: uniqueNames(headers).map((name) => ({ name, filterButton: true })),
      rows: data,
    });
    headers.forEach((h, c) => this.fit(c + 1, h));
    data.forEach((values, r) => {
      const row = sheet.getRow(top + 1 + r);
      values.forEach((v, c) => this.setCell(row, c + 1, v, formats[c]));
    });
    this.row = top + data.length + 1;
  }

  /** Label in the first column (bold), typed value in the second. */
  keyValue(entries: Array<{ label: string; value: CellValue; format?: ColumnFormat }>): void {
    for (const e of entries) {
      const row = this.nextRow();
      if (row) {
        row.getCell(1).value = e.label;
        row.getCell(1).font = { bold: true };
      }
      this.fit(1, e.label);
      this.setCell(row, 2, e.value, e.format);
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
      this.fit(1, name);
      if (!row) continue;
      const literal = (text: string) => `"${text.replace(/"/g, '""')}"`;
      row.getCell(1).value = { formula: `HYPERLINK(${literal(`#'${name.replace(/'/g, "''")}'!A1`)},${literal(name)})`, result: name };
      row.getCell(1).font = { color: { argb: 'FF0B5CAD' }, underline: true };
    }
  }

  /** Places an image at the current row and moves below it (in-memory workbooks only: see SheetTarget). */
  image(img: ImageInfo, widthPx?: number): void {
    const t = this.target;
    if (t.kind !== 'memory') throw new Error('Pictures need the in-memory workbook (hasPictures)');
    const width = widthPx ?? Math.min(img.width, 400);
    const height = img.width > 0 ? Math.round((width * img.height) / img.width) : width;
    const id = t.workbook.addImage({ buffer: img.buffer as unknown as ExcelJS.Buffer, extension: img.extension });
    const rows = Math.max(1, Math.ceil(height / PX_PER_ROW));
    this.rows.take(rows);
    t.sheet.addImage(id, { tl: { col: 0, row: this.row - 1 }, ext: { width, height } });
    this.row += rows;
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
  if (value instanceof Date) return 'yyyy-mm-dd';
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
