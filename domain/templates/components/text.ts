import Joi from 'joi';
import { interpolateHtml } from '../interpolate';
import type { HeadingProps, TextProps } from '../template.types';
import type { RenderContext } from './context';
import { text } from './props';

export const headingProps = Joi.object({
  text: text.required(),
  level: Joi.number().integer().min(1).max(6).default(1),
});

export function headingHtml(p: HeadingProps, ctx: RenderContext): string {
  const level = Math.min(6, Math.max(1, Math.trunc(Number(p.level) || 1)));
  return `<h${level} class="fw-heading">${interpolateHtml(p.text, ctx.scope, ctx.format)}</h${level}>`;
}

export const textProps = Joi.object({ text: text.required() });

/** Blank lines separate paragraphs; single newlines are kept as line breaks. */
export function textHtml(p: TextProps, ctx: RenderContext): string {
  const html = interpolateHtml(p.text, ctx.scope, ctx.format);
  return html
    .split(/\r?\n\s*\r?\n/)
    .map((para) => `<p class="fw-text">${para.replace(/\r?\n/g, '<br>')}</p>`)
    .join('');
}
