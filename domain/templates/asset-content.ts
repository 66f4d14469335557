import * as fontkit from 'fontkit';
import { imageSize } from 'image-size';
import sanitizeHtml from 'sanitize-html';
import { AppError } from '../errors';
import { sniffImageFormat } from '../identity/avatar-image';

/**
 * What an uploaded asset is (docs/templates.md "Assets and fonts"), decided by its own bytes,
 * never by the name or type the upload claims: a PNG, JPEG, WebP or SVG image, or a TTF, OTF or
 * WOFF2 font. Runs in the evaluation workers (domain/checks.ts `assetContent`): a tenant's file is
 * parsed there, within the workers' memory limit and budget, not on the loop that serves HTTP.
 */

export type AssetKind = 'image' | 'font';
export type AssetMediaType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/svg+xml' | 'font/ttf' | 'font/otf' | 'font/woff2';

export interface CheckedAsset {
  kind: AssetKind;
  mediaType: AssetMediaType;
  extension: 'png' | 'jpg' | 'webp' | 'svg' | 'ttf' | 'otf' | 'woff2';
  /** The bytes to store: the upload itself, or for SVG the cleaned document (UTF-8). */
  bytes: Uint8Array;
  /** Images: the size in pixels (SVG: its width and height, else its viewBox), when known. */
  width?: number;
  height?: number;
  /** Fonts: the family (typographic family preferred), style and weight, as the font says. */
  fontFamily?: string;
  fontStyle?: 'normal' | 'italic';
  fontWeight?: number;
  /** SVG: whether cleaning removed anything. */
  sanitized?: boolean;
}

export const ASSET_LIMITS = {
  imageMaxBytes: 5 * 1024 * 1024,
  svgMaxBytes: 1024 * 1024,
  fontMaxBytes: 10 * 1024 * 1024,
  /** Either side of a picture, in pixels: a small file can claim a huge picture (a decompression bomb). */
  imageMaxPixels: 10_000,
  /** What a WOFF2 font may unpack to, checked against its header before anything is unpacked. */
  woff2MaxUnpackedBytes: 30 * 1024 * 1024,
} as const;

function refused(reason: string): AppError {
  return new AppError('ERR_ASSET_002', `File is not a supported image or font: ${reason}`, { field: 'file', reason });
}

function tooLarge(limit: number, what: string): AppError {
  return new AppError('ERR_ASSET_003', `${what} may be at most ${limit} bytes`, { field: 'file', limit });
}

export function checkAssetContent(input: Uint8Array): CheckedAsset {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const magic = bytes.subarray(0, 4).toString('latin1');
  if (magic === '\u0000\u0001\u0000\u0000' || magic === 'true' || magic === 'OTTO' || magic === 'wOF2') return checkFont(bytes, magic);
  if (magic === 'wOFF' || magic === 'ttcf') throw refused(magic === 'wOFF' ? 'WOFF 1 fonts are not taken: send the TTF, OTF or WOFF2' : 'font collections are not taken: send one font');
  const raster = sniffImageFormat(bytes);
  if (raster) return checkRaster(bytes, raster.contentType, raster.extension);
  return checkSvg(bytes);
}

function checkRaster(bytes: Buffer, mediaType: 'image/png' | 'image/jpeg' | 'image/webp', extension: 'png' | 'jpg' | 'webp'): CheckedAsset {
  if (bytes.length > ASSET_LIMITS.imageMaxBytes) throw tooLarge(ASSET_LIMITS.imageMaxBytes, 'An image');
  let size: { width?: number; height?: number };
  try {
    size = imageSize(bytes);
  } catch (err) {
    throw refused(`the ${extension.toUpperCase()} header cannot be read (${(err as Error).message})`);
  }
  const { width, height } = size;
  if (!width || !height) throw refused(`the ${extension.toUpperCase()} has no size`);
  if (width > ASSET_LIMITS.imageMaxPixels || height > ASSET_LIMITS.imageMaxPixels) {
    throw refused(`the picture is ${width} × ${height} pixels; at most ${ASSET_LIMITS.imageMaxPixels} either way`);
  }
  return { kind: 'image', mediaType, extension, bytes, width, height };
}

