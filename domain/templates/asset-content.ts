import { brotliDecompressSync } from 'node:zlib';
import type * as Fontkit from 'fontkit';
import { imageSize } from 'image-size';
import sanitizeHtml from 'sanitize-html';
import { AppError } from '../errors';
import { sniffImageFormat } from '../identity/avatar-image';

/** fontkit, loaded when a font is first checked (see loadEcharts in components/chart.ts). */
const loadFontkit = (): typeof Fontkit => require('fontkit') as typeof Fontkit;

/**
 * What an uploaded asset is (docs/templates.md "Assets and fonts"), decided by its own bytes,
 * never by the name or type the upload claims: a PNG, JPEG, WebP or SVG image, or a TTF, OTF or
 * WOFF2 font. Runs in the evaluation workers (domain/checks.ts `assetContent`): a tenant's file is
 * parsed there, within the workers' memory limit and budget, not on the loop that serves HTTP. Every
 * step is bounded by the file's size before a library reads it, so a hostile file costs about what
 * an honest one of its size does.
 */

export type AssetKind = 'image' | 'font' | 'pdf';
export type AssetMediaType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/svg+xml' | 'font/ttf' | 'font/otf' | 'font/woff2' | 'application/pdf';

export interface CheckedAsset {
  kind: AssetKind;
  mediaType: AssetMediaType;
  extension: 'png' | 'jpg' | 'webp' | 'svg' | 'ttf' | 'otf' | 'woff2' | 'pdf';
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
  /**
   * A PDF a template appends (terms and conditions). Only its first bytes are read here: the PDF
   * tools' processes parse it when a document appends it (ERR_OUTPUT_003 if they cannot).
   */
  pdfMaxBytes: 10 * 1024 * 1024,
  /** Either side of a picture, in pixels: a small file can claim a huge picture (a decompression bomb). */
  imageMaxPixels: 10_000,
  /** What a WOFF2 font may unpack to, checked against its header and table directory before anything is unpacked. */
  woff2MaxUnpackedBytes: 30 * 1024 * 1024,
  /**
   * Elements an SVG draws once every `<use>` is expanded: a few nested `<use>`s of `<use>`s make
   * billions of them from a few KB (the SVG form of billion laughs). An SVG of 1 MB without
   * `<use>` has fewer than this.
   */
  svgMaxDrawnElements: 250_000,
  /** How deep an SVG's elements may nest (drawings nest a few dozen): the cleaner holds a frame for each open element. */
  svgMaxDepth: 256,
} as const;

/** The largest file of any kind: anything larger is refused before its format is looked at. */
const ASSET_MAX_BYTES = Math.max(ASSET_LIMITS.imageMaxBytes, ASSET_LIMITS.svgMaxBytes, ASSET_LIMITS.fontMaxBytes, ASSET_LIMITS.pdfMaxBytes);

function refused(reason: string): AppError {
  return new AppError('ERR_ASSET_002', `File is not a supported image or font: ${reason}`, { field: 'file', reason });
}

function tooLarge(limit: number, message: string): AppError {
  return new AppError('ERR_ASSET_003', message, { field: 'file', limit });
}

export function checkAssetContent(input: Uint8Array): CheckedAsset {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (bytes.length > ASSET_MAX_BYTES) throw tooLarge(ASSET_MAX_BYTES, `An asset may be at most ${ASSET_MAX_BYTES} bytes`);
  const magic = bytes.toString('latin1', 0, 4);
  if (magic === '\u0000\u0001\u0000\u0000' || magic === 'true' || magic === 'OTTO' || magic === 'wOF2') return checkFont(bytes, magic);
  if (magic === 'wOFF') throw refused('WOFF 1 fonts are not taken: send the TTF, OTF or WOFF2');
  if (magic === 'ttcf') throw refused('font collections are not taken: send one font');
  if (bytes.toString('latin1', 0, 5) === '%PDF-') {
    if (bytes.length > ASSET_LIMITS.pdfMaxBytes) throw tooLarge(ASSET_LIMITS.pdfMaxBytes, `A PDF may be at most ${ASSET_LIMITS.pdfMaxBytes} bytes`);
    return { kind: 'pdf', mediaType: 'application/pdf', extension: 'pdf', bytes };
  }
  const raster = sniffImageFormat(bytes);
  if (raster) return checkRaster(bytes, raster.contentType, raster.extension);
  return checkSvg(bytes);
}

// --- PNG, JPEG, WebP ---

