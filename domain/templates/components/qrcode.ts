import Joi from 'joi';
import QRCode from 'qrcode';
import { escapeHtml, interpolateText } from '../interpolate';
import type { QrCodeProps } from '../template.types';
import { cssLength, type RenderContext } from './context';
import { length } from './props';

export const qrcodeProps = Joi.object({
  value: Joi.string().min(1).max(2000).required(),
  size: length.default(30),
});

/** The encoded text; a QR code holds at most ~2.9 KB, longer values are refused by the encoder. */
export function qrcodeText(p: QrCodeProps, ctx: Pick<RenderContext, 'scope' | 'format'>): string {
  return interpolateText(p.value, ctx.scope, ctx.format);
}

export async function qrcodePng(text: string): Promise<Buffer> {
  return QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 1, width: 256 });
}

export async function qrcodeHtml(p: QrCodeProps, ctx: RenderContext): Promise<string> {
  const text = qrcodeText(p, ctx);
  if (!text) return '';
  const dataUrl = await QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 1, width: 256 });
  const size = cssLength(p.size, '30mm');
  return `<img class="fw-qrcode" src="${dataUrl}" alt="${escapeHtml(text)}" style="width:${size};height:${size}">`;
}
