import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRef, PDFString, PDFHexString, type PDFObject } from 'pdf-lib';

/** Edits of a printed PDF that Chromium cannot make while printing (build-html.ts HtmlDocument). */

/**
 * Puts the first page of `first` in place of the first page of `doc`, keeping `doc`'s page object.
 *
 * Chromium prints one header and one footer on every page. A template with a `firstPage` variant
 * is printed twice from the same laid-out page: the whole document with the regular header and
 * footer, and page 1 alone with the first-page ones. The margins are the same in both, so the
 * body is laid out identically and its marked content (the tagged PDF's MCIDs) matches; only the
 * drawing of page 1 (its content streams and the resources they name) is taken from `first`.
 * The page object itself, with its annotations (links) and its place in the structure tree, stays.
 */
export async function replaceFirstPage(doc: Buffer, first: Buffer): Promise<Buffer> {
  const target = await PDFDocument.load(doc, { updateMetadata: false });
  const source = await PDFDocument.load(first, { updateMetadata: false });
  const [copied] = await target.copyPages(source, [0]);
  const page = target.getPage(0).node;
  for (const key of ['Contents', 'Resources']) {
    const value = copied.node.get(PDFName.of(key));
    if (value) page.set(PDFName.of(key), value);
  }
  return Buffer.from(await target.save({ useObjectStreams: true, addDefaultPage: false, updateFieldAppearances: false }));
}

/**
 * The page (from 1) each named destination of the PDF points at: Chromium names one for every
 * element an internal link (`href="#id"`) targets, in the catalogue's /Dests dictionary (PDF 1.1),
 * or in a /Names tree.
 */
export async function destinationPages(pdf: Buffer): Promise<Record<string, number>> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const pageOf = new Map(doc.getPages().map((p, i) => [p.ref.toString(), i + 1]));
  const pages: Record<string, number> = {};
  const record = (name: string, dest: PDFObject | undefined) => {
    const target = dest instanceof PDFDict ? dest.lookup(PDFName.of('D')) : dest instanceof PDFRef ? doc.context.lookup(dest) : dest;
    const first = target instanceof PDFArray ? target.get(0) : undefined;
    const n = first instanceof PDFRef ? pageOf.get(first.toString()) : undefined;
    if (n !== undefined) pages[name] = n;
  };
  const dests = doc.catalog.lookup(PDFName.of('Dests'));
  if (dests instanceof PDFDict) for (const [key, value] of dests.entries()) record(key.decodeText(), value);
  const names = doc.catalog.lookup(PDFName.of('Names'));
  const tree = names instanceof PDFDict ? names.lookup(PDFName.of('Dests')) : undefined;
  const walk = (node: unknown, depth: number) => {
    if (!(node instanceof PDFDict) || depth > 32) return;
    const leaves = node.lookup(PDFName.of('Names'));
    if (leaves instanceof PDFArray) {
      for (let i = 0; i + 1 < leaves.size(); i += 2) {
        const key = leaves.lookup(i);
        if (key instanceof PDFString || key instanceof PDFHexString) record(key.decodeText(), leaves.lookup(i + 1));
      }
    }
    const kids = node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray) for (let i = 0; i < kids.size(); i += 1) walk(kids.lookup(i), depth + 1);
  };
  walk(tree, 0);
  return pages;
}