/** The pixel size from the header, the JPEG's EXIF orientation applied (as Chromium shows it); refused past the pixel cap. */
function rasterSize(bytes: Uint8Array, extension: 'png' | 'jpg' | 'webp'): { width: number; height: number } {
  const name = extension.toUpperCase();
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(bytes);
  } catch (err) {
    throw refused(`the ${name} header cannot be read (${(err as Error).message})`);
  }
  // image-size names the types as the extensions are named here.
  if (size.type !== extension) throw refused(`the ${name} header cannot be read`);
  const turned = (size.orientation ?? 1) >= 5;
  const width = turned ? size.height : size.width;
  const height = turned ? size.width : size.height;
  if (!width || !height) throw refused(`the ${name} has no size`);
  if (width > ASSET_LIMITS.imageMaxPixels || height > ASSET_LIMITS.imageMaxPixels) {
    throw refused(`the picture is ${width} × ${height} pixels; at most ${ASSET_LIMITS.imageMaxPixels} either way`);
  }
  return { width, height };
}

function checkRaster(bytes: Buffer, mediaType: 'image/png' | 'image/jpeg' | 'image/webp', extension: 'png' | 'jpg' | 'webp'): CheckedAsset {
  if (bytes.length > ASSET_LIMITS.imageMaxBytes) throw tooLarge(ASSET_LIMITS.imageMaxBytes, `An image may be at most ${ASSET_LIMITS.imageMaxBytes} bytes`);
  return { kind: 'image', mediaType, extension, bytes, ...rasterSize(bytes, extension) };
}

// --- SVG ---

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';

/** SVG elements kept: drawing, text, paint servers, structure, simple filters. No script, foreignObject, style, animation, link or feImage. */
const SVG_TAGS = [
  'svg', 'g', 'defs', 'symbol', 'use', 'title', 'desc',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'image',
  'text', 'tspan', 'textPath',
  'linearGradient', 'radialGradient', 'stop', 'pattern', 'clipPath', 'mask', 'marker',
  'filter', 'feGaussianBlur', 'feOffset', 'feBlend', 'feColorMatrix', 'feFlood', 'feComposite', 'feMerge', 'feMergeNode', 'feDropShadow',
];

/** Dropped with their content (the others' text is kept, their markup dropped). */
const DROPPED_WITH_CONTENT = ['script', 'style', 'foreignObject', 'metadata', 'iframe', 'noscript', 'textarea'];

/** Properties a `style` attribute may set: the presentation attributes' (all CSS), nothing that loads or lays out a page. */
const STYLE_PROPERTIES = new Set([
  'fill', 'fill-opacity', 'fill-rule', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-linecap', 'stroke-linejoin', 'stroke-dasharray',
  'stroke-dashoffset', 'stroke-miterlimit', 'opacity', 'color', 'display', 'visibility', 'overflow', 'clip-path', 'clip-rule', 'mask', 'filter',
  'font-family', 'font-size', 'font-weight', 'font-style', 'font-variant', 'text-anchor', 'dominant-baseline', 'alignment-baseline',
  'baseline-shift', 'letter-spacing', 'word-spacing', 'text-decoration', 'writing-mode', 'direction', 'unicode-bidi',
  'stop-color', 'stop-opacity', 'flood-color', 'flood-opacity', 'marker-start', 'marker-mid', 'marker-end',
  'paint-order', 'vector-effect', 'shape-rendering', 'text-rendering', 'image-rendering', 'color-interpolation', 'color-interpolation-filters',
  'mix-blend-mode', 'isolation', 'transform', 'transform-origin', 'transform-box', 'white-space',
]);

/** Attributes kept: geometry, presentation, structure. `href`s and every value are checked too (keptValue). */
const SVG_ATTRIBUTES = new Set([
  ...STYLE_PROPERTIES, 'style',
  'id', 'class', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'rx', 'ry', 'fx', 'fy', 'fr', 'd', 'points', 'width', 'height', 'pathLength',
  'viewBox', 'preserveAspectRatio', 'version', 'baseProfile', 'xmlns', 'xmlns:xlink', 'xml:space', 'xml:lang', 'lang', 'href', 'xlink:href',
  'dx', 'dy', 'rotate', 'textLength', 'lengthAdjust', 'startOffset', 'method', 'spacing', 'side',
  'offset', 'gradientUnits', 'gradientTransform', 'spreadMethod',
  'patternUnits', 'patternContentUnits', 'patternTransform', 'clipPathUnits', 'maskUnits', 'maskContentUnits',
  'markerWidth', 'markerHeight', 'refX', 'refY', 'orient', 'markerUnits',
  'stdDeviation', 'in', 'in2', 'result', 'mode', 'type', 'values', 'operator', 'k1', 'k2', 'k3', 'k4', 'edgeMode',
  'filterUnits', 'primitiveUnits',
]);

