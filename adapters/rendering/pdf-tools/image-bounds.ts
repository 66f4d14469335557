import { AppError } from '../../../domain/errors';

/**
 * The bounds of `format: "png"` (docs/documents.md "Images"), checked before anything is drawn
 * (images.ts): each page's pixels at the DPI asked from its size in points, their sum against
 * IMAGE_MAX_PIXELS and the largest against IMAGE_MAX_PAGE_PIXELS (ERR_OUTPUT_007), and the runs of
 * pages pdftoppm draws at a time.
 */

/**
 * Pixels of all the pages of one request: 138 A4 pages at 150 dpi (2.2 M each) or 8 at 600 dpi
 * (34.8 M each) fit. PNG encoding costs about 1 s of CPU per 8 M pixels: 300 M is some 40 s,
 * within PDF_TOOLS_TIMEOUT_MS' default of 120 s.
 */
export const IMAGE_MAX_PIXELS = 300_000_000;
/** Pixels of one page: an A3 page at 600 dpi is 70 M; a 100 M page is 300 MB as a bitmap. */
export const IMAGE_MAX_PAGE_PIXELS = 100_000_000;
/** Pixels drawn by one pdftoppm run: what the folder holds at most (as PNGs) before they go into the ZIP. */
const IMAGE_RUN_PIXELS = 100_000_000;
interface PageSize {
  /** In points (1/72 inch). */
  width: number;
  height: number;
}

/** The pixels of a page drawn at `dpi`, as pdftoppm sizes it (rounded up). */
export function pagePixels(page: PageSize, dpi: number): { width: number; height: number } {
  return { width: Math.ceil((page.width * dpi) / 72), height: Math.ceil((page.height * dpi) / 72) };
}

/** The pages' sizes from `pdfinfo -f 1 -l <last>` ("Page    1 size: 595.28 x 841.89 pts (A4)"). */
export function parsePageSizes(pdfinfo: string): PageSize[] {
  const sizes: PageSize[] = [];
  for (const m of pdfinfo.matchAll(/^Page\s+(\d+)\s+size:\s+([\d.]+)\s+x\s+([\d.]+)\s+pts/gm)) sizes[Number(m[1]) - 1] = { width: Number(m[2]), height: Number(m[3]) };
  return sizes.filter(Boolean);
}

/**
 * Pages in runs of at most `runPixels` (a page larger than that is a run of its own), after the
 * bounds are checked: the first and last page numbers (1-based) of each run.
 */
export function planRuns(pixels: number[], runPixels = IMAGE_RUN_PIXELS): Array<{ first: number; last: number }> {
  const runs: Array<{ first: number; last: number }> = [];
  let sum = 0;
  pixels.forEach((p, i) => {
    const open = runs[runs.length - 1];
    if (open && sum + p <= runPixels) {
      open.last = i + 1;
      sum += p;
    } else {
      runs.push({ first: i + 1, last: i + 1 });
      sum = p;
    }
  });
  return runs;
}

/** Refuses a request that would draw more than the bounds allow (ERR_OUTPUT_007). */
export function checkImageBounds(pixels: number[], dpi: number): void {
  const largest = Math.max(0, ...pixels);
  if (largest > IMAGE_MAX_PAGE_PIXELS) {
    throw new AppError('ERR_OUTPUT_007', `A page at ${dpi} dpi would be ${Math.round(largest / 1e6)} megapixels; at most ${IMAGE_MAX_PAGE_PIXELS / 1e6} are drawn per page: ask for a lower dpi`, {
      field: 'output.image.dpi',
      limit: IMAGE_MAX_PAGE_PIXELS,
      pixels: largest,
    });
  }
  const total = pixels.reduce((a, b) => a + b, 0);
  if (total > IMAGE_MAX_PIXELS) {
    throw new AppError(
      'ERR_OUTPUT_007',
      `${pixels.length} pages at ${dpi} dpi would be ${Math.round(total / 1e6)} megapixels; at most ${IMAGE_MAX_PIXELS / 1e6} are drawn per document: ask for a lower dpi or pages "first"`,
      { field: 'output.image', limit: IMAGE_MAX_PIXELS, pixels: total, pages: pixels.length },
    );
  }
}
