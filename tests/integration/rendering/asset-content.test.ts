import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import puppeteer, { type Browser, type Page } from 'puppeteer';
import { AppError } from '../../../domain/errors';
import { ASSET_LIMITS, checkAssetContent, type CheckedAsset } from '../../../domain/templates/asset-content';
import { cpuMsBeside } from '../../support/cpu-time';
import { useEvaluator } from '../../support/evaluation';
import { solidPng } from '../../support/rendering-pdf';

/**
 * The check of an uploaded asset's bytes (domain/templates/asset-content.ts), called directly and
 * through the evaluation workers it runs in. Fixtures are made here: PNGs by hand, JPEG and WebP by
 * Chromium's encoders, fonts from the system's DejaVu (fonts-dejavu-core, in the image), WOFF2 packed
 * from them here (brotli, tables untransformed), and the Playfair Display WOFF2s of docs/examples.
 */

const DEJAVU = '/usr/share/fonts/truetype/dejavu';
const font = (name: string) => readFileSync(join(DEJAVU, name));
const INCONSOLATA_OTF = join(__dirname, '../../../node_modules/bwip-js/fonts/Inconsolata.otf');
const PLAYFAIR_BOLD_WOFF2 = join(__dirname, '../../../docs/examples/fonts/playfair-display-latin-700-normal.woff2');

// --- fixtures ---

const png = (width: number, height: number, claim?: { width: number; height: number }) => solidPng(width, height, undefined, claim);

/** The JPEG with an EXIF APP1 segment giving `orientation` (6: turned 90° clockwise to be shown). */
function withOrientation(jpeg: Buffer, orientation: number): Buffer {
  // Big-endian TIFF header, one IFD with one entry: tag 0x0112 (Orientation), type SHORT, one value.
  const tiff = Buffer.alloc(26);
  tiff.write('MM', 0, 'latin1');
  tiff.writeUInt16BE(42, 2);
  tiff.writeUInt32BE(8, 4);
  tiff.writeUInt16BE(1, 8);
  tiff.writeUInt16BE(0x0112, 10);
  tiff.writeUInt16BE(3, 12);
  tiff.writeUInt32BE(1, 14);
  tiff.writeUInt16BE(orientation, 18);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const marker = Buffer.alloc(4);
  marker.writeUInt16BE(0xffe1, 0);
  marker.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), marker, payload, jpeg.subarray(2)]);
}

/** A font's tables by tag, from its sfnt directory. */
function tablesOf(sfnt: Buffer): Map<string, Buffer> {
  const tables = new Map<string, Buffer>();
  for (let i = 0; i < sfnt.readUInt16BE(4); i += 1) {
    const entry = 12 + 16 * i;
    const offset = sfnt.readUInt32BE(entry + 8);
    tables.set(sfnt.toString('latin1', entry, entry + 4), sfnt.subarray(offset, offset + sfnt.readUInt32BE(entry + 12)));
  }
  return tables;
}

/** An sfnt (TTF) of these tables (checksums left 0: nothing here reads them). */
function sfnt(tables: Map<string, Buffer>): Buffer {
  const tags = [...tables.keys()].sort();
  const directory = Buffer.alloc(12 + 16 * tags.length);
  directory.writeUInt32BE(0x00010000, 0);
  directory.writeUInt16BE(tags.length, 4);
  let offset = directory.length;
  const bodies = tags.map((tag, i) => {
    const data = tables.get(tag)!;
    const entry = 12 + 16 * i;
    directory.write(tag, entry, 'latin1');
    directory.writeUInt32BE(offset, entry + 8);
    directory.writeUInt32BE(data.length, entry + 12);
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
    offset += padded.length;
    return padded;
  });
  return Buffer.concat([directory, ...bodies]);
}

/** A name table (format 0) of Windows Unicode English records: nameID → text. */
function nameTable(names: Record<number, string>): Buffer {
  const strings = Object.entries(names).map(([id, text]) => [Number(id), Buffer.from(text, 'utf16le').swap16()] as const);
  const head = Buffer.alloc(6 + 12 * strings.length);
  head.writeUInt16BE(strings.length, 2);
  head.writeUInt16BE(head.length, 4);
  let offset = 0;
  strings.forEach(([id, text], i) => {
    const record = 6 + 12 * i;
    head.writeUInt16BE(3, record);
    head.writeUInt16BE(1, record + 2);
    head.writeUInt16BE(0x409, record + 4);
    head.writeUInt16BE(id, record + 6);
    head.writeUInt16BE(text.length, record + 8);
    head.writeUInt16BE(offset, record + 10);
    offset += text.length;
  });
  return Buffer.concat([head, ...strings.map(([, text]) => text)]);
}

