import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFString, StandardFonts, degrees, grayscale, type PDFRef } from 'pdf-lib';
import { AppError } from '../../../domain/errors';
import type { MergeLimits, MergePart } from './pdf-tools';

/**
 * Joining PDFs with pdf-lib, in the PDF tools' processes (POST /api/documents/merge, a batch's
 * merged archive, a template's appended PDFs; docs/documents.md "Merging and appended PDFs").
 */

const SAVE = { useObjectStreams: true, addDefaultPage: false, updateFieldAppearances: false } as const;

/** A part read as a PDF, or ERR_OUTPUT_003 naming it (not a PDF, broken, or encrypted). */
async function open(pdf: Buffer, part: number): Promise<PDFDocument> {
  try {
    const doc = await PDFDocument.load(pdf, { updateMetadata: false });
    // pdf-lib reads what it can: a file with no page tree fails only when its pages are asked for.
    doc.getPageCount();
    return doc;
  } catch (err) {
    const encrypted = /encrypted/i.test(String((err as Error)?.message));
    throw new AppError('ERR_OUTPUT_003', encrypted ? `Part ${part + 1} is encrypted` : `Part ${part + 1} is not a readable PDF`, { part, reason: encrypted ? 'encrypted' : 'unreadable' });
  }
}

/** A page label range as pdf-lib can rebuild it in another document: style, prefix, first number. */
interface LabelRange {
  start: number;
  style?: string;
  prefix?: string;
  first?: number;
}

/** The part's page label ranges (its catalogue's /PageLabels number tree, flat `Nums` or one level of `Kids`). */
function labelsOf(doc: PDFDocument): LabelRange[] {
  const root = doc.catalog.lookup(PDFName.of('PageLabels'));
  if (!(root instanceof PDFDict)) return [];
  const ranges: LabelRange[] = [];
  const read = (node: PDFDict, depth: number) => {
    const nums = node.lookup(PDFName.of('Nums'));
    if (nums instanceof PDFArray) {
      for (let i = 0; i + 1 < nums.size(); i += 2) {
        const start = nums.lookup(i);
        const dict = nums.lookup(i + 1);
        if (!(start instanceof PDFNumber) || !(dict instanceof PDFDict)) continue;
        const style = dict.lookup(PDFName.of('S'));
        const prefix = dict.lookup(PDFName.of('P'));
        const first = dict.lookup(PDFName.of('St'));
        ranges.push({
          start: start.asNumber(),
          style: style instanceof PDFName ? style.decodeText() : undefined,
          prefix: prefix instanceof PDFString || prefix instanceof PDFHexString ? prefix.decodeText() : undefined,
          first: first instanceof PDFNumber ? first.asNumber() : undefined,
        });
      }
    }
    const kids = node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray && depth < 8) for (let i = 0; i < kids.size(); i += 1) {
      const kid = kids.lookup(i);
      if (kid instanceof PDFDict) read(kid, depth + 1);
    }
  };
  read(root, 0);
  return ranges.sort((a, b) => a.start - b.start);
}

function setLabels(doc: PDFDocument, ranges: LabelRange[]): void {
  const nums: unknown[] = [];
  for (const r of ranges) {
    const dict: Record<string, unknown> = {};
    if (r.style) dict.S = PDFName.of(r.style);
    if (r.prefix) dict.P = PDFHexString.fromText(r.prefix);
    if (r.first !== undefined) dict.St = r.first;
    nums.push(r.start, doc.context.obj(dict as never));
  }
  doc.catalog.set(PDFName.of('PageLabels'), doc.context.obj({ Nums: nums as never }));
}

