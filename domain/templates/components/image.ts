import Joi from 'joi';
import { escapeHtml, resolveTyped } from '../interpolate';
import { isAllowedImageSource } from '../image-hosts';
import type { ImageProps } from '../template.types';
import { cssLength, type RenderContext } from './context';
import { length } from './props';

export const imageProps = Joi.object({
  src: Joi.string().trim().max(5_000_000).required(),
  width: length,
  alt: Joi.string().allow('').max(1000),
});

/**
 * The image source after interpolation, or undefined when it is neither a data: image nor on an
 * allow-listed host: such an image is replaced by its alt text and never requested.
 */
export function imageSource(p: ImageProps, ctx: Pick<RenderContext, 'scope' | 'format' | 'imageAllowlist'>): string | undefined {
  const { value } = resolveTyped(p.src, ctx.scope, ctx.format);
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return isAllowedImageSource(value.trim(), ctx.imageAllowlist) ? value.trim() : undefined;
}

export function imageHtml(p: ImageProps, ctx: RenderContext): string {
  const src = imageSource(p, ctx);
  const alt = escapeHtml(p.alt ?? '');
  const width = p.width === undefined ? '' : ` style="width:${cssLength(p.width, 'auto')}"`;
  if (!src) return `<div class="fw-image-missing"${width}>${alt || 'Image unavailable'}</div>`;
  return `<img class="fw-image" src="${escapeHtml(src)}" alt="${alt}"${width}>`;
}
