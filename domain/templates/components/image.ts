import Joi from 'joi';
import { escapeHtml, resolveTyped } from '../interpolate';
import { isAllowedImageSource } from '../image-hosts';
import type { ImageProps } from '../template.types';
import { cssLength, type RenderContext } from './context';
import { length } from './props';
import { ASSET_REF } from './asset-ref';

export const imageProps = Joi.object({
  src: Joi.string().trim().max(5_000_000).required(),
  width: length,
  alt: Joi.string().allow('').max(1000),
});

/**
 * The image source after interpolation, or undefined when it is neither a data: image, nor on an
 * allow-listed host, nor an image asset of the project (`asset:<id>`, which `assetUrl` knows):
 * such an image is replaced by its alt text and never requested.
 */
export function imageSource(p: ImageProps, ctx: Pick<RenderContext, 'scope' | 'format' | 'imageAllowlist' | 'assetUrl'>): string | undefined {
  const { value } = resolveTyped(p.src, ctx.scope, ctx.format);
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const src = value.trim();
  const asset = ASSET_REF.exec(src);
  if (asset) return ctx.assetUrl?.(asset[1].toLowerCase());
  return isAllowedImageSource(src, ctx.imageAllowlist) ? src : undefined;
}

export function imageHtml(p: ImageProps, ctx: RenderContext): string {
  const src = imageSource(p, ctx);
  const alt = escapeHtml(p.alt ?? '');
  const width = p.width === undefined ? '' : ` style="width:${cssLength(p.width, 'auto')}"`;
  if (!src) return `<div class="fw-image-missing"${width}>${alt || 'Image unavailable'}</div>`;
  return `<img class="fw-image" src="${escapeHtml(src)}" alt="${alt}"${width}>`;
}
