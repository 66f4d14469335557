import type BwipJs from 'bwip-js';
import Joi from 'joi';
import { AppError } from '../../errors';
import { interpolateText } from '../interpolate';
import type { BarcodeProps } from '../template.types';
import { cssLength, type RenderContext } from './context';
import { length } from './props';

/** bwip-js (2.2 MB of code), loaded when a barcode is first drawn or checked (see loadEcharts in chart.ts). */
const loadBwip = (): typeof BwipJs => require('bwip-js') as typeof BwipJs;

/**
 * Barcodes (docs/templates.md "barcode"), drawn by bwip-js (Barcode Writer in Pure PostScript): in a
 * PDF as vector graphics (inline SVG, no request), in a workbook as a PNG picture. A value the
 * symbology cannot encode (an EAN-13 of 5 digits, letters in a UPC-A) is refused with 400
 * ERR_TMPL_008 naming the component: on save when the value is literal, at render time when it
 * comes from the data.
 */

const SYMBOLOGIES = ['code128', 'ean13', 'upca', 'qrcode', 'datamatrix', 'pdf417'] as const;
const TWO_DIMENSIONAL = new Set<string>(['qrcode', 'datamatrix', 'pdf417']);

export const barcodeProps = Joi.object({
  value: Joi.string().min(1).max(2000).required(),
  symbology: Joi.string().valid(...SYMBOLOGIES).required(),
  /** Printed width; default 30 mm for square codes, 60 mm for the others. */
  width: length,
  /** Bar height of linear codes (mm), default 15. */
  height: Joi.number().min(2).max(100),
  /** The value printed under a linear code (default true). */
  showText: Joi.boolean(),
});

/** The encoded text: the interpolated value. */
export function barcodeText(p: BarcodeProps, ctx: Pick<RenderContext, 'scope' | 'format'>): string {
  return interpolateText(p.value, ctx.scope, ctx.format);
}

function options(p: BarcodeProps, text: string): BwipJs.RenderOptions {
  const linear = !TWO_DIMENSIONAL.has(p.symbology);
  return {
    bcid: p.symbology,
    text,
    scale: 3,
    ...(linear ? { height: p.height ?? 15, includetext: p.showText ?? true, textxalign: 'center' as const } : {}),
    ...(p.symbology === 'qrcode' ? { eclevel: 'M' } : {}),
  };
}

/** bwip-js's refusal (`bwipp.ean13badLength#6878: EAN-13 must be 12 or 13 digits`) as the catalogued error. */
function refused(id: string, p: BarcodeProps, err: unknown): AppError {
  const reason = err instanceof Error ? err.message.replace(/^bwipp?\.[\w#]+:\s*/, '') : String(err);
  return new AppError('ERR_TMPL_008', `Component '${id}': the ${p.symbology} barcode cannot encode this value: ${reason}`, {
    componentId: id,
    symbology: p.symbology,
    field: 'value',
  });
}

/** Throws ERR_TMPL_008 when `text` is no value of the symbology. */
export function checkBarcode(id: string, p: BarcodeProps, text: string): void {
  try {
    loadBwip().toSVG(options(p, text));
  } catch (err) {
    throw refused(id, p, err);
  }
}

export function barcodeHtml(id: string, p: BarcodeProps, ctx: RenderContext): string {
  const text = barcodeText(p, ctx);
  if (!text) return '';
  let svg: string;
  try {
    svg = loadBwip().toSVG(options(p, text));
  } catch (err) {
    throw refused(id, p, err);
  }
  const width = cssLength(p.width, TWO_DIMENSIONAL.has(p.symbology) ? '30mm' : '60mm');
  // The SVG is bwip-js's own drawing (paths and a viewBox): nothing of the value is markup in it.
  return `<div class="fw-barcode" style="width:${width}">${svg}</div>`;
}

/** A PNG of the code, for workbooks. */
export async function barcodePng(id: string, p: BarcodeProps, text: string): Promise<Buffer> {
  try {
    return await loadBwip().toBuffer(options(p, text));
  } catch (err) {
    throw refused(id, p, err);
  }
}

/** Whether a value is literal (no placeholder): then it can be checked on save. */
export const isLiteral = (value: string): boolean => !value.includes('{{');
