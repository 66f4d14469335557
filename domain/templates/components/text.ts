import Joi from 'joi';
import { interpolateHtml } from '../interpolate';
import type { HeadingProps, TextProps } from '../template.types';
import type { RenderContext } from './context';
import { text } from './props';
import { align, styleAttr, textStyle } from './style';

export const headingProps = Joi.object({
  text: text.required(),
  level: Joi.number().integer().min(1).max(6).default(1),
  align,
  style: textStyle,
});

export function headingHtml(p: HeadingProps, ctx: RenderContext): string {
  const level = Math.min(6, Math.max(1, Math.trunc(Number(p.level) || 1)));
  const html = interpolateHtml(p.text, ctx.scope, ctx.format);
  const anchor = ctx.outline ? ` id="${ctx.outline.heading(level, html)}"` : '';
  return `<h${level}${anchor} class="fw-heading"${styleAttr(p.style, p.align)}>${html}</h${level}>`;
}

export const textProps = Joi.object({ text: text.required(), align, style: textStyle });

/** Blank lines separate paragraphs; single newlines are kept as line breaks. */
export function textHtml(p: TextProps, ctx: RenderContext): string {
  const html = interpolateHtml(p.text, ctx.scope, ctx.format);
  const attr = styleAttr(p.style, p.align);
  return html
    .split(/\r?\n\s*\r?\n/)
    .map((para) => `<p class="fw-text"${attr}>${para.replace(/\r?\n/g, '<br>')}</p>`)
    .join('');
}
