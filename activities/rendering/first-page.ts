import { PDFDocument, PDFName } from 'pdf-lib';

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
