import { PDFArray, PDFDict, PDFName, PDFRef, PDFStream, type PDFDocument, type PDFObject } from 'pdf-lib';

/**
 * The fonts a document uses (pages, their forms, patterns and Type 3 glyph resources, annotation
 * appearances): for PDF/A, each must be embedded, and for level U each must map its glyphs to
 * Unicode (a /ToUnicode CMap). Chromium embeds every font as a subset with a ToUnicode map, so a
 * refusal here means the PDF came from elsewhere (an appended PDF).
 */

export interface FontProblem {
  font: string;
  problem: 'not embedded' | 'no ToUnicode map';
}

const N = (s: string) => PDFName.of(s);

export function fontProblems(doc: PDFDocument, needUnicode: boolean): FontProblem[] {
  const ctx = doc.context;
  const seen = new Set<PDFObject>();
  const problems: FontProblem[] = [];
  const deref = (o: PDFObject | undefined) => (o instanceof PDFRef ? ctx.lookup(o) : o);
  const dictOf = (o: PDFObject | undefined): PDFDict | undefined => {
    const v = deref(o);
    return v instanceof PDFDict ? v : v instanceof PDFStream ? v.dict : undefined;
  };
  const once = (o: PDFObject | undefined) => {
    if (!o || seen.has(o)) return false;
    seen.add(o);
    return true;
  };

  const checkFont = (ref: PDFObject | undefined) => {
    if (!once(ref)) return;
    const font = dictOf(ref);
    if (!font) return;
    const name = (font.get(N('BaseFont')) as PDFName | undefined)?.decodeText() ?? 'unnamed font';
    const subtype = (font.get(N('Subtype')) as PDFName | undefined)?.decodeText();
    if (needUnicode && !font.has(N('ToUnicode'))) problems.push({ font: name, problem: 'no ToUnicode map' });
    if (subtype === 'Type3') {
      resources(font.get(N('Resources')));
      return;
    }
    const descendant = subtype === 'Type0' ? dictOf((deref(font.get(N('DescendantFonts'))) as PDFArray | undefined)?.get(0)) : font;
    const descriptor = dictOf(descendant?.get(N('FontDescriptor')));
    const embedded = !!descriptor && ['FontFile', 'FontFile2', 'FontFile3'].some((k) => descriptor.has(N(k)));
    if (!embedded) problems.push({ font: name, problem: 'not embedded' });
  };

  const resources = (o: PDFObject | undefined) => {
    if (!once(o)) return;
    const res = dictOf(o);
    if (!res) return;
    const fonts = dictOf(res.get(N('Font')));
    for (const [, f] of fonts?.entries() ?? []) checkFont(f);
    for (const kind of ['XObject', 'Pattern']) {
      const entries = dictOf(res.get(N(kind)));
      for (const [, x] of entries?.entries() ?? []) {
        if (!once(x)) continue;
        resources(dictOf(x)?.get(N('Resources')));
      }
    }
  };

  for (const page of doc.getPages()) {
    resources(page.node.Resources());
    const annots = deref(page.node.get(N('Annots')));
    if (!(annots instanceof PDFArray)) continue;
    for (const a of annots.asArray()) {
      const ap = dictOf(dictOf(a)?.get(N('AP')));
      for (const [, appearance] of ap?.entries() ?? []) {
        const stream = deref(appearance);
        if (stream instanceof PDFStream) resources(stream.dict.get(N('Resources')));
        else if (stream instanceof PDFDict) for (const [, s] of stream.entries()) resources(dictOf(s)?.get(N('Resources')));
      }
    }
  }
  return problems;
}