/** CSS functions a value may call: colours, arithmetic, transforms, filter effects; `url()` only as `url(#id)`. Nothing that loads. */
const CSS_FUNCTIONS = new Set([
  'url', 'rgb', 'rgba', 'hsl', 'hsla', 'hwb', 'lab', 'lch', 'oklab', 'oklch', 'color', 'calc', 'min', 'max', 'clamp',
  'matrix', 'translate', 'translatex', 'translatey', 'scale', 'scalex', 'scaley', 'rotate', 'skewx', 'skewy',
  'blur', 'brightness', 'contrast', 'drop-shadow', 'grayscale', 'hue-rotate', 'invert', 'opacity', 'saturate', 'sepia',
]);

/** A reference inside the file (`#id`): the only address an SVG keeps, but for embedded pictures. */
const LOCAL_REF = /^#[\w.:-]+$/;
const LOCAL_URL = /^\s*(['"]?)#[\w.:-]+\1\s*$/;
const EMBEDDED_PICTURE = /^data:image\/(?:png|jpeg|webp);base64,([A-Za-z0-9+/=\s]+)$/;
const IDENT_CHAR = /[\w-]/;

/**
 * Whether a CSS value (an attribute's or a style declaration's) loads or runs nothing: no escape
 * (`u\72l(` is `url(`), no at-rule, no `javascript:`, and every function one of CSS_FUNCTIONS,
 * `url()` only to an `#id` (Chromium would fetch `image-set("…")`, `url(…)`, `src(…)`). The
 * function names are read backwards from each `(`: one pass, whatever the value.
 */
function safeCss(value: string): boolean {
  if (/[\\@{}]|javascript:/i.test(value)) return false;
  for (let open = value.indexOf('('); open >= 0; open = value.indexOf('(', open + 1)) {
    let start = open;
    while (start > 0 && IDENT_CHAR.test(value[start - 1])) start -= 1;
    const name = value.slice(start, open).toLowerCase();
    // A bare parenthesis (text in a font name, a block) calls nothing.
    if (!name) continue;
    if (!CSS_FUNCTIONS.has(name)) return false;
    if (name === 'url') {
      const close = value.indexOf(')', open);
      if (close < 0 || !LOCAL_URL.test(value.slice(open + 1, close))) return false;
    }
  }
  return true;
}

/** A `style` attribute with only allowed properties of safe values; undefined when nothing is left. */
function cleanStyle(style: string): { value?: string; removed: boolean } {
  const kept: string[] = [];
  let removed = false;
  for (const declaration of style.split(';')) {
    if (!declaration.trim()) continue;
    const colon = declaration.indexOf(':');
    const property = colon > 0 ? declaration.slice(0, colon).trim().toLowerCase() : '';
    const value = declaration.slice(colon + 1).trim();
    if (STYLE_PROPERTIES.has(property) && value && safeCss(value)) kept.push(`${property}:${value}`);
    else removed = true;
  }
  return { value: kept.length ? kept.join(';') : undefined, removed };
}

/** An embedded raster picture (`data:` URL of an `<image>`), held to the same rules as an uploaded one. */
function safeEmbeddedPicture(href: string): boolean {
  const base64 = EMBEDDED_PICTURE.exec(href)?.[1];
  if (!base64) return false;
  const picture = Buffer.from(base64, 'base64');
  const format = sniffImageFormat(picture);
  if (!format) return false;
  try {
    rasterSize(picture, format.extension);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the root element starts, after what may come before it (an XML declaration, processing
 * instructions, comments, a DOCTYPE without an internal subset, whitespace); undefined when the
 * file is no SVG. Read with indexOf, not one pattern: a pattern of repeated optional comments
 * backtracks exponentially on a file that is not an SVG.
 */
function svgRootStart(text: string): number | undefined {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (at < text.length && ' \t\r\n'.includes(text[at])) at += 1;
    const end = (close: string) => {
      const found = text.indexOf(close, at);
      return found < 0 ? undefined : found + close.length;
    };
    let next: number | undefined;
    if (text.startsWith('<?', at)) next = end('?>');
    else if (text.startsWith('<!--', at)) next = end('-->');
    else if (text.slice(at, at + 9).toUpperCase() === '<!DOCTYPE') {
      next = end('>');
      // An internal subset declares entities (billion laughs) or attributes the cleaner never sees.
      if (text.slice(at, next).includes('[')) throw refused('an SVG may not declare entities (a DOCTYPE with an internal subset)');
    } else break;
    if (next === undefined) return undefined;
    at = next;
  }
  return text.startsWith('<svg', at) && /[\s>/]/.test(text[at + 4] ?? '') ? at : undefined;
}

/** How far into the file (bytes) the root element must start: past that, it is taken for no SVG. */
const SVG_PROLOG_MAX_BYTES = 64 * 1024;

/**
 * The elements as the parser opens them: `parent` links (document order: a parent comes before its
 * children), ids, and the `#id` each `<use>` draws, to count what the SVG draws with every `<use>`
 * expanded. Typed arrays sized by the text (an element takes at least 3 characters): the count
 * costs a few bytes an element in a worker with a small heap.
 */
class ElementTree {
  readonly parent: Int32Array;
  readonly ids = new Map<string, number>();
  readonly uses = new Map<number, string>();
  count = 0;
  private readonly open: number[] = [];

  constructor(chars: number) {
    this.parent = new Int32Array(Math.ceil(chars / 3) + 1);
  }

  get depth(): number {
    return this.open.length;
  }

  opened(name: string, attribs: Record<string, string>): void {
    const index = this.count++;
    this.parent[index] = this.open.at(-1) ?? -1;
    this.open.push(index);
    if (attribs.id && !this.ids.has(attribs.id)) this.ids.set(attribs.id, index);
    const ref = attribs.href ?? attribs['xlink:href'];
    if (name === 'use' && ref && LOCAL_REF.test(ref.trim())) this.uses.set(index, ref.trim().slice(1));
  }

  closed(): void {
    this.open.pop();
  }

  /**
   * Elements drawn with every `<use>` expanded: an element counts once, plus its children, plus
   * (a `<use>`) what it points at. Computed once per element (memoised, without recursion: a chain
   * of `<use>`s is as long as the file makes it), capped past `limit`. A `<use>` in a cycle draws
   * nothing in Chromium: it counts 0 here.
   */
  drawn(limit: number): number {
    const n = this.count;
    // Children lists from the parent links (counting sort, CSR form).
    const first = new Int32Array(n + 1);
    for (let i = 1; i < n; i += 1) first[this.parent[i] + 1] += 1;
    for (let i = 0; i < n; i += 1) first[i + 1] += first[i];
    const children = new Int32Array(Math.max(n - 1, 0));
    const fill = first.slice(0, n);
    for (let i = 1; i < n; i += 1) children[fill[this.parent[i]]++] = i;
    const target = (i: number) => {
      const id = this.uses.get(i);
      return id === undefined ? -1 : (this.ids.get(id) ?? -1);
    };
    const weight = new Float64Array(n);
    // 0 not seen, 1 being counted (its dependencies pending), 2 counted.
    const state = new Uint8Array(n);
    const stack: number[] = [0];
    while (stack.length) {
      const top = stack.pop()!;
      if (top >= 0) {
        if (state[top] !== 0) continue;
        state[top] = 1;
        stack.push(~top);
        for (let c = first[top]; c < first[top + 1]; c += 1) if (state[children[c]] === 0) stack.push(children[c]);
        const t = target(top);
        if (t >= 0 && state[t] === 0) stack.push(t);
      } else {
        const i = ~top;
        let sum = 1;
        for (let c = first[i]; c < first[i + 1]; c += 1) sum += weight[children[c]];
        const t = target(i);
        if (t >= 0 && state[t] === 2) sum += weight[t];
        weight[i] = Math.min(sum, limit + 1);
        state[i] = 2;
      }
    }
    return n ? weight[0] : 0;
  }
}

/** Characters XML 1.0 does not allow in a document (a decoded `&#1;`): dropped, so Chromium parses what is stored. */
const NOT_XML_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function checkSvg(bytes: Buffer): CheckedAsset {
  const notSupported = () => refused('not a PNG, JPEG, WebP, SVG, TTF, OTF or WOFF2 file');
  // What precedes the root is read from the file's start only: whether it is an SVG at all is known before its size is judged.
  const start = svgRootStart(bytes.toString('utf8', 0, SVG_PROLOG_MAX_BYTES));
  if (start === undefined) throw notSupported();
  if (bytes.length > ASSET_LIMITS.svgMaxBytes) throw tooLarge(ASSET_LIMITS.svgMaxBytes, `An SVG may be at most ${ASSET_LIMITS.svgMaxBytes} bytes`);
  let text: string;
  try {
    // The BOM kept, as in the head read above: `start` counts it.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw refused('an SVG must be UTF-8 text');
  }
  if (/<!ENTITY/i.test(text)) throw refused('an SVG may not declare entities');

  let removed = false;
  const tree = new ElementTree(text.length);
  let rootAttribs: Record<string, string> = {};
  let rootClosed = false;
  const cleaned = sanitizeHtml(text.slice(start), {
    parser: { xmlMode: true, lowerCaseTags: false, lowerCaseAttributeNames: false, decodeEntities: true },
    allowedTags: SVG_TAGS,
    allowedAttributes: { '*': [...SVG_ATTRIBUTES] },
    allowedSchemes: [],
    allowedSchemesAppliedToAttributes: [],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: DROPPED_WITH_CONTENT,
    // Every element is written with its end tag (valid XML, whatever the source wrote).
    selfClosing: [],
    // sanitize-html's own style parser is for HTML; SVG styles are checked here like every attribute.
    parseStyleAttributes: false,
    onOpenTag: (tagName: string, attribs: Record<string, string>) => {
      // A second root would make the file no XML; Chromium would show nothing.
      if (rootClosed) throw refused('an SVG has one root element; this one has more after it');
      if (tree.depth >= ASSET_LIMITS.svgMaxDepth) throw refused(`the SVG's elements nest deeper than ${ASSET_LIMITS.svgMaxDepth} levels`);
      tree.opened(tagName, attribs);
      if (!SVG_TAGS.includes(tagName)) removed = true;
    },
    onCloseTag: () => {
      tree.closed();
      if (tree.depth === 0) rootClosed = true;
    },
    // Text after the root element (XML allows none there).
    textFilter: (text: string) => {
      if (!rootClosed) return text;
      if (text.trim()) removed = true;
      return '';
    },
    transformTags: {
      '*': (tagName: string, attribs: Record<string, string>) => {
        const kept: Record<string, string> = {};
        for (const [name, value] of Object.entries(attribs)) {
          const ok = keptValue(tagName, name, value);
          if (ok.value !== undefined) kept[name] = ok.value;
          if (ok.removed) removed = true;
        }
        // The root carries the namespaces, whatever the file wrote: without them Chromium draws no SVG
        // (and an `xlink:href` without its prefix declared is no XML).
        if (tree.depth === 1) {
          Object.assign(kept, { xmlns: SVG_NS, 'xmlns:xlink': XLINK_NS });
          rootAttribs = kept;
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
  } as sanitizeHtml.IOptions);
  const drawn = tree.drawn(ASSET_LIMITS.svgMaxDrawnElements);
  if (drawn > ASSET_LIMITS.svgMaxDrawnElements) {
    throw refused(`the SVG draws more than ${ASSET_LIMITS.svgMaxDrawnElements} elements once its <use> elements are expanded`);
  }
  const body = cleaned.trim().replace(NOT_XML_CHARS, () => {
    removed = true;
    return '';
  });
  if (!body.startsWith('<svg')) throw refused('the SVG has no <svg> root element left after cleaning');
  const svg = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
  return { kind: 'image', mediaType: 'image/svg+xml', extension: 'svg', bytes: Buffer.from(svg, 'utf8'), ...svgSize(rootAttribs), sanitized: removed };
}

/** An attribute as it is kept: its value (undefined: dropped) and whether anything of it was removed. */
function keptValue(tagName: string, name: string, value: string): { value?: string; removed: boolean } {
  const trimmed = value.trim();
  // Empty values are dropped: sanitize-html would write a name without `=""`, which is no XML.
  if (!trimmed) return { removed: true };
  if (!SVG_ATTRIBUTES.has(name)) return { removed: true };
  if (name === 'href' || name === 'xlink:href') {
    const ok = LOCAL_REF.test(trimmed) || (tagName === 'image' && safeEmbeddedPicture(trimmed));
    return ok ? { value: trimmed, removed: false } : { removed: true };
  }
  if (name === 'xmlns' || name === 'xmlns:xlink') return trimmed === (name === 'xmlns' ? SVG_NS : XLINK_NS) ? { value: trimmed, removed: false } : { removed: true };
  if (name === 'style') return cleanStyle(value);
  return safeCss(value) ? { value, removed: false } : { removed: true };
}

const SVG_MAX_KNOWN_SIDE = 1_000_000;

/** CSS pixels per unit of an absolute length. */
const PX_PER_UNIT: Record<string, number> = { '': 1, px: 1, pt: 4 / 3, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 };

/** The root's width and height in pixels (absolute lengths), the one missing taken from the viewBox's ratio, else the viewBox's. */
function svgSize(root: Record<string, string>): { width?: number; height?: number } {
  const length = (value: string | undefined) => {
    const m = value === undefined ? null : /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(px|pt|pc|in|cm|mm|)\s*$/.exec(value);
    const px = m ? Number(m[1]) * PX_PER_UNIT[m[2]] : NaN;
    return px > 0 ? px : undefined;
  };
  const box = root.viewBox?.trim().split(/[\s,]+/).map(Number);
  const [boxWidth, boxHeight] = box && box.length === 4 && box.every(Number.isFinite) && box[2] > 0 && box[3] > 0 ? [box[2], box[3]] : [];
  let width = length(root.width);
  let height = length(root.height);
  if (boxWidth && boxHeight) {
    if (width && !height) height = (width * boxHeight) / boxWidth;
    else if (height && !width) width = (height * boxWidth) / boxHeight;
    else if (!width && !height) [width, height] = [boxWidth, boxHeight];
  }
  // Whole pixels, at least one; a side past a million pixels is no size a page shows (nor one the stored integer takes): unknown.
  const whole = (px: number | undefined) => (px && px <= SVG_MAX_KNOWN_SIDE ? Math.max(1, Math.round(px)) : undefined);
  const [w, h] = [whole(width), whole(height)];
  return w && h ? { width: w, height: h } : {};
}

// --- TTF, OTF, WOFF2 ---

/** A table of the font, as bytes of the file (TTF, OTF) or of the unpacked WOFF2 stream; WOFF2 glyf/loca may be transformed. */
interface FontTable {
  bytes: Buffer;
  transformed: boolean;
}

/** The sfnt table directory (TTF, OTF), every table within the file: a font cut short is found here. */
function sfntTables(bytes: Buffer): Map<string, FontTable> {
  if (bytes.length < 12) throw refused('the font is cut short: no table directory');
  const numTables = bytes.readUInt16BE(4);
  if (numTables === 0 || 12 + 16 * numTables > bytes.length) throw refused('the font is cut short: its table directory is incomplete');
  const tables = new Map<string, FontTable>();
  for (let i = 0; i < numTables; i += 1) {
    const entry = 12 + 16 * i;
    const tag = bytes.toString('latin1', entry, entry + 4);
    const offset = bytes.readUInt32BE(entry + 8);
    const length = bytes.readUInt32BE(entry + 12);
    if (offset + length > bytes.length) throw refused(`the font is cut short: its '${tag.trim()}' table ends past the end of the file`);
    tables.set(tag, { bytes: bytes.subarray(offset, offset + length), transformed: false });
  }
  return tables;
}

/** The table tags a WOFF2 directory names by number (WOFF2 specification, 5.1 "Known Table Tags"). */
const WOFF2_KNOWN_TAGS = [
  'cmap', 'head', 'hhea', 'hmtx', 'maxp', 'name', 'OS/2', 'post', 'cvt ', 'fpgm', 'glyf', 'loca', 'prep', 'CFF ', 'VORG', 'EBDT',
  'EBLC', 'gasp', 'hdmx', 'kern', 'LTSH', 'PCLT', 'VDMX', 'vhea', 'vmtx', 'BASE', 'GDEF', 'GPOS', 'GSUB', 'EBSC', 'JSTF', 'MATH',
  'CBDT', 'CBLC', 'COLR', 'CPAL', 'SVG ', 'sbix', 'acnt', 'avar', 'bdat', 'bloc', 'bsln', 'cvar', 'fdsc', 'feat', 'fmtx', 'fvar',
  'gvar', 'hsty', 'just', 'lcar', 'mort', 'morx', 'opbd', 'prop', 'trak', 'Zapf', 'Silf', 'Glat', 'Gloc', 'Feat', 'Sill',
];

/**
 * A WOFF2 font's tables, unpacked only once its header and directory say the result fits
 * woff2MaxUnpackedBytes: the header's totalSfntSize, and the sum of the tables' lengths, which is
 * what the unpacker allocates (fontkit trusts it; a few bytes of brotli can claim gigabytes). Node's
 * brotli unpacks with that as its output limit.
 */
function woff2Tables(bytes: Buffer): Map<string, FontTable> {
  const limit = ASSET_LIMITS.woff2MaxUnpackedBytes;
  const overLimit = (size: number) =>
    new AppError('ERR_ASSET_003', `A WOFF2 font may unpack to at most ${limit} bytes; this one says ${size}`, { field: 'file', limit, reason: `the WOFF2 font says it unpacks to ${size} bytes` });
  if (bytes.length < 48) throw refused('the WOFF2 header is cut short');
  if (bytes.toString('latin1', 4, 8) === 'ttcf') throw refused('font collections are not taken: send one font');
  if (bytes.readUInt32BE(8) !== bytes.length) throw refused('the WOFF2 header gives another length than the file has (cut short?)');
  const totalSfntSize = bytes.readUInt32BE(16);
  if (totalSfntSize > limit) throw overLimit(totalSfntSize);
  const numTables = bytes.readUInt16BE(12);
  const compressedSize = bytes.readUInt32BE(20);
  let at = 48;
  const uint8 = () => {
    if (at >= bytes.length) throw refused('the WOFF2 table directory is cut short');
    return bytes[at++];
  };
  // UIntBase128: at most 5 bytes, 7 bits each, no leading zeros, within 32 bits.
  const base128 = () => {
    let value = 0;
    for (let i = 0; i < 5; i += 1) {
      const byte = uint8();
      if (i === 0 && byte === 0x80) throw refused('the WOFF2 table directory is malformed');
      value = value * 128 + (byte & 0x7f);
      if (value > 0xffffffff) throw refused('the WOFF2 table directory is malformed');
      if (!(byte & 0x80)) return value;
    }
    throw refused('the WOFF2 table directory is malformed');
  };
  const entries: Array<{ tag: string; length: number; transformed: boolean }> = [];
  let streamSize = 0;
  for (let i = 0; i < numTables; i += 1) {
    const flags = uint8();
    const tag = (flags & 0x3f) === 0x3f ? String.fromCharCode(uint8(), uint8(), uint8(), uint8()) : WOFF2_KNOWN_TAGS[flags & 0x3f];
    const version = flags >> 6;
    const transformed = tag === 'glyf' || tag === 'loca' ? version === 0 : version !== 0;
    const origLength = base128();
    const length = transformed ? base128() : origLength;
    streamSize += length;
    if (streamSize > limit) throw overLimit(streamSize);
    entries.push({ tag, length, transformed });
  }
  if (at + compressedSize > bytes.length) throw refused('the WOFF2 font is cut short: its compressed data ends past the end of the file');
  let stream: Buffer;
  try {
    stream = brotliDecompressSync(bytes.subarray(at, at + compressedSize), { maxOutputLength: Math.max(streamSize, 1) });
  } catch {
    throw refused('the WOFF2 compressed data cannot be unpacked to the tables its directory lists');
  }
  if (stream.length !== streamSize) throw refused('the WOFF2 compressed data does not unpack to the tables its directory lists');
  const tables = new Map<string, FontTable>();
  let offset = 0;
  for (const { tag, length, transformed } of entries) {
    tables.set(tag, { bytes: stream.subarray(offset, offset + length), transformed });
    offset += length;
  }
  return tables;
}

/**
 * The strings of the name table fontkit decodes, all of them and each time a record names them:
 * 65,535 records that each name the same 64 KB are 4 GB of text from a table of 850 KB. Honest fonts
 * (their names in dozens of languages, a licence) hold well under this.
 */
const NAME_MAX_STRING_BYTES = 1024 * 1024;

function checkNameTable(name: Buffer): void {
  if (name.length < 6) throw refused('the name table is cut short');
  const count = name.readUInt16BE(2);
  if (6 + 12 * count > name.length) throw refused('the name table is cut short');
  let total = 0;
  for (let i = 0; i < count; i += 1) total += name.readUInt16BE(6 + 12 * i + 8);
  if (total > NAME_MAX_STRING_BYTES) throw refused(`the name table's records name ${total} bytes of text; at most ${NAME_MAX_STRING_BYTES}`);
}

/**
 * The glyph offsets of a TrueType font: as many as the font has glyphs (and one), in order, within
 * the glyf table, and some glyph with an outline. Chromium's font checker (OTS) refuses a font
 * whose loca fails this; read here without drawing a glyph, whose composites may nest without limit.
 */
function checkLoca(loca: Buffer, glyf: Buffer, numGlyphs: number, longOffsets: boolean): void {
  const size = longOffsets ? 4 : 2;
  if (loca.length < (numGlyphs + 1) * size) throw refused('the loca table has fewer entries than the font has glyphs');
  let previous = 0;
  for (let i = 0; i <= numGlyphs; i += 1) {
    const offset = longOffsets ? loca.readUInt32BE(i * 4) : loca.readUInt16BE(i * 2) * 2;
    if (offset < previous || offset > glyf.length) throw refused('the loca table points outside the glyf table');
    previous = offset;
  }
  if (previous === 0) throw refused('the font has no glyph outlines');
}

/** The tables of fontkit's Font read here, as it decodes them (its types name few of them). */
interface FontkitTables {
  maxp?: { numGlyphs?: number };
  cmap?: unknown;
  head?: { indexToLocFormat?: number; macStyle?: { italic?: boolean } };
  name?: unknown;
  post?: unknown;
  'OS/2'?: { usWeightClass?: number; fsSelection?: { italic?: boolean; oblique?: boolean } };
}

/** Family names CSS can carry as a quoted string in the page, and a template can name (asset-refs.ts fontFaceCss keeps to the same). */
const SAFE_FAMILY = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,99}$/;

function checkFont(bytes: Buffer, magic: string): CheckedAsset {
  if (bytes.length > ASSET_LIMITS.fontMaxBytes) throw tooLarge(ASSET_LIMITS.fontMaxBytes, `A font may be at most ${ASSET_LIMITS.fontMaxBytes} bytes`);
  const format =
    magic === 'wOF2' ? ({ mediaType: 'font/woff2', extension: 'woff2' } as const) : magic === 'OTTO' ? ({ mediaType: 'font/otf', extension: 'otf' } as const) : ({ mediaType: 'font/ttf', extension: 'ttf' } as const);
  const tables = magic === 'wOF2' ? woff2Tables(bytes) : sfntTables(bytes);
  const missing = ['head', 'hhea', 'hmtx', 'maxp', 'cmap', 'name'].filter((tag) => !tables.get(tag)?.bytes.length);
  if (missing.length) throw refused(`the font has no ${missing.join(', ')} table`);
  const outlines = tables.has('glyf') && tables.has('loca') ? 'glyf' : tables.get('CFF ')?.bytes.length || tables.get('CFF2')?.bytes.length ? 'cff' : undefined;
  if (!outlines) throw refused('the font has no glyph outlines (glyf and loca, or CFF)');
  checkNameTable(tables.get('name')!.bytes);

  let family: string;
  let weight: number;
  let italic: boolean;
  try {
    const opened = loadFontkit().create(bytes);
    if (!('familyName' in opened)) throw new Error('a font collection');
    const font = opened;
    // fontkit decodes a table when it is first asked for, and leaves one it cannot decode undefined: each is checked.
    const decoded = font as unknown as FontkitTables;
    const numGlyphs = decoded.maxp?.numGlyphs;
    if (!numGlyphs || numGlyphs < 2) throw new Error('it has no glyphs');
    if (!decoded.cmap) throw new Error('its cmap table cannot be read');
    // One lookup parses the character map fontkit would use.
    font.hasGlyphForCodePoint(0x41);
    const head = decoded.head;
    if (!head) throw new Error('its head table cannot be read');
    if (outlines === 'glyf' && !tables.get('loca')!.transformed) checkLoca(tables.get('loca')!.bytes, tables.get('glyf')!.bytes, numGlyphs, head.indexToLocFormat === 1);
    if (!decoded.name) throw new Error('its name table cannot be read');
    family = (font.getName('preferredFamily', 'en') ?? font.familyName ?? '').trim();
    const os2 = decoded['OS/2'];
    weight = os2?.usWeightClass ?? 400;
    italic = Boolean(os2?.fsSelection?.italic || os2?.fsSelection?.oblique || head.macStyle?.italic) || (decoded.post ? font.italicAngle !== 0 : false);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw refused(`the font cannot be read (${(err as Error).message})`);
  }
  if (!family) throw refused('the font has no family name');
  if (!SAFE_FAMILY.test(family)) {
    throw refused(`the font's family name ${JSON.stringify(family.slice(0, 100))} has characters a template cannot name (letters, digits, spaces, - and _, at most 100)`);
  }
  // Old fonts give weights 1–9 for 100–900; CSS takes 1–1000.
  const fontWeight = weight >= 1 && weight <= 9 ? weight * 100 : Math.min(1000, Math.max(1, Math.round(weight) || 400));
  return { kind: 'font', ...format, bytes, fontFamily: family, fontStyle: italic ? 'italic' : 'normal', fontWeight };
}