function base128(value: number): number[] {
  const bytes = [value & 0x7f];
  for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128)) bytes.unshift((rest & 0x7f) | 0x80);
  return bytes;
}

/**
 * A WOFF2 of these tables, untransformed (glyf and loca with transform version 3, the null one),
 * brotli-compressed. `declared` lengths, `stream` and `totalSfntSize` override what the header and
 * directory say, for the hostile cases.
 */
function woff2(tables: Map<string, Buffer>, options: { declared?: Record<string, number>; stream?: Buffer; totalSfntSize?: number } = {}): Buffer {
  // loca right after glyf, as the format asks.
  const tags = [...tables.keys()].filter((t) => t !== 'loca').sort();
  if (tables.has('loca')) tags.splice(tags.indexOf('glyf') + 1, 0, 'loca');
  const directory: number[] = [];
  for (const tag of tags) {
    directory.push((tag === 'glyf' || tag === 'loca' ? 3 << 6 : 0) | 0x3f, ...Buffer.from(tag, 'latin1'), ...base128(options.declared?.[tag] ?? tables.get(tag)!.length));
  }
  const stream = options.stream ?? Buffer.concat(tags.map((t) => tables.get(t)!));
  const compressed = brotliCompressSync(stream, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } });
  const unpadded = 48 + directory.length + compressed.length;
  const header = Buffer.alloc(48);
  header.write('wOF2', 0, 'latin1');
  header.writeUInt32BE(0x00010000, 4);
  header.writeUInt32BE(unpadded + ((4 - (unpadded % 4)) % 4), 8);
  header.writeUInt16BE(tags.length, 12);
  const sfntSize = 12 + 16 * tags.length + tags.reduce((sum, t) => sum + Math.ceil(tables.get(t)!.length / 4) * 4, 0);
  header.writeUInt32BE(options.totalSfntSize ?? sfntSize, 16);
  header.writeUInt32BE(compressed.length, 20);
  header.writeUInt16BE(1, 24);
  return Buffer.concat([header, Buffer.from(directory), compressed, Buffer.alloc((4 - (unpadded % 4)) % 4)]);
}

/** The AppError a check throws (a test fails on anything else). */
function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the asset to be refused');
}

const svgText = (asset: CheckedAsset) => Buffer.from(asset.bytes).toString('utf8');
const svgBytes = (text: string) => Buffer.from(text, 'utf8');
const NS = 'xmlns="http://www.w3.org/2000/svg"';

