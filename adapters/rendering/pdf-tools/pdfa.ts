import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AFRelationship, PDFArray, PDFDict, PDFDocument, PDFHeader, PDFHexString, PDFName, PDFNumber, PDFRef, PDFStream, PDFString, type PDFObject } from 'pdf-lib';
import { facturxXml, invoiceFromVariables, xmlText } from '../../../domain/documents/facturx';
import type { OutputAttachment } from '../../../domain/documents/output';
import { AppError } from '../../../domain/errors';
import { fontProblems } from './pdfa-fonts';
import { xmpPacket, type DocumentInfo, type PdfaId } from './pdfa-xmp';
import type { FinishRequest } from './pdf-tools';

/**
 * PDF/A (output.pdfa) with the attachments (output.attachments) and the Factur-X e-invoice
 * (output.facturx), on the PDF Chromium printed (docs/documents.md "PDF/A and e-invoices").
 * Runs in a PDF tools process (finish.ts). Chromium's PDF is already tagged, with every font
 * embedded as a subset with a ToUnicode map; what PDF/A adds is kept beside what is there (the
 * structure tree and the marked content are not touched):
 * - an sRGB output intent (GTS_PDFA1) with the IEC 61966-2.1 profile pdfkit ships, so that
 *   DeviceRGB colours and the pages' transparency groups (allowed by parts 2 and 3) have a meaning;
 * - the XMP packet and an Info dictionary written from the same values, with `pdfaid`;
 * - a trailer /ID; link annotations printable; no JavaScript, additional actions or encryption;
 * - files embedded with their AFRelationship, listed in the catalog's /AF.
 * Without `pdfa`, attachments are embedded the same way and nothing is claimed.
 */

const N = (s: string) => PDFName.of(s);

/**
 * The sRGB profile, read once per process from the pdfkit package (nothing is fetched): the file
 * its own PDF/A output uses, next to its main module (the package exports no path to it).
 */
let srgb: Buffer | undefined;
const srgbProfile = () => (srgb ??= readFileSync(join(dirname(require.resolve('pdfkit')), 'data', 'sRGB_IEC61966_2_1.icc')));

/** Actions a PDF/A link may keep (ISO 19005-2 §6.5.1 forbids Launch, JavaScript, forms' and media actions). */
const ALLOWED_ACTIONS = new Set(['GoTo', 'GoToR', 'GoToE', 'URI', 'Thread', 'Named']);

const FACTURX_FILE = 'factur-x.xml';

export async function makePdfa(pdf: Buffer, request: FinishRequest): Promise<Buffer> {
  const doc = await readPrinted(pdf);
  await applyPdfa(doc, pdf, request);
  return Buffer.from(await doc.save({ useObjectStreams: true, addDefaultPage: false, updateFieldAppearances: false }));
}

/** The printed PDF, parsed once for the steps that edit it. */
export async function readPrinted(pdf: Buffer): Promise<PDFDocument> {
  try {
    return await PDFDocument.load(pdf, { updateMetadata: false });
  } catch (err) {
    throw new AppError('ERR_OUTPUT_003', `The printed document could not be read: ${(err as Error).message}`, { part: 'document' });
  }
}

/**
 * PDF/A, attachments and the e-invoice applied to `doc` (parsed from `pdf`, whose bytes seed the
 * file identifier). The caller saves it: alone (makePdfa) or after the signature's placeholder,
 * so a signed PDF/A is parsed and written once (docs/performance.md, "Output options").
 */
export async function applyPdfa(doc: PDFDocument, pdf: Buffer, request: FinishRequest): Promise<void> {
  const { output } = request;
  const level = output.pdfa;
  const id: PdfaId | undefined = level ? { part: level.startsWith('3') ? 3 : 2, conformance: level.endsWith('u') ? 'U' : 'B' } : undefined;

  // The e-invoice first: missing data is the user's to fix, whatever the PDF.
  const invoice = output.facturx ? invoiceFromVariables(request.variables ?? {}) : undefined;
  const facturx = invoice ? facturxXml(invoice) : undefined;
  const invoiceNumber = invoice?.number;
  if (facturx && output.attachments?.some((a) => a.filename.toLowerCase() === FACTURX_FILE)) {
    throw new AppError('ERR_OUTPUT_002', `An attachment may not be named ${FACTURX_FILE} when output.facturx makes that file`, {
      errors: [{ path: 'output.attachments', message: `${FACTURX_FILE} is the e-invoice's name` }],
    });
  }

  const created = new Date(request.createdAt);

  if (id) {
    const problems = fontProblems(doc, id.conformance === 'U');
    if (problems.length) {
      const first = problems[0];
      throw new AppError('ERR_OUTPUT_001', `The document cannot be PDF/A-${level}: font ${first.font} has ${first.problem === 'not embedded' ? 'no embedded font program' : 'no ToUnicode map'}`, {
        reason: first.problem === 'not embedded' ? 'font not embedded' : 'font without Unicode mapping',
        fonts: problems.slice(0, 20),
      });
    }
    withoutActiveContent(doc);
    printableAnnotations(doc);
    outputIntent(doc);
  }

  const files: Array<{ bytes: Buffer; name: string; mimeType: string; relationship: AFRelationship; description: string }> = (output.attachments ?? []).map((a: OutputAttachment) => ({
    bytes: Buffer.from(a.content, 'base64'),
    name: a.filename,
    mimeType: a.contentType,
    relationship: AFRelationship[a.relationship],
    description: a.description ?? a.filename,
  }));
  if (facturx) {
    files.push({ bytes: Buffer.from(facturx, 'utf8'), name: FACTURX_FILE, mimeType: 'text/xml', relationship: AFRelationship.Alternative, description: 'Factur-X/ZUGFeRD invoice (EN 16931)' });
  }
  // The EmbeddedFiles name tree is searched by key: its names are kept sorted.
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const f of files) {
    await doc.attach(f.bytes, f.name, { mimeType: f.mimeType, description: f.description, creationDate: created, modificationDate: created, afRelationship: f.relationship });
  }

  if (id) {
    // The Info dictionary gets the same text as the XMP packet, which cannot carry control characters.
    const title = xmlText(request.title ?? '').trim();
    const info: DocumentInfo = {
      title: title || (invoiceNumber ? `Invoice ${invoiceNumber}` : 'Document'),
      author: 'Formwork',
      subject: invoiceNumber ? `Invoice ${invoiceNumber}` : title || 'Document',
      creator: 'Formwork (Chromium)',
      producer: 'Formwork',
      created,
      modified: created,
    };
    documentInfo(doc, info);
    const xmp = xmpPacket(info, id, facturx ? { documentFileName: FACTURX_FILE, conformanceLevel: 'EN 16931' } : undefined);
    // Unfiltered, as PDF/A asks of the metadata stream.
    doc.catalog.set(N('Metadata'), doc.context.register(doc.context.stream(xmp, { Type: 'Metadata', Subtype: 'XML' })));
    // Object and cross-reference streams are PDF 1.5; PDF/A-2 and -3 are based on PDF 1.7.
    doc.context.header = PDFHeader.forVersion(1, 7);
    doc.context.trailerInfo.Encrypt = undefined;
    const fileId = PDFHexString.of(createHash('md5').update(pdf).update(randomBytes(16)).digest('hex'));
    doc.context.trailerInfo.ID = doc.context.obj([fileId, fileId]);
  }
}

