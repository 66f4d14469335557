import Joi from 'joi';
import { escapeHtml, getPath, interpolateText } from '../interpolate';
import { formatValue } from '../format';
import type { TableColumn, TableProps } from '../template.types';
import type { DataContext, RenderContext } from './context';
import { bareDataPath, dataPath, format } from './props';
import { align, styleAttr, textStyle } from './style';

export const tableProps = Joi.object({
  dataSource: dataPath.required(),
  columns: Joi.array()
    .min(1)
    .max(100)
    .items(
      Joi.object({
        header: Joi.string().allow('').max(500).required(),
        field: Joi.string().trim().min(1).max(500).required(),
        format: format,
        align,
      }),
    )
    .required(),
  keepRowsTogether: Joi.boolean().default(true),
  style: textStyle,
});

const NUMERIC_FORMATS = new Set(['number', 'currency', 'percent']);

/** The array a dataSource names; anything that is not an array renders as no rows. */
export function dataSourceRows(source: string, scope: Record<string, unknown>): unknown[] {
  const value = getPath(scope, bareDataPath(source));
  return Array.isArray(value) ? value : [];
}

export interface TableData {
  columns: Array<TableColumn & { header: string }>;
  /** Raw values, one array per row, in column order; formatting is the renderer's job. */
  rows: unknown[][];
}

/** The columns of a table with their headers interpolated. */
export function tableColumns(p: TableProps, ctx: DataContext): TableData['columns'] {
  return p.columns.map((c) => ({ ...c, header: interpolateText(c.header, ctx.scope, ctx.format) }));
}

/** One cell of a table row. A scalar element (an array of strings) is its own single field, read as `.` or `value`. */
export function tableCell(row: unknown, field: string): unknown {
  return field === '.' || (field === 'value' && (typeof row !== 'object' || row === null)) ? row : getPath(row, field);
}

/** Rows of a table, charged to the loop budget before any is built. */
export function tableData(id: string, p: TableProps, ctx: DataContext): TableData {
  const source = dataSourceRows(p.dataSource, ctx.scope);
  ctx.budget.consume(source.length, id);
  const columns = tableColumns(p, ctx);
  return { columns, rows: source.map((row) => columns.map((c) => tableCell(row, c.field))) };
}

export function tableHtml(id: string, p: TableProps, ctx: RenderContext): string {
  const { columns, rows } = tableData(id, p, ctx);
  // A column's own alignment wins; without one, numbers are right-aligned.
  const cell = (c: TableColumn) => (c.align ? ` style="text-align:${c.align}"` : c.format && NUMERIC_FORMATS.has(c.format) ? ' class="fw-num"' : '');
  const head = columns.map((c) => `<th${cell(c)}>${escapeHtml(c.header)}</th>`).join('');
  const body = rows
    .map((r) => `<tr>${r.map((v, i) => `<td${cell(columns[i])}>${escapeHtml(formatValue(v, columns[i].format, ctx.format))}</td>`).join('')}</tr>`)
    .join('');
  const split = p.keepRowsTogether === false ? ' fw-rows-split' : '';
  return `<table class="fw-table${split}"${styleAttr(p.style)}><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}