/** Every kind of reference out of the file and everything that runs, beside what an honest drawing has. */
const HOSTILE_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<!-- drawn by hand -->
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100" viewBox="0 0 200 100" onload="fetch('http://evil.example/onload')">
  <script>fetch('http://evil.example/script')</script>
  <style>@import url(http://evil.example/import.css); rect { fill: #00ff00 }</style>
  <defs>
    <linearGradient id="g" x1="0" x2="1" y1="0" y2="0"><stop offset="0" stop-color="#ff0000"/><stop offset="1" stop-color="#0000ff"/></linearGradient>
    <clipPath id="clip" clipPathUnits="userSpaceOnUse"><rect width="200" height="100"/></clipPath>
    <rect id="a" width="20" height="20" fill="#00aa00"/>
  </defs>
  <g clip-path="url(#clip)">
    <rect x="0" y="0" width="200" height="50" fill="url(#g)" onclick="fetch('http://evil.example/click')"/>
    <use href="#a" x="10" y="55"/>
    <use href="http://evil.example/use.svg#a" x="40" y="55"/>
    <use xlink:href="http://evil.example/use2.svg#a" x="70" y="55"/>
    <image xlink:href="http://evil.example/x.png" x="100" y="55" width="20" height="20"/>
    <image href="https://evil.example/y.png" x="130" y="55" width="20" height="20"/>
    <rect x="160" y="55" width="20" height="20" style="fill:#000000;background:url(http://evil.example/bg.png)"/>
    <rect x="160" y="78" width="20" height="20" fill="url(http://evil.example/paint.svg#a)" stroke="u\\72l(http://evil.example/escaped)"/>
    <a href="javascript:fetch('http://evil.example/link')"><text x="10" y="95" font-size="12" fill="#000000">Kept text</text></a>
    <foreignObject x="0" y="0" width="200" height="100"><div xmlns="http://www.w3.org/1999/xhtml"><img src="http://evil.example/fo.png"/>html</div></foreignObject>
  </g>
</svg>`;

/** An honest drawing of about `bytes`: paths, a gradient, uses of a symbol, text. The CPU baseline of the hostile SVGs. */
function honestSvg(bytes: number): string {
  const head = `<svg ${NS} width="400" height="300" viewBox="0 0 400 300"><defs><linearGradient id="g"><stop offset="0" stop-color="#123456"/><stop offset="1" stop-color="#abcdef"/></linearGradient><symbol id="s" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/></symbol></defs>`;
  const unit = '<g transform="translate(10,20) rotate(5)"><path d="M10 10 L20 20 C 30 30 40 40 50 50 Z" fill="url(#g)" stroke="#333" stroke-width="0.5"/><use href="#s" x="3" y="4" width="10" height="10"/><text x="1" y="2">label</text></g>';
  return head + unit.repeat(Math.floor((bytes - head.length - 6) / unit.length)) + '</svg>';
}

/**
 * That `run` took within a few times the CPU time of `baseline`, measured beside it
 * (tests/support/cpu-time.ts cpuMsBeside), the case named in a failure; `run`'s first result.
 */
function expectNearBaseline<T>(name: string, run: () => T, baseline: () => unknown): T {
  const { result, cpuMs, baselineMs } = cpuMsBeside(run, baseline);
  const bound = 3 * baselineMs + 20;
  expect({ name, cpuMs, bound, within: cpuMs <= bound }).toMatchObject({ name, within: true });
  return result;
}

/** A check that is expected to be refused, within a few times the CPU time of `baseline` (expectNearBaseline): its error. */
function refusedNear(name: string, run: () => unknown, baseline: () => unknown): AppError {
  return expectNearBaseline(name, () => refusal(run), baseline);
}

describe('asset content: an uploaded image or font judged by its bytes (domain/templates/asset-content.ts)', () => {
  const evaluator = useEvaluator();
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
  });
  afterAll(() => browser?.close());

  /** A picture encoded by Chromium's own encoder (canvas.toDataURL): two colours, width × height. */
  async function encoded(type: 'image/jpeg' | 'image/webp', width: number, height: number): Promise<Buffer> {
    const url = await page.evaluate(
      (t, w, h) => {
        const canvas = document.createElement('canvas');
        canvas.width = w;
        canvas.height = h;
        const g = canvas.getContext('2d')!;
        g.fillStyle = '#cc0000';
        g.fillRect(0, 0, w, h);
        g.fillStyle = '#0000cc';
        g.fillRect(0, 0, w / 2, h / 2);
        return canvas.toDataURL(t, 0.9);
      },
      type,
      width,
      height,
    );
    expect(url.startsWith(`data:${type};base64,`)).toBe(true);
    return Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
  }

  /**
   * The SVG as Chromium draws it as a picture (as a template's image does): decoded (which fails for
   * a file that is no well-formed SVG), drawn at its size, and the RGBA of each point.
   */
  function drawn(svg: Uint8Array, width: number, height: number, points: Array<[number, number]>): Promise<number[][]> {
    return page.evaluate(
      async (base64, w, h, at) => {
        const img = new Image();
        img.src = `data:image/svg+xml;base64,${base64}`;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = w;
        canvas.height = h;
        const g = canvas.getContext('2d')!;
        g.drawImage(img, 0, 0, w, h);
        return at.map(([x, y]) => Array.from(g.getImageData(x, y, 1, 1).data));
      },
      Buffer.from(svg).toString('base64'),
      width,
      height,
      points,
    );
  }

  /** Every request Chromium makes opening the SVG as a document (where it would run scripts and fetch), each answered by an abort. */
  async function requestsOpening(svg: Uint8Array): Promise<string[]> {
    const doc = await browser.newPage();
    const requests: string[] = [];
    try {
      await doc.setRequestInterception(true);
      doc.on('request', (req) => {
        if (req.url() === 'http://asset.test/drawing.svg') void req.respond({ status: 200, contentType: 'image/svg+xml', body: Buffer.from(svg) });
        // The browser's own request for the page's icon, whatever the page holds.
        else if (req.url() === 'http://asset.test/favicon.ico') void req.abort();
        else {
          requests.push(req.url());
          void req.abort();
        }
      });
      // Load waits for what blocks it (pictures, imported style sheets); the screenshot for a painted frame.
      await doc.goto('http://asset.test/drawing.svg', { waitUntil: 'load' });
      await doc.screenshot();
      return requests;
    } finally {
      await doc.close();
    }
  }

  it('takes PNG, JPEG and WebP by their bytes, with their size in pixels (a JPEG turned by its EXIF as Chromium shows it)', async () => {
    const picture = png(40, 30);
    expect(checkAssetContent(picture)).toEqual({ kind: 'image', mediaType: 'image/png', extension: 'png', bytes: picture, width: 40, height: 30 });

    const jpeg = await encoded('image/jpeg', 120, 80);
    expect(checkAssetContent(jpeg)).toMatchObject({ kind: 'image', mediaType: 'image/jpeg', extension: 'jpg', width: 120, height: 80 });
    expect(checkAssetContent(withOrientation(jpeg, 6))).toMatchObject({ mediaType: 'image/jpeg', width: 80, height: 120 });

    const webp = await encoded('image/webp', 64, 48);
    const checked = checkAssetContent(webp);
    expect(checked).toMatchObject({ kind: 'image', mediaType: 'image/webp', extension: 'webp', width: 64, height: 48 });
    // A raster picture is stored as uploaded.
    expect(Buffer.from(checked.bytes).equals(webp)).toBe(true);

    const svg = checkAssetContent(svgBytes(`<svg ${NS} width="210mm" height="99mm"><rect width="10" height="10"/></svg>`));
    expect(svg).toMatchObject({ kind: 'image', mediaType: 'image/svg+xml', extension: 'svg', width: 794, height: 374, sanitized: false });
    expect(checkAssetContent(svgBytes(`<svg ${NS} viewBox="0 0 300 150"/>`))).toMatchObject({ width: 300, height: 150 });
    expect(checkAssetContent(svgBytes(`<svg ${NS} width="600" viewBox="0 0 300 150"/>`))).toMatchObject({ width: 600, height: 300 });
  });

  it('takes TTF, OTF and WOFF2 fonts with the family (typographic family first), weight and style their own tables give', () => {
    const regular = font('DejaVuSans.ttf');
    const { bytes, ...facts } = checkAssetContent(regular);
    expect(facts).toEqual({ kind: 'font', mediaType: 'font/ttf', extension: 'ttf', fontFamily: 'DejaVu Sans', fontStyle: 'normal', fontWeight: 400 });
    // A font is stored as uploaded (compared with equals: Jest's deep equality walks a buffer byte by byte).
    expect(Buffer.from(bytes).equals(regular)).toBe(true);
    expect(checkAssetContent(font('DejaVuSans-Bold.ttf'))).toMatchObject({ fontFamily: 'DejaVu Sans', fontStyle: 'normal', fontWeight: 700 });
    expect(checkAssetContent(font('DejaVuSans-Oblique.ttf'))).toMatchObject({ fontFamily: 'DejaVu Sans', fontStyle: 'italic', fontWeight: 400 });
    expect(checkAssetContent(font('DejaVuSans-BoldOblique.ttf'))).toMatchObject({ fontFamily: 'DejaVu Sans', fontStyle: 'italic', fontWeight: 700 });
    // Its legacy family is "DejaVu Sans Light"; the typographic family groups it with the others.
    expect(checkAssetContent(font('DejaVuSans-ExtraLight.ttf'))).toMatchObject({ fontFamily: 'DejaVu Sans', fontWeight: 200 });
    expect(checkAssetContent(font('DejaVuSerif-Italic.ttf'))).toMatchObject({ fontFamily: 'DejaVu Serif', fontStyle: 'italic' });

    expect(checkAssetContent(readFileSync(INCONSOLATA_OTF))).toMatchObject({ kind: 'font', mediaType: 'font/otf', extension: 'otf', fontFamily: 'Inconsolata', fontWeight: 500 });
    // A WOFF2 from a real encoder (glyf and loca transformed)…
    expect(checkAssetContent(readFileSync(PLAYFAIR_BOLD_WOFF2))).toMatchObject({ kind: 'font', mediaType: 'font/woff2', extension: 'woff2', fontFamily: 'Playfair Display', fontWeight: 700 });
    // …and one packed here from DejaVu Sans Bold Oblique.
    const packed = woff2(tablesOf(font('DejaVuSans-BoldOblique.ttf')));
    expect({ ...checkAssetContent(packed), bytes: undefined }).toEqual({ kind: 'font', mediaType: 'font/woff2', extension: 'woff2', bytes: undefined, fontFamily: 'DejaVu Sans', fontStyle: 'italic', fontWeight: 700 });
  });

  it('decides the format by the bytes alone: a PNG is a PNG, a font a font, whatever the upload claims; text or noise is refused', () => {
    // The check is given bytes only: no name, no claimed type to trust.
    expect(checkAssetContent(png(3, 3))).toMatchObject({ kind: 'image', mediaType: 'image/png' });
    for (const text of ['just some text', '{"svg": true}', '<html><body><svg></svg></body></html>', '<SVG xmlns="http://www.w3.org/2000/svg"/>']) {
      const err = refusal(() => checkAssetContent(svgBytes(text)));
      expect(err).toMatchObject({ code: 'ERR_ASSET_002', status: 400, relatedInfo: { field: 'file', reason: expect.stringContaining('not a PNG, JPEG, WebP, SVG') } });
    }
    expect(refusal(() => checkAssetContent(randomBytes(5000)))).toMatchObject({ code: 'ERR_ASSET_002', relatedInfo: { field: 'file' } });
    expect(refusal(() => checkAssetContent(new Uint8Array(0)))).toMatchObject({ code: 'ERR_ASSET_002' });
    // WOFF 1 and collections are named in the reason.
    expect(refusal(() => checkAssetContent(Buffer.concat([Buffer.from('wOFF'), randomBytes(100)]))).relatedInfo?.reason).toMatch(/WOFF 1/);
    expect(refusal(() => checkAssetContent(Buffer.concat([Buffer.from('ttcf'), randomBytes(100)]))).relatedInfo?.reason).toMatch(/collection/);
    // An SVG in another encoding than UTF-8.
    expect(refusal(() => checkAssetContent(Buffer.from(`<svg ${NS}><text>caf\u00e9</text></svg>`, 'latin1'))).relatedInfo?.reason).toMatch(/UTF-8/);
  });

  it('cleans a hostile SVG: scripts, handlers, foreignObject, styles and every reference out of the file gone; shapes, gradients, #id references and text kept, camelCase intact', () => {
    const checked = checkAssetContent(svgBytes(HOSTILE_SVG));
    expect(checked).toMatchObject({ kind: 'image', mediaType: 'image/svg+xml', width: 200, height: 100, sanitized: true });
    const stored = svgText(checked);
    for (const gone of ['<script', 'onload', 'onclick', 'foreignObject', '<style', '@import', 'evil.example', 'javascript:', '<a ', 'background', 'u\\72l', '<img', '<div', 'DOCTYPE']) {
      expect(stored).not.toContain(gone);
    }
    for (const kept of ['viewBox="0 0 200 100"', '<linearGradient id="g"', 'stop-color="#ff0000"', '<clipPath id="clip" clipPathUnits="userSpaceOnUse"', 'clip-path="url(#clip)"', 'fill="url(#g)"', '<use href="#a" x="10" y="55">', 'style="fill:#000000"', '>Kept text</text>']) {
      expect(stored).toContain(kept);
    }
    // The uses and images that pointed out of the file are gone whole (nothing to draw).
    expect(stored.match(/<use /g)).toHaveLength(1);
    expect(stored).not.toContain('<image');

    // Still an SVG document: one <svg> root in the SVG namespace, its parts where they were.
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(stored);
    expect(parsed.svg).toMatchObject({ xmlns: 'http://www.w3.org/2000/svg', viewBox: '0 0 200 100', width: '200', height: '100' });
    expect(parsed.svg.defs.linearGradient.stop).toHaveLength(2);
    expect(parsed.svg.g.rect).toHaveLength(3);
    expect(parsed.svg.g.text['#text']).toBe('Kept text');

    // What an honest file has passes untouched (sanitized: false), entities and namespaces as XML wants them.
    const honest = checkAssetContent(svgBytes(`<svg ${NS} viewBox="0 0 10 10"><radialGradient id="r" gradientUnits="userSpaceOnUse"/><text x="1" y="5">a &amp; b &lt; c</text><circle r="4" fill="url('#r')" transform="rotate(45 5 5)"/></svg>`));
    expect(honest.sanitized).toBe(false);
    expect(svgText(honest)).toContain('<radialGradient id="r" gradientUnits="userSpaceOnUse">');
    expect(svgText(honest)).toContain('a &amp; b &lt; c');
    // Embedded pictures stay when they are PNG, JPEG or WebP within the pixel cap.
    const embedded = `data:image/png;base64,${png(2, 2).toString('base64')}`;
    const withPicture = svgText(checkAssetContent(svgBytes(`<svg ${NS}><image href="${embedded}" width="2" height="2"/><image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=" width="2" height="2"/></svg>`)));
    expect(withPicture).toContain(embedded);
    expect(withPicture.match(/<image /g)).toHaveLength(1);
  });

  it('keeps the cleaned SVG a picture Chromium draws; opened as a document it loads nothing, where the original loaded from outside', async () => {
    const original = svgBytes(HOSTILE_SVG);
    const cleaned = checkAssetContent(original).bytes;
    const [left, right, used, removedUse, styled] = await drawn(cleaned, 200, 100, [[3, 25], [197, 25], [20, 65], [50, 65], [170, 65]]);
    // The gradient runs red to blue (the dropped <style> would have painted it green).
    expect(left[0]).toBeGreaterThan(200);
    expect(left[2]).toBeLessThan(60);
    expect(right[2]).toBeGreaterThan(200);
    expect(right[0]).toBeLessThan(60);
    // The local <use> draws its green square; the one that pointed outside draws nothing.
    expect(used.slice(0, 3)).toEqual([0, 170, 0]);
    expect(removedUse[3]).toBe(0);
    expect(styled.slice(0, 4)).toEqual([0, 0, 0, 255]);
    // The original as a picture: its <style> painted the gradient over (Chromium's picture mode runs and loads nothing itself).
    const [greenLeft] = await drawn(original, 200, 100, [[3, 25]]);
    expect(greenLeft.slice(0, 3)).toEqual([0, 255, 0]);

    expect((await requestsOpening(original)).filter((url) => url.includes('evil.example')).length).toBeGreaterThan(0);
    expect(await requestsOpening(cleaned)).toEqual([]);

    // Repaired or trimmed markup stays well-formed (Chromium decodes it): empty values, control characters, unclosed tags, text after the root.
    for (const messy of [
      `<svg ${NS} width="10" height="10"><rect fill="" width="10" height="10"/></svg>`,
      `<svg ${NS} width="10" height="10"><rect width="10" height="10"/><text x="1" y="9">a&#1;b\u0001c</text></svg>`,
      `<svg ${NS} width="10" height="10"><g><rect width="10" height="10"></g><text>x`,
      `<svg ${NS} width="10" height="10"><rect width="10" height="10"/></svg>trailing text`,
      `<svg xmlns="http://www.w3.org/1999/xhtml" width="10" height="10"><rect width="10" height="10"/></svg>`,
      `<svg width="10" height="10"><rect xlink:href="#x" width="10" height="10"/></svg>`,
    ]) {
      const [pixel] = await drawn(checkAssetContent(svgBytes(messy)).bytes, 10, 10, [[5, 5]]);
      expect(pixel[3]).toBe(255);
    }
  });

  it('refuses an SVG with entities, a <use> bomb, nesting past the limit or a second root, each within a few times the CPU time of an honest SVG of its size', () => {
    const honest = svgBytes(honestSvg(ASSET_LIMITS.svgMaxBytes - 1000));
    expect(checkAssetContent(honest).sanitized).toBe(false);
    const baseline = () => checkAssetContent(honest);

    const laughs = `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><svg ${NS}><text>&c;</text></svg>`;
    const useBomb = (() => {
      let s = `<svg ${NS}><defs><rect id="l0" width="1" height="1"/>`;
      for (let i = 1; i <= 9; i += 1) s += `<g id="l${i}">${`<use href="#l${i - 1}"/>`.repeat(10)}</g>`;
      return `${s}</defs><use href="#l9"/></svg>`;
    })();
    const cases: Array<[string, string, RegExp]> = [
      ['billion laughs', laughs, /entities/],
      ['an entity later in the file', `<svg ${NS}><!ENTITY a "b"><text>x</text></svg>`, /entities/],
      ['a <use> bomb', useBomb, /draws more than/],
      ['nesting 100,000 deep', `<svg ${NS}>${'<g>'.repeat(100_000)}`, /nest deeper/],
      ['a second root', `<svg ${NS}><rect/></svg><svg ${NS}><script>x()</script></svg>`, /one root/],
    ];
    for (const [name, text, reason] of cases) {
      const err = refusedNear(name, () => checkAssetContent(svgBytes(text)), baseline);
      expect({ name, code: err.code, reason: err.relatedInfo?.reason }).toMatchObject({ name, code: 'ERR_ASSET_002', reason: expect.stringMatching(reason) });
    }

    // What made a backtracking pattern take exponential time (comments before no root), and
    // what is allowed but large: each about linear.
    const slow: Array<[string, string]> = [
      ['comments before no root', `${'<!--a-->'.repeat(10_000)}x`],
      ['doctypes before the root', `${'<!DOCTYPE a>'.repeat(10_000)}<svg ${NS}/>`],
      ['a 900 KB attribute of one name', `<svg ${NS}><path transform="${'a'.repeat(900_000)}("/></svg>`],
      ['60,000 attributes', `<svg ${NS}><rect ${Array.from({ length: 60_000 }, (_, i) => `a${i}="1"`).join(' ')}/></svg>`],
      ['30,000 scripts', `<svg ${NS}>${'<script>alert(1)</script>'.repeat(30_000)}</svg>`],
      ['25,000 uses of one rect', `<svg ${NS}><rect id="r"/>${'<use href="#r"/>'.repeat(25_000)}</svg>`],
    ];
    for (const [name, text] of slow) {
      expectNearBaseline(
        name,
        () => {
          try {
            return checkAssetContent(svgBytes(text));
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            return err;
          }
        },
        baseline,
      );
    }
  });

  it('refuses what is no sound font, with ERR_ASSET_002/003 and a reason, each within a few times the CPU time of reading an honest font', () => {
    const honest = font('DejaVuSans.ttf');
    checkAssetContent(honest);
    const baseline = () => checkAssetContent(honest);
    const tables = tablesOf(honest);
    const replaced = (tag: string, data: Buffer | undefined) => {
      const copy = new Map(tables);
      if (data) copy.set(tag, data);
      else copy.delete(tag);
      return copy;
    };
    // 65,535 name records, each naming the same 64 KB: 4 GB of text for fontkit to decode from a table of 850 KB.
    const nameBomb = Buffer.alloc(6 + 12 * 65_535);
    nameBomb.writeUInt16BE(65_535, 2);
    nameBomb.writeUInt16BE(6, 4);
    for (let i = 0; i < 65_535; i += 1) {
      nameBomb.writeUInt16BE(3, 6 + 12 * i);
      nameBomb.writeUInt16BE(1, 8 + 12 * i);
      nameBomb.writeUInt16BE(0x409, 10 + 12 * i);
      nameBomb.writeUInt16BE(1, 12 + 12 * i);
      nameBomb.writeUInt16BE(65_534, 14 + 12 * i);
    }
    const glyphs = tables.get('glyf')!;
    const cases: Array<[string, Buffer, string, RegExp]> = [
      ['random bytes after a TrueType tag', Buffer.concat([Buffer.from([0, 1, 0, 0]), randomBytes(4000)]), 'ERR_ASSET_002', /cut short|cannot be read|no /],
      ['an OTF tag and nothing', Buffer.from('OTTO'), 'ERR_ASSET_002', /cut short/],
      ['a TTF cut in half', honest.subarray(0, honest.length >> 1), 'ERR_ASSET_002', /cut short/],
      ['glyph offsets past the glyf table', sfnt(replaced('glyf', glyphs.subarray(0, 1000))), 'ERR_ASSET_002', /loca/],
      ['no outlines', sfnt(replaced('loca', undefined)), 'ERR_ASSET_002', /no glyph outlines/],
      ['no name table', sfnt(replaced('name', undefined)), 'ERR_ASSET_002', /no name table/],
      ['a name-table bomb', sfnt(replaced('name', nameBomb)), 'ERR_ASSET_002', /name table/],
      ['a family name that breaks out of CSS', sfnt(replaced('name', nameTable({ 1: `Evil'}</style><script>x()</script>` }))), 'ERR_ASSET_002', /family name/],
      ['a family name with a control character', sfnt(replaced('name', nameTable({ 1: 'Bad\u0000Name' }))), 'ERR_ASSET_002', /family name/],
      ['a family name of 101 characters', sfnt(replaced('name', nameTable({ 1: 'A'.repeat(101) }))), 'ERR_ASSET_002', /family name/],
      ['no family name', sfnt(replaced('name', nameTable({ 2: 'Regular' }))), 'ERR_ASSET_002', /no family name/],
      ['a PNG that says it is a font', Buffer.concat([Buffer.from([0, 1, 0, 0]), png(10, 10)]), 'ERR_ASSET_002', /cut short/],
      ['a WOFF2 whose header claims 4 GB', woff2(tables, { totalSfntSize: 0xffff_fff0 }), 'ERR_ASSET_003', /unpacks to/],
      ['a WOFF2 whose directory claims 2 GB of glyf', woff2(tables, { declared: { glyf: 2 ** 31 } }), 'ERR_ASSET_003', /unpacks to/],
      ['a WOFF2 whose brotli unpacks to 40 MB', woff2(tables, { stream: Buffer.alloc(40 * 1024 * 1024) }), 'ERR_ASSET_002', /cannot be unpacked/],
      ['a WOFF2 cut short', woff2(tables).subarray(0, 5000), 'ERR_ASSET_002', /length|cut short/],
      ['a WOFF2 header of noise', Buffer.concat([Buffer.from('wOF2'), randomBytes(8 * 1024 * 1024)]), 'ERR_ASSET_002', /length|cut short|unpacks/],
    ];
    for (const [name, bytes, code, reason] of cases) {
      const err = refusedNear(name, () => checkAssetContent(bytes), baseline);
      expect({ name, code: err.code, field: err.relatedInfo?.field, reason: err.relatedInfo?.reason }).toMatchObject({ name, code, field: 'file', reason: expect.stringMatching(reason) });
    }
    // The name table the builder writes is read like any other: the refusals above are for what they hold.
    expect(checkAssetContent(sfnt(replaced('name', nameTable({ 1: 'My Font 2', 16: 'My Font' }))))).toMatchObject({ fontFamily: 'My Font' });
  });

  it('refuses oversize files by their size before reading them, and a picture whose header claims 100,000 × 100,000 pixels', () => {
    const picture = png(200, 200);
    checkAssetContent(picture);
    const baseline = () => checkAssetContent(picture);
    const pngHead = png(1, 1).subarray(0, 8);
    const cases: Array<[string, Buffer, number]> = [
      ['11 MB of anything', randomBytes(11 * 1024 * 1024), Math.max(ASSET_LIMITS.imageMaxBytes, ASSET_LIMITS.fontMaxBytes)],
      ['a 6 MB PNG', Buffer.concat([pngHead, Buffer.alloc(6 * 1024 * 1024)]), ASSET_LIMITS.imageMaxBytes],
      ['a 2 MB SVG', svgBytes(`<svg ${NS}>${'<rect width="1" height="1"/>'.repeat(80_000)}</svg>`), ASSET_LIMITS.svgMaxBytes],
      ['an 11 MB TTF', Buffer.concat([Buffer.from([0, 1, 0, 0]), Buffer.alloc(11 * 1024 * 1024)]), ASSET_LIMITS.fontMaxBytes],
    ];
    for (const [name, bytes, limit] of cases) {
      const err = refusedNear(name, () => checkAssetContent(bytes), baseline);
      expect({ name, code: err.code, status: err.status, limit: err.relatedInfo?.limit }).toEqual({ name, code: 'ERR_ASSET_003', status: 413, limit });
    }

    const claimed = png(4, 4, { width: 100_000, height: 100_000 });
    const err = refusedNear('100,000 × 100,000 pixels', () => checkAssetContent(claimed), baseline);
    expect(err).toMatchObject({ code: 'ERR_ASSET_002', relatedInfo: { field: 'file', reason: expect.stringContaining('100000 × 100000 pixels') } });
    // The same cap for a picture embedded in an SVG: the <image> is dropped.
    const bomb = `data:image/png;base64,${claimed.toString('base64')}`;
    expect(svgText(checkAssetContent(svgBytes(`<svg ${NS}><image href="${bomb}" width="1" height="1"/></svg>`)))).not.toContain('<image');
    expect(checkAssetContent(png(4, 4, { width: 10_000, height: 10_000 }))).toMatchObject({ width: 10_000, height: 10_000 });
  });

  it('runs in the evaluation workers: a Uint8Array in, a CheckedAsset with its bytes out; refusals keep their code and reason', async () => {
    const picture = png(40, 30);
    const viaWorker = await evaluator.check('asset-tenant', 'assetContent', new Uint8Array(picture));
    expect(viaWorker.bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(viaWorker.bytes).equals(picture)).toBe(true);
    expect({ ...viaWorker, bytes: undefined }).toEqual({ ...checkAssetContent(picture), bytes: undefined });

    // The cleaned SVG comes back as the worker wrote it: the same bytes as checked here.
    const svg = await evaluator.check('asset-tenant', 'assetContent', new Uint8Array(svgBytes(HOSTILE_SVG)));
    expect(Buffer.from(svg.bytes).equals(Buffer.from(checkAssetContent(svgBytes(HOSTILE_SVG)).bytes))).toBe(true);
    expect(svg).toMatchObject({ mediaType: 'image/svg+xml', sanitized: true, width: 200, height: 100 });

    const bold = font('DejaVuSans-Bold.ttf');
    const fontViaWorker = await evaluator.check('asset-tenant', 'assetContent', new Uint8Array(bold));
    expect(fontViaWorker).toMatchObject({ kind: 'font', mediaType: 'font/ttf', fontFamily: 'DejaVu Sans', fontWeight: 700, fontStyle: 'normal' });
    expect(Buffer.from(fontViaWorker.bytes).equals(bold)).toBe(true);
    const woff = woff2(tablesOf(bold));
    expect(await evaluator.check('asset-tenant', 'assetContent', new Uint8Array(woff))).toMatchObject({ mediaType: 'font/woff2', fontFamily: 'DejaVu Sans', fontWeight: 700 });

    await expect(evaluator.check('asset-tenant', 'assetContent', new TextEncoder().encode('just some text'))).rejects.toMatchObject({
      code: 'ERR_ASSET_002',
      status: 400,
      relatedInfo: { field: 'file', reason: expect.stringContaining('not a PNG') },
    });
    await expect(evaluator.check('asset-tenant', 'assetContent', new Uint8Array(woff2(tablesOf(bold), { totalSfntSize: 0xffff_fff0 })))).rejects.toMatchObject({
      code: 'ERR_ASSET_003',
      status: 413,
      relatedInfo: { limit: ASSET_LIMITS.woff2MaxUnpackedBytes },
    });
    await expect(evaluator.check('asset-tenant', 'assetContent', new Uint8Array(Buffer.concat([Buffer.from([0, 1, 0, 0]), Buffer.alloc(11 * 1024 * 1024)])))).rejects.toMatchObject({
      code: 'ERR_ASSET_003',
    });
  });
});
