import type { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';

/**
 * exceljs, loaded when a workbook is first built: only the Excel threads build workbooks, and a process
 * that merely imports the renderer (the main worker, for canStreamVariable) does not load it.
 */
export const loadExcelJS = (): typeof ExcelJS => require('exceljs') as typeof ExcelJS;

/**
 * ExcelJS's streaming writer (`stream.xlsx.WorkbookWriter`: rows are committed to the zip as they
 * are written, so a workbook of 100,000 rows never exists as cell objects) with the one part of
 * the in-memory writer Formwork's workbooks need and it lacks: Excel tables. A table is the same
 * XML part the in-memory writer makes (its TableXform, the model its Table.validate() builds),
 * linked from the sheet's `<tableParts>` and the content types. Built against exceljs 4.4.0's
 * internals (pinned in package.json); tests/integration/rendering/excel-render.test.ts re-reads
 * the tables.
 */

const TableXform = require('exceljs/lib/xlsx/xform/table/table-xform');
const ContentTypesXform = require('exceljs/lib/xlsx/xform/core/content-types-xform');
const RelType = require('exceljs/lib/xlsx/rel-type');
const colCache = require('exceljs/lib/utils/col-cache');

export interface StreamTable {
  name: string;
  /** Row of the header. */
  top: number;
  /** Column of the table's first column (1 is A; more inside side-by-side columns). */
  left: number;
  columns: string[];
  /** Data rows below the header (at least 1). */
  rows: number;
}

export interface StreamWorkbook {
  workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  /** A sheet whose commit also writes the tables added with `addTable`. */
  addWorksheet(name: string, options: Partial<ExcelJS.AddWorksheetOptions>): ExcelJS.Worksheet;
  addTable(sheet: ExcelJS.Worksheet, table: StreamTable): void;
}

/** The model ExcelJS's Table.validate() makes for { headerRow: true, style: { theme, showRowStripes } }. */
function tableModel(t: StreamTable, id: number): Record<string, unknown> {
  const ref = colCache.encode(t.top, t.left, t.top + t.rows, t.left + t.columns.length - 1);
  return {
    id,
    name: t.name,
    displayName: t.name,
    ref: colCache.encodeAddress(t.top, t.left),
    target: `table${id}.xml`,
    headerRow: true,
    totalsRow: false,
    style: { theme: 'TableStyleMedium2', showRowStripes: true, showFirstColumn: false, showLastColumn: false, showColumnStripes: false },
    autoFilterRef: ref,
    tableRef: ref,
    columns: t.columns.map((name, i) =>
      i === 0 ? { name, filterButton: true, totalsRowLabel: 'Total' } : { name, filterButton: true, totalsRowFunction: 'none', totalsRowFormula: null },
    ),
  };
}

export function streamWorkbook(stream: Writable): StreamWorkbook {
  const workbook = new (loadExcelJS().stream.xlsx.WorkbookWriter)({ stream, useStyles: true, useSharedStrings: false });
  const wb = workbook as any;
  const tables: Array<Record<string, unknown>> = [];
  const bySheet = new Map<unknown, Array<Record<string, unknown>>>();

  // The content types name every table part (the writer's own list has no tables).
  wb.addContentTypes = () => {
    const model = { worksheets: wb._worksheets.filter(Boolean), sharedStrings: wb.sharedStrings, commentRefs: wb.commentRefs, media: wb.media, tables };
    wb.zip.append(new ContentTypesXform().toXml(model), { name: '[Content_Types].xml' });
    return Promise.resolve();
  };

  return {
    workbook,
    addWorksheet(name, options) {
      const sheet = workbook.addWorksheet(name, options) as any;
      const own: Array<Record<string, unknown>> = [];
      bySheet.set(sheet, own);
      const close = sheet._writeCloseWorksheet.bind(sheet);
      // <tableParts> is the last element a worksheet has here (after headerFooter, rowBreaks, legacyDrawing).
      sheet._writeCloseWorksheet = () => {
        if (own.length > 0) {
          const parts = own.map((t) => `<tablePart r:id="${sheet._sheetRelsWriter.addRelationship({ Type: RelType.Table, Target: `../tables/${t.target}` })}"/>`);
          sheet._write(`<tableParts count="${own.length}">${parts.join('')}</tableParts>`);
          for (const t of own) {
            const xform = new TableXform();
            xform.prepare(t, {});
            wb.zip.append(xform.toXml(t), { name: `xl/tables/${t.target}` });
          }
        }
        close();
      };
      return sheet as ExcelJS.Worksheet;
    },
    addTable(sheet, table) {
      const model = tableModel(table, tables.length + 1);
      tables.push(model);
      bySheet.get(sheet)!.push(model);
    },
  };
}