/** One bookmark per part, each opening the part's first page. */
function setOutline(doc: PDFDocument, items: Array<{ title: string; page: PDFRef }>): void {
  const context = doc.context;
  const outlines = context.nextRef();
  const refs = items.map(() => context.nextRef());
  items.forEach((item, i) => {
    const entry: Record<string, unknown> = { Title: PDFHexString.fromText(item.title), Parent: outlines, Dest: [item.page, PDFName.of('Fit')] };
    if (i > 0) entry.Prev = refs[i - 1];
    if (i < items.length - 1) entry.Next = refs[i + 1];
    context.assign(refs[i], context.obj(entry as never));
  });
  context.assign(outlines, context.obj({ Type: 'Outlines', First: refs[0], Last: refs[refs.length - 1], Count: items.length }));
  doc.catalog.set(PDFName.of('Outlines'), outlines);
  doc.catalog.set(PDFName.of('PageMode'), PDFName.of('UseOutlines'));
}

/** The free plan's mark (build-html.ts DEFAULT_WATERMARK), across each page as a render draws it. */
const WATERMARK = 'FORMWORK FREE';

async function stampWatermark(doc: PDFDocument): Promise<void> {
  const font = await doc.embedFont(StandardFonts.HelveticaBold);
  for (const page of doc.getPages()) {
    const { width, height } = page.getSize();
    const size = Math.min(width, height) / 8;
    const text = font.widthOfTextAtSize(WATERMARK, size);
    // Centred along the rising diagonal (45°): start half the text's length back from the middle.
    const back = text / 2 / Math.SQRT2;
    page.drawText(WATERMARK, { x: width / 2 - back, y: height / 2 - back, size, font, rotate: degrees(45), color: grayscale(0.5), opacity: 0.15 });
  }
}

/**
 * One PDF of the parts, in order: a bookmark per part (its title), each part's page labels kept
 * (a part without labels is numbered 1, 2, … from its own first page). More pages in all than
 * `limits.maxPages` is ERR_OUTPUT_005, found before any page is copied. `watermark`: a free
 * document's merge carries the free plan's mark on every page, as a rendered one does.
 */
export async function mergePdfs(parts: MergePart[], limits: MergeLimits): Promise<{ pdf: Buffer; pageCount: number }> {
  const docs: PDFDocument[] = [];
  let total = 0;
  for (const [i, part] of parts.entries()) {
    const doc = await open(part.pdf, i);
    total += doc.getPageCount();
    if (total > limits.maxPages) throw new AppError('ERR_OUTPUT_005', `The merged document would have more than ${limits.maxPages} pages`, { limit: limits.maxPages, field: 'parts' });
    docs.push(doc);
  }
  const merged = await PDFDocument.create({ updateMetadata: false });
  const outline: Array<{ title: string; page: PDFRef }> = [];
  const labels: LabelRange[] = [];
  for (const [i, doc] of docs.entries()) {
    const offset = merged.getPageCount();
    const pages = await merged.copyPages(doc, doc.getPageIndices());
    pages.forEach((p) => merged.addPage(p));
    if (pages.length === 0) continue;
    outline.push({ title: parts[i].title, page: pages[0].ref });
    const own = labelsOf(doc).filter((r) => r.start < pages.length);
    if (own.length === 0 || own[0].start !== 0) labels.push({ start: offset, style: 'D', first: 1 });
    for (const r of own) labels.push({ ...r, start: offset + r.start });
  }
  if (outline.length > 0) setOutline(merged, outline);
  if (labels.length > 0) setLabels(merged, labels);
  if (limits.watermark) await stampWatermark(merged);
  return { pdf: Buffer.from(await merged.save(SAVE)), pageCount: merged.getPageCount() };
}

/**
 * The template's static PDFs appended to a rendered document (terms and conditions). The document
 * keeps its own objects (its tags, links and metadata); the appended pages are copied after its last.
 */
export async function appendPdfs(pdf: Buffer, extra: Buffer[]): Promise<Buffer> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  for (const [i, body] of extra.entries()) {
    const part = await open(body, i);
    const pages = await doc.copyPages(part, part.getPageIndices());
    pages.forEach((p) => doc.addPage(p));
  }
  return Buffer.from(await doc.save(SAVE));
}
