import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { ImageOptions } from '../../../domain/documents/output';
import { AppError } from '../../../domain/errors';
import { checkImageBounds, pagePixels, parsePageSizes, planRuns } from './image-bounds';
import type { ImageResult } from './pdf-tools';
import { runTool, toolFailure, TOOL_CPU_SECONDS, TOOL_MEMORY_BYTES, type ToolRun } from './run-tool';

/**
 * `format: "png"` (docs/documents.md "Images"): the finished PDF drawn by poppler's `pdftoppm` at
 * the DPI asked, in a PDF tools worker process on files in the call's private folder. `pages:
 * "first"` answers one PNG (a thumbnail), `"all"` a ZIP of `page-001.png`, `page-002.png`, … (yazl).
 *
 * What a request may cost is known before anything is drawn: pdfinfo gives each page's size, so
 * its pixels at the DPI are counted, and a request past IMAGE_MAX_PIXELS in all, or one page past
 * IMAGE_MAX_PAGE_PIXELS, fails with ERR_OUTPUT_007 (`relatedInfo.field` "output.image"). Pages are
 * drawn in runs of at most IMAGE_RUN_PIXELS, each run's files moved into the ZIP and deleted
 * before the next, so the folder never holds more than one run; the PNGs (and the ZIP) stop at the
 * output limit (RENDER_OUTPUT_MAX_BYTES, ERR_LIMIT_011) while they are made, not after.
 */

/** Used when the caller names no output limit: RENDER_OUTPUT_MAX_BYTES' default. */
const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

const DEFAULT_DPI = 150;
const MIN_DPI = 36;
const MAX_DPI = 600;

/** The options as the render gives them: `maxBytes` is RENDER_OUTPUT_MAX_BYTES. */
export interface ImageRequest extends ImageOptions {
  maxBytes?: number;
}

const tooLarge = (maxBytes: number) => new AppError('ERR_LIMIT_011', undefined, { limit: maxBytes });

export async function pdfToImages(pdf: Buffer, options: ImageRequest, dir: string): Promise<ImageResult> {
  const dpi = options.dpi ?? DEFAULT_DPI;
  if (!Number.isInteger(dpi) || dpi < MIN_DPI || dpi > MAX_DPI) throw new AppError('ERR_VALID_001', `output.image.dpi must be a whole number from ${MIN_DPI} to ${MAX_DPI}`, { field: 'output.image.dpi' });
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const all = options.pages === 'all';
  const input = join(dir, 'images-in.pdf');
  await writeFile(input, pdf, { mode: 0o600 });
  const limits = { cwd: dir, memoryBytes: TOOL_MEMORY_BYTES, cpuSeconds: TOOL_CPU_SECONDS };

  const info = await runTool('pdfinfo', ['-f', '1', '-l', all ? '1000000' : '1', '--', input], limits);
  if (info.code !== 0) throw toolFailure('pdfinfo', info);
  const sizes = parsePageSizes(info.stdout);
  if (!sizes.length) throw new Error('pdfinfo gave no page sizes');
  const pixels = sizes.map((s) => {
    const { width, height } = pagePixels(s, dpi);
    return width * height;
  });
  checkImageBounds(pixels, dpi);

  // A PNG larger than the output limit ends pdftoppm (RLIMIT_FSIZE) instead of filling the disk.
  const draw = async (first: number, last: number, root: string, single: boolean) => {
    const args = ['-png', '-r', String(dpi), '-f', String(first), '-l', String(last), ...(single ? ['-singlefile'] : []), '--', input, root];
    const run = await runTool('pdftoppm', args, { ...limits, fileBytes: maxBytes + 1 });
    if (run.code !== 0) throw drawFailure(run, maxBytes);
  };

  if (!all) {
    await draw(1, 1, join(dir, 'page'), true);
    const png = await readFile(join(dir, 'page.png'));
    if (png.length > maxBytes) throw tooLarge(maxBytes);
    return { body: png, contentType: 'image/png', fileExtension: 'png', pageCount: 1 };
  }

  const zip = new yazl.ZipFile();
  // yazl's stream is a stream.Readable (PassThrough); its types say only NodeJS.ReadableStream.
  const out = zip.outputStream as Readable;
  const zipped = collect(out);
  // Settled with the ZIP below, or left when a page fails (its rejection is not the answer then).
  zipped.catch(() => undefined);
  const width = Math.max(3, String(sizes.length).length);
  let bytes = 0;
  try {
    for (const [r, run] of planRuns(pixels).entries()) {
      const prefix = `run${r}-`;
      await draw(run.first, run.last, join(dir, `run${r}`), false);
      // pdftoppm names them run<r>-<page>.png, the page number zero-padded to the document's page count.
      const files = (await readdir(dir)).filter((f) => f.startsWith(prefix) && f.endsWith('.png'));
      const numbered = files.map((f) => ({ f, page: Number(f.slice(prefix.length, -4)) })).sort((a, b) => a.page - b.page);
      if (numbered.length !== run.last - run.first + 1) throw new Error(`pdftoppm drew ${numbered.length} of pages ${run.first}-${run.last}`);
      for (const { f, page } of numbered) {
        const png = await readFile(join(dir, f));
        await rm(join(dir, f));
        bytes += png.length;
        if (bytes > maxBytes) throw tooLarge(maxBytes);
        // Stored, not deflated again: a PNG is compressed already.
        zip.addBuffer(png, `page-${String(page).padStart(width, '0')}.png`, { compress: false });
      }
    }
  } catch (err) {
    out.destroy();
    throw err;
  }
  zip.end();
  const body = await zipped;
  if (body.length > maxBytes) throw tooLarge(maxBytes);
  return { body, contentType: 'application/zip', fileExtension: 'zip', pageCount: sizes.length };
}

function drawFailure(run: ToolRun, maxBytes: number): Error {
  if (run.signal === 'SIGXFSZ') return tooLarge(maxBytes);
  return toolFailure('pdftoppm', run);
}

function collect(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