/** The Info dictionary from the values the XMP packet gets: the two must agree (§6.6.3). */
function documentInfo(doc: PDFDocument, info: DocumentInfo) {
  const dict = doc.context.obj({}) as PDFDict;
  dict.set(N('Title'), PDFHexString.fromText(info.title));
  dict.set(N('Author'), PDFHexString.fromText(info.author));
  dict.set(N('Subject'), PDFHexString.fromText(info.subject));
  dict.set(N('Creator'), PDFHexString.fromText(info.creator));
  dict.set(N('Producer'), PDFHexString.fromText(info.producer));
  dict.set(N('CreationDate'), PDFString.fromDate(info.created));
  dict.set(N('ModDate'), PDFString.fromDate(info.modified));
  doc.context.trailerInfo.Info = doc.context.register(dict);
}

/** The sRGB output intent (the document's colours are DeviceRGB and DeviceGray). */
function outputIntent(doc: PDFDocument) {
  const profile = srgbProfile();
  const stream = doc.context.flateStream(profile, { N: 3 });
  const intent = doc.context.obj({
    Type: 'OutputIntent',
    S: 'GTS_PDFA1',
    OutputConditionIdentifier: PDFString.of('sRGB IEC61966-2.1'),
    RegistryName: PDFString.of('http://www.color.org'),
    Info: PDFString.of('sRGB IEC61966-2.1'),
    DestOutputProfile: doc.context.register(stream),
  });
  doc.catalog.set(N('OutputIntents'), doc.context.obj([doc.context.register(intent)]));
}

/** No JavaScript, no additional actions, no actions PDF/A forbids, anywhere they can be. */
function withoutActiveContent(doc: PDFDocument) {
  const { catalog, context } = doc;
  catalog.delete(N('AA'));
  const names = lookupDict(doc, catalog.get(N('Names')));
  names?.delete(N('JavaScript'));
  const open = lookupDict(doc, catalog.get(N('OpenAction')));
  if (open?.has(N('S')) && !allowedAction(open)) catalog.delete(N('OpenAction'));
  for (const page of doc.getPages()) page.node.delete(N('AA'));
  // Every object: annotations, outline items and form fields may carry actions too.
  for (const [, obj] of context.enumerateIndirectObjects()) {
    const dict = obj instanceof PDFDict ? obj : undefined;
    if (!dict) continue;
    dict.delete(N('AA'));
    // /A is an action in annotations and outline items (it has /S), attributes in structure elements (kept).
    const action = lookupDict(doc, dict.get(N('A')));
    if (action?.has(N('S')) && !allowedAction(action)) dict.delete(N('A'));
  }
}

function allowedAction(action: PDFDict): boolean {
  const s = action.get(N('S'));
  return s instanceof PDFName && ALLOWED_ACTIONS.has(s.decodeText());
}

/** Annotations printed and not hidden (§6.3.2): flags Print set, Hidden, Invisible, NoView and ToggleNoView clear. */
function printableAnnotations(doc: PDFDocument) {
  for (const page of doc.getPages()) {
    const annots = doc.context.lookup(page.node.get(N('Annots')));
    if (!(annots instanceof PDFArray)) continue;
    for (const a of annots.asArray()) {
      const annot = lookupDict(doc, a);
      if (!annot) continue;
      const flags = annot.get(N('F'));
      const old = flags instanceof PDFNumber ? flags.asNumber() : 0;
      annot.set(N('F'), PDFNumber.of((old | 4) & ~(1 | 2 | 32 | 256)));
    }
  }
}

function lookupDict(doc: PDFDocument, o: PDFObject | undefined): PDFDict | undefined {
  const v = o instanceof PDFRef ? doc.context.lookup(o) : o;
  return v instanceof PDFDict ? v : v instanceof PDFStream ? v.dict : undefined;
}
