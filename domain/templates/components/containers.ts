import Joi from 'joi';
import type { BoxProps, ColumnsProps } from '../template.types';
import { cssLength, lengthMm, type RenderContext } from './context';
import { length } from './props';
import { color, cssColor, styleAttr, textStyle } from './style';

/**
 * Containers (docs/templates.md "Layout and style"): `columns` puts blocks side by side, `box` frames
 * a group. Their children are components like any others (checked by the same walk in
 * template.schema.ts, to MAX_NESTING_DEPTH levels of containers and repeats), rendered in the
 * container's scope, so they work inside a repeat.
 */

const children = Joi.array().max(500).items(Joi.object().unknown(true));

/** A column width: a fraction of the free width (`1fr`, `2.5fr`) or a length (mm as a number). */
const columnWidth = Joi.alternatives().try(Joi.string().pattern(/^\d+(?:\.\d+)?fr$/, 'fraction (e.g. 1fr, 2fr)'), length);

export const columnsProps = Joi.object({
  columns: Joi.array()
    .min(1)
    .max(6)
    .items(Joi.object({ width: columnWidth, components: children.required() }))
    .required(),
  gap: length.default('6mm'),
  style: textStyle,
});

/** A grid track: `1fr` may shrink below its content's widest word (print, not a phone: columns stay side by side). */
function track(width: ColumnsProps['columns'][number]['width']): string {
  if (width === undefined) return 'minmax(0,1fr)';
  if (typeof width === 'string' && width.endsWith('fr')) return `minmax(0,${width})`;
  return cssLength(width, '1fr');
}

/** Each column's width in millimetres, as the grid will lay them out: fixed widths first, fractions share the rest. */
function columnWidthsMm(p: ColumnsProps, available: number): number[] {
  const gap = lengthMm(p.gap) ?? 6;
  const free = available - gap * (p.columns.length - 1);
  const fixed = p.columns.map((c) => (typeof c.width === 'string' && c.width.endsWith('fr') ? undefined : c.width === undefined ? undefined : lengthMm(c.width)));
  const fr = p.columns.map((c, i) => (fixed[i] !== undefined ? 0 : typeof c.width === 'string' && c.width.endsWith('fr') ? Number(c.width.slice(0, -2)) : 1));
  const rest = Math.max(0, free - fixed.reduce<number>((a, b) => a + (b ?? 0), 0));
  const frs = fr.reduce((a, b) => a + b, 0) || 1;
  return p.columns.map((_, i) => fixed[i] ?? (rest * fr[i]) / frs);
}

export async function columnsHtml(_id: string, p: ColumnsProps, ctx: RenderContext): Promise<string> {
  const tracks = p.columns.map((c) => track(c.width)).join(' ');
  const widths = columnWidthsMm(p, ctx.widthMm);
  const cells: string[] = [];
  for (const [i, column] of p.columns.entries()) cells.push(`<div class="fw-column">${await ctx.renderChildren(column.components, ctx.scope, { widthMm: widths[i] })}</div>`);
  return `<div class="fw-columns"${styleAttr(p.style, undefined, `grid-template-columns:${tracks};column-gap:${cssLength(p.gap, '6mm')}`)}>${cells.join('')}</div>`;
}

const border = Joi.alternatives().try(
  Joi.boolean(),
  Joi.object({ width: length, color, style: Joi.string().valid('solid', 'dashed', 'dotted') }),
);

export const boxProps = Joi.object({
  components: children.required(),
  padding: length.default('4mm'),
  border: border.default(true),
  background: color,
  radius: length,
  style: textStyle,
});

function borderCss(b: BoxProps['border']): string {
  if (!b) return 'border:0';
  const spec = b === true ? {} : b;
  return `border:${cssLength(spec.width, '0.3mm')} ${spec.style ?? 'solid'} ${cssColor(spec.color ?? 'border')}`;
}

export async function boxHtml(_id: string, p: BoxProps, ctx: RenderContext): Promise<string> {
  const css = [
    `padding:${cssLength(p.padding, '4mm')}`,
    borderCss(p.border),
    p.background ? `background:${cssColor(p.background)}` : '',
    p.radius !== undefined ? `border-radius:${cssLength(p.radius, '0')}` : '',
  ]
    .filter(Boolean)
    .join(';');
  const inside = ctx.widthMm - 2 * ((lengthMm(p.padding) ?? 4) + (p.border === false ? 0 : (lengthMm(p.border === true || p.border === undefined ? undefined : p.border.width) ?? 0.3)));
  return `<div class="fw-box"${styleAttr(p.style, undefined, css)}>${await ctx.renderChildren(p.components, ctx.scope, { widthMm: inside })}</div>`;
}
