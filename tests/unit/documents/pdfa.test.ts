import { PDFDict, PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { makePdfa } from '../../../adapters/rendering/pdf-tools/pdfa';
import { AppError } from '../../../domain/errors';

/**
 * makePdfa's refusals and clean-ups on PDFs that do not come from Chromium (a template's appended
 * PDF may be anything). The PDFs Chromium prints are read back with real tools in
 * tests/integration/documents/pdfa.test.ts.
 */

const createdAt = '2026-11-29T10:00:00.000Z';

/** A page in Helvetica, which pdf-lib does not embed (one of the standard 14 fonts), plus what PDF/A forbids. */
async function foreignPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([200, 200]);
  page.drawText('Hello', { font: await doc.embedFont(StandardFonts.Helvetica), x: 20, y: 100 });
  doc.addJavaScript('greet', 'app.alert("hi")');
  const js = doc.context.obj({ Type: 'Action', S: 'JavaScript', JS: 'app.alert(1)' });
  const uri = doc.context.obj({ Type: 'Action', S: 'URI', URI: 'https://example.com' });
  const annots = [js, uri].map((A) => doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [0, 0, 10, 10], F: 2, A })));
  page.node.set(PDFName.of('Annots'), doc.context.obj(annots));
  doc.catalog.set(PDFName.of('AA'), doc.context.obj({ WC: js }));
  return Buffer.from(await doc.save());
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('makePdfa on PDFs from elsewhere', () => {
  it('refuses PDF/A when a font is not embedded (ERR_OUTPUT_001), and level U when one has no ToUnicode map', async () => {
    const pdf = await foreignPdf();
    const b = await refusal(makePdfa(pdf, { output: { pdfa: '3b' }, createdAt }));
    expect(b.code).toBe('ERR_OUTPUT_001');
    expect(b.relatedInfo).toMatchObject({ reason: 'font not embedded', fonts: [{ font: 'Helvetica', problem: 'not embedded' }] });
    const u = await refusal(makePdfa(pdf, { output: { pdfa: '2u' }, createdAt }));
    expect(u.relatedInfo).toMatchObject({ reason: 'font without Unicode mapping', fonts: expect.arrayContaining([{ font: 'Helvetica', problem: 'no ToUnicode map' }]) });
  });

  it('takes JavaScript and additional actions out, keeps URI links and makes annotations printable', async () => {
    const doc = await PDFDocument.load(await foreignPdf());
    // A font that is embedded: the clean-up is what this looks at.
    const embedded = await PDFDocument.create();
    const [page] = await embedded.copyPages(doc, [0]);
    embedded.addPage(page);
    embedded.catalog.set(PDFName.of('AA'), doc.catalog.get(PDFName.of('AA'))!);
    embedded.addJavaScript('greet', 'app.alert("hi")');
    page.node.delete(PDFName.of('Resources'));
    page.node.set(PDFName.of('Resources'), embedded.context.obj({}));
    const out = await PDFDocument.load(await makePdfa(Buffer.from(await embedded.save()), { output: { pdfa: '2b' }, createdAt, title: 'T' }));
    expect(out.catalog.has(PDFName.of('AA'))).toBe(false);
    expect(out.catalog.lookup(PDFName.of('Names'), PDFDict).has(PDFName.of('JavaScript'))).toBe(false);
    const annots = out.getPages()[0].node.Annots()!.asArray().map((ref) => out.context.lookup(ref) as PDFDict);
    expect(annots.map((a) => a.get(PDFName.of('F'))?.toString())).toEqual(['4', '4']);
    expect(annots.map((a) => a.has(PDFName.of('A')))).toEqual([false, true]);
    expect(out.getTitle()).toBe('T');
    expect(out.getAuthor()).toBe('Formwork');
    expect(out.context.trailerInfo.ID).toBeDefined();
  });
});