/** SVG elements kept: drawing, text, paint servers, structure. No script, foreignObject, style, animation or link. */
const SVG_TAGS = [
  'svg', 'g', 'defs', 'symbol', 'use', 'title', 'desc', 'metadata',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon',
  'text', 'tspan', 'textPath',
  'linearGradient', 'radialGradient', 'stop', 'pattern', 'clipPath', 'mask', 'marker', 'image',
  'filter', 'feGaussianBlur', 'feOffset', 'feBlend', 'feColorMatrix', 'feFlood', 'feComposite', 'feMerge', 'feMergeNode',
];

/** Presentation and geometry attributes; `href`s and `url()`s are checked separately (same-document only). */
const SVG_ATTRIBUTES = [
  'id', 'class', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'rx', 'ry', 'fx', 'fy', 'd', 'points', 'width', 'height',
  'viewBox', 'preserveAspectRatio', 'transform', 'version', 'xmlns', 'xmlns:xlink', 'href', 'xlink:href',
  'fill', 'fill-opacity', 'fill-rule', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-linecap', 'stroke-linejoin', 'stroke-dasharray',
  'stroke-dashoffset', 'stroke-miterlimit', 'opacity', 'color', 'display', 'visibility', 'clip-path', 'clip-rule', 'mask', 'filter',
  'font-family', 'font-size', 'font-weight', 'font-style', 'text-anchor', 'dominant-baseline', 'alignment-baseline', 'letter-spacing',
  'dx', 'dy', 'rotate', 'textLength', 'lengthAdjust', 'startOffset',
  'offset', 'stop-color', 'stop-opacity', 'gradientUnits', 'gradientTransform', 'spreadMethod',
  'patternUnits', 'patternContentUnits', 'patternTransform', 'clipPathUnits', 'maskUnits', 'maskContentUnits',
  'markerWidth', 'markerHeight', 'refX', 'refY', 'orient', 'markerUnits', 'marker-start', 'marker-mid', 'marker-end',
  'stdDeviation', 'in', 'in2', 'result', 'mode', 'type', 'values', 'operator', 'k1', 'k2', 'k3', 'k4', 'flood-color', 'flood-opacity',
  'filterUnits', 'primitiveUnits', 'style',
];

