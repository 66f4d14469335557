import Joi from 'joi';
import { escapeHtml, interpolateText, resolveTyped } from '../interpolate';
import { formatValue, type CellValue, toCellValue } from '../format';
import type { ColumnFormat, KeyValueProps } from '../template.types';
import type { DataContext, RenderContext } from './context';
import { format } from './props';
import { align, styleAttr, textStyle } from './style';

export const keyValueProps = Joi.object({
  items: Joi.array()
    .max(500)
    .items(
      Joi.object({
        label: Joi.string().allow('').max(1000).required(),
        value: Joi.alternatives().try(Joi.string().allow('').max(10_000), Joi.number(), Joi.boolean(), null).required(),
        format,
      }),
    )
    .required(),
  align,
  valueAlign: align,
  style: textStyle,
});

export interface KeyValueRow {
  label: string;
  value: unknown;
  format?: ColumnFormat;
}

/** `value: "{{total | currency}}"` keeps the raw number and its format for typed output. */
export function keyValueRows(p: KeyValueProps, ctx: DataContext): KeyValueRow[] {
  return p.items.map((it) => {
    const resolved = resolveTyped(it.value, ctx.scope, ctx.format);
    return {
      label: interpolateText(it.label, ctx.scope, ctx.format),
      value: resolved.value,
      format: it.format ?? resolved.format,
    };
  });
}

export function keyValueCell(row: KeyValueRow): CellValue {
  return toCellValue(row.value, row.format);
}

export function keyValueHtml(p: KeyValueProps, ctx: RenderContext): string {
  const value = p.valueAlign ? ` style="text-align:${p.valueAlign}"` : '';
  const rows = keyValueRows(p, ctx)
    .map((r) => `<tr><th>${escapeHtml(r.label)}</th><td${value}>${escapeHtml(formatValue(r.value, r.format, ctx.format))}</td></tr>`)
    .join('');
  // Aligned right (or centred), the block itself moves there: totals under a table's right edge.
  const place = p.align === 'right' ? 'margin-left:auto' : p.align === 'center' ? 'margin-left:auto;margin-right:auto' : '';
  return `<table class="fw-key-value"${styleAttr(p.style, undefined, place)}><tbody>${rows}</tbody></table>`;
}
