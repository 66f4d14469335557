import type ExcelJS from 'exceljs';
import { format as formatNumber } from 'numfmt';
import { GRID_LIMITS, type GridCell, type GridSheet, type WorkbookGrid } from '../../domain/documents/previews';
import { loadExcelJS } from './excel-stream-workbook';

/**
 * A built workbook read back as a grid for a person to look at (docs/templates.md "Preview"): the
 * file generation produces, opened with ExcelJS, so the grid shows what Excel will. Values are
 * shown as their number format makes them (numfmt, the format codes Excel uses), with bold, italic,
 * colours, alignment and column widths (Formwork's workbooks merge no cells). Runs on an Excel thread (excel-thread.ts),
 * never on a thread that serves HTTP; GRID_LIMITS caps what is answered (the first rows and
 * columns of the first sheets, each text cut), and `truncated` says so.
 */
export async function workbookGrid(body: Buffer): Promise<WorkbookGrid> {
  const workbook = new (loadExcelJS().Workbook)();
  await workbook.xlsx.load(body as unknown as ArrayBuffer);
  const sheets = workbook.worksheets.slice(0, GRID_LIMITS.sheets).map(sheetGrid);
  return { sheets, truncated: workbook.worksheets.length > GRID_LIMITS.sheets };
}

function sheetGrid(sheet: ExcelJS.Worksheet): GridSheet {
  const rowCount = Math.min(sheet.rowCount, GRID_LIMITS.rows);
  const columnCount = Math.min(sheet.columnCount, GRID_LIMITS.columns);
  const tables = tableLooks(sheet);
  const rows: GridSheet['rows'] = [];
  for (let r = 1; r <= rowCount; r++) {
    const row = sheet.getRow(r);
    const cells: GridCell[] = [];
    for (let c = 1; c <= columnCount; c++) {
      const cell = row.getCell(c);
      const shown = { ...tables.get(`${r}:${c}`), ...cellGrid(cell) };
      if (shown.text !== '' || shown.fill) cells.push({ column: c, ...shown });
    }
    rows.push({ row: r, ...(row.height ? { height: row.height } : {}), cells });
  }
  const columns = Array.from({ length: columnCount }, (_, i) => sheet.getColumn(i + 1).width ?? null);
  return {
    name: sheet.name,
    rowCount: sheet.rowCount,
    columnCount: sheet.columnCount,
    truncated: sheet.rowCount > rowCount || sheet.columnCount > columnCount,
    columns,
    rows,
  };
}

type Look = Pick<GridCell, 'bold' | 'color' | 'fill'>;

/**
 * Excel tables draw their header and stripes from the table's style, not from the cells: the
 * grid gives those cells the look of the style Formwork writes (TableStyleMedium2: accent 1
 * header, light stripes) and, for another style, a bold header. The cells' own style goes over it.
 */
function tableLooks(sheet: ExcelJS.Worksheet): Map<string, Look> {
  const looks = new Map<string, Look>();
  for (const { table } of (sheet.getTables() as unknown as Array<{ table?: { tableRef?: string; headerRow?: boolean; style?: { theme?: string; showRowStripes?: boolean } } }>).slice(0, 100)) {
    if (!table?.tableRef) continue;
    const [from, to] = table.tableRef.split(':').map((ref) => sheet.getCell(ref));
    if (!from || !to) continue;
    const medium2 = table.style?.theme === 'TableStyleMedium2';
    const bottom = Math.min(Number(to.row), GRID_LIMITS.rows);
    for (let r = Number(from.row); r <= bottom; r++) {
      const header = table.headerRow !== false && r === Number(from.row);
      const stripe = !header && medium2 && table.style?.showRowStripes && (r - Number(from.row)) % 2 === 1;
      const look: Look | undefined = header ? (medium2 ? { bold: true, color: '#ffffff', fill: '#4472c4' } : { bold: true }) : stripe ? { fill: '#d9e1f2' } : undefined;
      if (!look) continue;
      for (let c = Number(from.col); c <= Math.min(Number(to.col), GRID_LIMITS.columns); c++) looks.set(`${r}:${c}`, look);
    }
  }
  return looks;
}

function cellGrid(cell: ExcelJS.Cell): Omit<GridCell, 'column'> {
  const shown: Omit<GridCell, 'column'> = { text: cut(cellText(cell)) };
  const { font, fill, alignment } = cell;
  if (font?.bold) shown.bold = true;
  if (font?.italic) shown.italic = true;
  const color = argb(font?.color?.argb);
  if (color) shown.color = color;
  const background = fill?.type === 'pattern' && fill.pattern === 'solid' ? argb(fill.fgColor?.argb) : undefined;
  if (background) shown.fill = background;
  const horizontal = alignment?.horizontal;
  if (horizontal === 'left' || horizontal === 'center' || horizontal === 'right') shown.align = horizontal;
  else if (typeof plainValue(cell.value) === 'number' || cell.value instanceof Date) shown.align = 'right';
  return shown;
}

/** The value as Excel shows it: numbers and dates through their format, formulas by their result. */
function cellText(cell: ExcelJS.Cell): string {
  const value = plainValue(cell.value);
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || value instanceof Date) {
    try {
      return formatNumber(cell.numFmt || 'General', value);
    } catch {
      return value instanceof Date ? value.toISOString() : String(value);
    }
  }
  return typeof value === 'boolean' ? (value ? 'TRUE' : 'FALSE') : String(value);
}

function plainValue(value: ExcelJS.CellValue): string | number | boolean | Date | null | undefined {
  if (value === null || value === undefined || typeof value !== 'object' || value instanceof Date) return value;
  if ('richText' in value) return value.richText.map((part) => part.text).join('');
  if ('result' in value) return plainValue(value.result as ExcelJS.CellValue);
  if ('text' in value) return String(value.text);
  if ('error' in value) return String(value.error);
  return '';
}

function cut(text: string): string {
  return text.length > GRID_LIMITS.cellText ? `${text.slice(0, GRID_LIMITS.cellText - 1)}…` : text;
}

/** ExcelJS's ARGB ("FF1F4E79") as CSS ("#1f4e79"); a theme colour has none and shows as the default. */
function argb(value: string | undefined): string | undefined {
  return value && /^[0-9a-f]{8}$/i.test(value) ? `#${value.slice(2).toLowerCase()}` : undefined;
}