/** A reference inside the file (`#id`), or an embedded raster picture: the only addresses an SVG keeps. */
const LOCAL_REF = /^#[\w.-]+$/;
const EMBEDDED_PICTURE = /^data:image\/(?:png|jpeg|webp);base64,[A-Za-z0-9+/=\s]+$/;
/** A `url(…)` that is not `url(#id)`: an address outside the file. */
const FOREIGN_URL = /url\(\s*(?!['"]?#)/i;

function checkSvg(bytes: Buffer): CheckedAsset {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refused('not a PNG, JPEG, WebP, SVG, TTF, OTF or WOFF2 file');
  }
  const head = text.replace(/^\uFEFF/, '').slice(0, 4096);
  if (!/^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE[^>[]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(head)) {
    if (/<!DOCTYPE[^>]*\[|<!ENTITY/i.test(head)) throw refused('an SVG may not declare entities (a DOCTYPE with an internal subset)');
    throw refused('not a PNG, JPEG, WebP, SVG, TTF, OTF or WOFF2 file');
  }
  if (bytes.length > ASSET_LIMITS.svgMaxBytes) throw tooLarge(ASSET_LIMITS.svgMaxBytes, 'An SVG');
  if (/<!ENTITY/i.test(text)) throw refused('an SVG may not declare entities');
  let removed = false;
  const cleaned = sanitizeHtml(text, {
    parser: { xmlMode: true, lowerCaseTags: false, lowerCaseAttributeNames: false, decodeEntities: true },
    allowedTags: SVG_TAGS,
    allowedAttributes: { '*': SVG_ATTRIBUTES },
    allowedSchemes: [],
    allowedSchemesAppliedToAttributes: [],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: ['script', 'style', 'foreignObject', 'textarea', 'noscript', 'iframe'],
    // Every element is written with its end tag (valid XML, whatever the source wrote).
    selfClosing: [],
    // sanitize-html's own style parser is for HTML; SVG styles are checked here like every attribute.
    parseStyleAttributes: false,
    transformTags: {
      '*': (tagName, attribs) => {
        const kept: Record<string, string> = {};
        for (const [name, value] of Object.entries(attribs)) {
          const isRef = name === 'href' || name === 'xlink:href';
          const ok = isRef ? LOCAL_REF.test(value.trim()) || (tagName === 'image' && EMBEDDED_PICTURE.test(value.trim())) : !FOREIGN_URL.test(value) && !/javascript:|expression\s*\(|@import/i.test(value);
          if (ok && !/^on/i.test(name)) kept[name] = value;
          else removed = true;
        }
        return { tagName, attribs: kept };
      },
    },
    exclusiveFilter: (frame) => {
      // An <image> left without a picture, a <use> left without a target: nothing to draw.
      if ((frame.tag === 'image' || frame.tag === 'use') && !frame.attribs.href && !frame.attribs['xlink:href']) {
        removed = true;
        return true;
      }
      return false;
    },
    onOpenTag: (tagName) => {
      if (!SVG_TAGS.includes(tagName)) removed = true;
    },
  } as sanitizeHtml.IOptions);
  const svg = `<?xml version="1.0" encoding="UTF-8"?>\n${cleaned.trim()}`;
  if (!/^<\?xml[^>]*\?>\s*<svg[\s>]/.test(svg)) throw refused('the SVG has no <svg> root element left after cleaning');
  return { kind: 'image', mediaType: 'image/svg+xml', extension: 'svg', bytes: Buffer.from(svg, 'utf8'), ...svgSize(svg), sanitized: removed };
}

/** The root element's width and height in pixels (plain numbers or px), else the viewBox's. */
function svgSize(svg: string): { width?: number; height?: number } {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(root)?.[1];
  const px = (value: string | undefined) => (value && /^\s*\d+(?:\.\d+)?(?:px)?\s*$/.test(value) ? Math.round(parseFloat(value)) : undefined);
  const width = px(attr('width'));
  const height = px(attr('height'));
  if (width && height) return { width, height };
  const box = attr('viewBox')?.trim().split(/[\s,]+/).map(Number);
  return box && box.length === 4 && box.every(Number.isFinite) ? { width: Math.round(box[2]), height: Math.round(box[3]) } : {};
}

/** Family names CSS can carry as a quoted string in the page (and a template can name). */
const SAFE_FAMILY = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,99}$/;

function checkFont(bytes: Buffer, magic: string): CheckedAsset {
  if (bytes.length > ASSET_LIMITS.fontMaxBytes) throw tooLarge(ASSET_LIMITS.fontMaxBytes, 'A font');
  const format = magic === 'wOF2' ? ({ mediaType: 'font/woff2', extension: 'woff2' } as const) : magic === 'OTTO' ? ({ mediaType: 'font/otf', extension: 'otf' } as const) : ({ mediaType: 'font/ttf', extension: 'ttf' } as const);
  if (magic === 'wOF2') {
    // WOFF2 header: signature, flavor, length, numTables, reserved, totalSfntSize (what it unpacks to).
    if (bytes.length < 48) throw refused('the WOFF2 header is cut short');
    const unpacked = bytes.readUInt32BE(16);
    if (unpacked > ASSET_LIMITS.woff2MaxUnpackedBytes) throw refused(`the WOFF2 font says it unpacks to ${unpacked} bytes; at most ${ASSET_LIMITS.woff2MaxUnpackedBytes}`);
    if (bytes.readUInt32BE(8) !== bytes.length) throw refused('the WOFF2 header gives another length than the file has');
  }
  let font: fontkit.Font;
  let family: string;
  let weight: number;
  let italic: boolean;
  try {
    const opened = fontkit.create(bytes);
    if (!('familyName' in opened)) throw new Error('a font collection');
    font = opened;
    family = (font.getName('preferredFamily', 'en') ?? font.familyName ?? '').trim();
    const os2 = font['OS/2'] as { usWeightClass?: number; fsSelection?: { italic?: boolean } } | undefined;
    weight = os2?.usWeightClass ?? 400;
    italic = Boolean(os2?.fsSelection?.italic) || font.italicAngle !== 0;
    if (!(font.numGlyphs > 1)) throw new Error('it has no glyphs');
    // Reading one glyph's outline proves the tables behind the header are there.
    font.glyphForCodePoint(0x41).path;
  } catch (err) {
    throw refused(`the font cannot be read (${(err as Error).message})`);
  }
  if (!family) throw refused('the font has no family name');
  if (!SAFE_FAMILY.test(family)) throw refused(`the font's family name '${family.slice(0, 100)}' has characters a template cannot name (letters, digits, spaces, - and _)`);
  const fontWeight = Math.min(900, Math.max(100, Math.round(weight / 100) * 100));
  return { kind: 'font', ...format, bytes, fontFamily: family, fontStyle: italic ? 'italic' : 'normal', fontWeight };
}
