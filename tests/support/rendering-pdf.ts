import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflateSync } from 'node:zlib';
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib';
import { ChromiumPool, type ChromiumPoolOptions } from '../../adapters/rendering/chromium-pool';

/** Reading real PDFs back (poppler), a pool on the machine's Chromium, and a request recorder. */

const run = promisify(execFile);

async function withPdfFile<T>(pdf: Buffer, fn: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'formwork-pdf-'));
  const path = join(dir, 'doc.pdf');
  try {
    await writeFile(path, pdf);
    return await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The PDF's text as pdftotext reads it: `-layout` by default, `-raw` (content-stream order, which
 * keeps rotated text in sequence) on request; one page with `page`.
 */
export function pdfText(pdf: Buffer, options: { page?: number; mode?: 'layout' | 'raw' } = {}): Promise<string> {
  return withPdfFile(pdf, async (path) => {
    const args = [options.mode === 'raw' ? '-raw' : '-layout', '-enc', 'UTF-8'];
    if (options.page) args.push('-f', String(options.page), '-l', String(options.page));
    const { stdout } = await run('/usr/bin/pdftotext', [...args, path, '-'], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  });
}

/** One word of a page as `pdftotext -bbox` places it: points from the page's top left. */
export interface PdfWord {
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

/** The words of `page` with their boxes (poppler's `-bbox`), in reading order; and the page's size. */
export function pdfWords(pdf: Buffer, page = 1): Promise<{ width: number; height: number; words: PdfWord[] }> {
  return withPdfFile(pdf, async (path) => {
    const { stdout } = await run('/usr/bin/pdftotext', ['-bbox', '-enc', 'UTF-8', '-f', String(page), '-l', String(page), path, '-'], { maxBuffer: 64 * 1024 * 1024 });
    const size = /<page width="([\d.]+)" height="([\d.]+)">/.exec(stdout);
    const words = [...stdout.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
      xMin: Number(m[1]),
      yMin: Number(m[2]),
      xMax: Number(m[3]),
      yMax: Number(m[4]),
      text: m[5].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"'),
    }));
    return { width: Number(size?.[1] ?? 0), height: Number(size?.[2] ?? 0), words };
  });
}

/** The page rasterised at `dpi` (pdftoppm): RGB pixels, row by row. */
export function pdfPixels(pdf: Buffer, page = 1, dpi = 50): Promise<{ width: number; height: number; rgb(x: number, y: number): [number, number, number] }> {
  return withPdfFile(pdf, async (path) => {
    const { stdout } = await run('/usr/bin/pdftoppm', ['-r', String(dpi), '-f', String(page), '-l', String(page), path], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
    // Binary PPM (P6): a header of four tokens, then width * height RGB triples.
    const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(stdout.subarray(0, 64).toString('latin1'));
    if (!header) throw new Error('pdftoppm gave no P6 image');
    const [width, height] = [Number(header[1]), Number(header[2])];
    const data = stdout.subarray(header[0].length);
    return { width, height, rgb: (x, y) => [data[(y * width + x) * 3], data[(y * width + x) * 3 + 1], data[(y * width + x) * 3 + 2]] };
  });
}

/** The barcodes zbarimg (zbar-tools) finds on the page rasterised at 300 dpi: `TYPE:value` each, sorted. */
export function decodeBarcodes(pdf: Buffer, page = 1): Promise<string[]> {
  return withPdfFile(pdf, async (path) => {
    const image = path.replace(/\.pdf$/, '');
    await run('/usr/bin/pdftoppm', ['-r', '300', '-png', '-singlefile', '-f', String(page), '-l', String(page), path, image]);
    // Exit status 4: nothing found (the list is then empty).
    const { stdout } = await run('/usr/bin/zbarimg', ['-q', `${image}.png`]).catch((err: { code?: number; stdout?: string }) => {
      if (err.code === 4) return { stdout: '' };
      throw err;
    });
    return stdout.split('\n').filter(Boolean).sort();
  });
}

/** Page count and page size as pdfinfo reports them: an independent check of our own counting. */
export function pdfInfo(pdf: Buffer): Promise<{ pages: number; pageSize: string; title: string }> {
  return withPdfFile(pdf, async (path) => {
    const { stdout } = await run('/usr/bin/pdfinfo', [path]);
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(stdout)?.[1].trim() ?? '';
    return { pages: Number(field('Pages')), pageSize: field('Page size'), title: field('Title') };
  });
}

/** The tagged PDF's structure tree with the text of its elements (`pdfinfo -struct-text`). */
export function pdfStructure(pdf: Buffer): Promise<string> {
  return withPdfFile(pdf, async (path) => (await run('/usr/bin/pdfinfo', ['-struct-text', path], { maxBuffer: 64 * 1024 * 1024 })).stdout);
}

/** The named destinations (`pdfinfo -dests`) with the page each points at. */
export function pdfDestinations(pdf: Buffer): Promise<Record<string, number>> {
  return withPdfFile(pdf, async (path) => {
    const { stdout } = await run('/usr/bin/pdfinfo', ['-dests', path]);
    return Object.fromEntries([...stdout.matchAll(/^\s*(\d+)\s+\[.*\]\s+"(.*)"\s*$/gm)].map((m) => [m[2], Number(m[1])]));
  });
}

/** The named destinations the link annotations of `page` go to, in their order on the page (read with pdf-lib). */
export async function pdfLinkTargets(pdf: Buffer, page: number): Promise<string[]> {
  const doc = await PDFDocument.load(pdf);
  const annots = doc.getPage(page - 1).node.Annots();
  const targets: string[] = [];
  for (let i = 0; i < (annots?.size() ?? 0); i += 1) {
    const annot = annots!.lookup(i, PDFDict);
    if (annot.lookup(PDFName.of('Subtype')) !== PDFName.of('Link')) continue;
    const action = annot.lookup(PDFName.of('A'));
    const dest = annot.lookup(PDFName.of('Dest')) ?? (action instanceof PDFDict ? action.lookup(PDFName.of('D')) : undefined);
    if (dest instanceof PDFName) targets.push(dest.decodeText());
    else if (dest instanceof PDFString || dest instanceof PDFHexString) targets.push(dest.decodeText());
  }
  return targets;
}

export function testPool(overrides: Partial<ChromiumPoolOptions> = {}): ChromiumPool {
  return new ChromiumPool({
    executablePath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium',
    poolSize: 2,
    maxDocumentsPerBrowser: 50,
    imageAllowlist: [],
    ...overrides,
  });
}

/** A 1x1 PNG. */
/**
 * A PNG of one colour (8-bit RGB), written chunk by chunk; `claim` puts another size into the header
 * than the pixels have (a picture that lies about its size).
 */
export function solidPng(width: number, height: number, rgb: [number, number, number] = [0xc0, 0xc0, 0xc0], claim?: { width: number; height: number }): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body) >>> 0, 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(claim?.width ?? width, 0);
  header.writeUInt32BE(claim?.height ?? height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

export const PNG_1PX = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export interface HitRecorder {
  origin: string;
  host: string;
  hits: string[];
  close(): Promise<void>;
}

/** A local server that counts every request a rendered document makes; answers a PNG to all. */
export async function startHitRecorder(): Promise<HitRecorder> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG_1PX.length });
    res.end(PNG_1PX);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The PDF's text with all white space removed: for text drawn rotated or letter by letter (watermarks). */
export async function squeezedText(pdf: Buffer, page?: number): Promise<string> {
  return (await pdfText(pdf, { mode: 'raw', page })).replace(/\s+/g, '');
}
