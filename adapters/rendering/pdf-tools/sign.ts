import { createHash, randomBytes, webcrypto, type KeyObject } from 'node:crypto';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SignPdf } from '@signpdf/signpdf';
import { Signer, SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import * as asn1js from 'asn1js';
import { PDFDocument, rgb, StandardFonts, type PDFFont } from 'pdf-lib';
import * as pkijs from 'pkijs';
import type { SignatureOptions } from '../../../domain/documents/output';
import { AppError } from '../../../domain/errors';
import { createOutboundGuard } from '../../http/outbound';
import { openP12, type OpenedP12 } from './p12';
import type { FinishRequest, SigningMaterial } from './pdf-tools';

/**
 * A PAdES signature (output.signature; docs/documents.md "Signatures"), made in the PDF tools'
 * processes. Baseline B-B: a CAdES detached CMS (SubFilter ETSI.CAdES.detached) whose signed
 * attributes are content-type, message-digest and ESS signing-certificate-v2 (no signing-time
 * attribute: PAdES puts the time in the signature dictionary's /M). With a timestamp authority
 * configured on the certificate, B-T: an RFC 3161 token over the signature value, as the
 * signature-time-stamp unsigned attribute, fetched through the outbound guard.
 *
 * @signpdf places the signature (placeholder, byte range, contents); pkijs builds the CMS and the
 * timestamp request; only the signing-certificate-v2 value is written here with asn1js. Nothing may
 * change the file after this step (finish.ts runs it last but encryption, which checkOutput refuses
 * together with a signature).
 */

const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStamp: '1.2.840.113549.1.9.16.2.14',
  sha256: '2.16.840.1.101.3.4.2.1',
} as const;

/** The largest answer read from a timestamp authority (a token with its certificates is a few KB). */
const TSA_ANSWER_MAX_BYTES = 64 * 1024;
const TSA_TIMEOUT_MS = 15_000;

const crypto = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto });
pkijs.setEngine('node', crypto);

const sha256 = (b: Uint8Array | Buffer) => createHash('sha256').update(b).digest();
/** A copy as a plain Uint8Array (what WebCrypto and asn1js take). */
const view = (b: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(b);
const tsaFailed = (message: string, extra: Record<string, unknown> = {}) => new AppError('ERR_SIGN_003', message, extra);

const NAMED_CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

async function cryptoKey(key: KeyObject, pkcs8: Buffer): Promise<CryptoKey> {
  const algorithm =
    key.asymmetricKeyType === 'ec'
      ? { name: 'ECDSA', namedCurve: NAMED_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? 'P-256' }
      : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  return webcrypto.subtle.importKey('pkcs8', view(pkcs8), algorithm, false, ['sign']) as Promise<CryptoKey>;
}

/** DER's order of a SET OF: by the elements' encodings. */
function derSorted(attributes: pkijs.Attribute[]): pkijs.Attribute[] {
  const enc = attributes.map((a) => ({ a, b: Buffer.from(a.toSchema().toBER(false)) }));
  return enc.sort((x, y) => Buffer.compare(x.b, y.b)).map((x) => x.a);
}

/**
 * ESS signing-certificate-v2 (RFC 5035): SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF
 * ESSCertIDv2 }, ESSCertIDv2 ::= SEQUENCE { certHash OCTET STRING (SHA-256, the default algorithm,
 * omitted), issuerSerial SEQUENCE { issuer GeneralNames ([4] directoryName), serialNumber } }.
 */
function signingCertificateV2(cert: pkijs.Certificate, der: Buffer): asn1js.Sequence {
  const issuerSerial = new asn1js.Sequence({
    value: [new asn1js.Sequence({ value: [new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 4 }, value: [cert.issuer.toSchema()] })] }), cert.serialNumber],
  });
  const essCertIdV2 = new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: sha256(der) }), issuerSerial] });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] });
}

/** Reads a body up to `max` bytes, refusing more while it streams. */
async function readCapped(res: Response, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw tsaFailed(`The timestamp authority answered more than ${max} bytes`, { reason: 'too_large' });
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

/** An RFC 3161 timestamp token (a ContentInfo) over `signature`, from `url` through the outbound guard. */
export async function timestampToken(url: string, signature: Uint8Array, allowlist: string[] = []): Promise<pkijs.ContentInfo> {
  const imprint = sha256(signature);
  const nonce = randomBytes(8);
  nonce[0] &= 0x7f;
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({ hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }), hashedMessage: new asn1js.OctetString({ valueHex: imprint }) }),
    nonce: new asn1js.Integer({ valueHex: nonce }),
    certReq: true,
  });
  const guard = createOutboundGuard(allowlist, { timeoutMs: TSA_TIMEOUT_MS });
  let body: Buffer;
  try {
    const res = await guard.guardedFetch(url, { method: 'POST', headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' }, body: Buffer.from(request.toSchema().toBER(false)), followRedirects: false });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw tsaFailed(`The timestamp authority answered HTTP ${res.status}`, { reason: 'http_status', status: res.status });
    }
    body = await readCapped(res, TSA_ANSWER_MAX_BYTES);
  } catch (e) {
    if (e instanceof AppError && e.code === 'ERR_SIGN_003') throw e;
    if (e instanceof AppError) throw tsaFailed(`The timestamp authority may not be reached: ${e.message}`, { reason: 'outbound', cause: e.code, detail: e.relatedInfo ?? null });
    throw tsaFailed(`The timestamp authority is not reachable: ${String((e as Error)?.message ?? e).slice(0, 200)}`, { reason: 'unreachable' });
  }
  let token: pkijs.ContentInfo;
  try {
    const resp = pkijs.TimeStampResp.fromBER(view(body));
    const status = resp.status.status;
    if ((status !== 0 && status !== 1) || !resp.timeStampToken) throw tsaFailed('The timestamp authority refused the request', { reason: 'refused', status });
    token = resp.timeStampToken;
    const signed = new pkijs.SignedData({ schema: token.content });
    const eContent = signed.encapContentInfo.eContent;
    if (!eContent) throw new Error('no TSTInfo');
    const info = pkijs.TSTInfo.fromBER(eContent.getValue());
    const hashed = Buffer.from(info.messageImprint.hashedMessage.valueBlock.valueHexView);
    if (!hashed.equals(imprint) || !info.nonce || !Buffer.from(info.nonce.valueBlock.valueHexView).equals(Buffer.from(request.nonce!.valueBlock.valueHexView))) {
      throw tsaFailed('The timestamp authority answered a token for another request', { reason: 'mismatch' });
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw tsaFailed('The timestamp authority answered something that is not a timestamp', { reason: 'malformed' });
  }
  return token;
}

/** The CAdES detached signature of the bytes @signpdf hands over (the PDF without its /Contents). */
class CadesSigner extends Signer {
  constructor(
    private readonly identity: OpenedP12,
    private readonly timestamp?: { url: string; allowlist: string[] },
  ) {
    super();
  }

  override async sign(pdf: Buffer): Promise<Buffer> {
    const { identity } = this;
    const cert = pkijs.Certificate.fromBER(view(identity.certificate));
    const chain = identity.chain.map((c) => pkijs.Certificate.fromBER(view(c)));
    const signedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 0,
      attributes: derSorted([
        new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.data })] }),
        new pkijs.Attribute({ type: OID.messageDigest, values: [new asn1js.OctetString({ valueHex: sha256(pdf) })] }),
        new pkijs.Attribute({ type: OID.signingCertificateV2, values: [signingCertificateV2(cert, identity.certificate)] }),
      ]),
    });
    const signedData = new pkijs.SignedData({
      version: 1,
      encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
      signerInfos: [
        new pkijs.SignerInfo({
          version: 1,
          sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
          signedAttrs,
        }),
      ],
      certificates: [cert, ...chain],
    });
    await signedData.sign(await cryptoKey(identity.key, identity.keyPkcs8), 0, 'SHA-256');
    if (this.timestamp) {
      const signerInfo = signedData.signerInfos[0];
      const token = await timestampToken(this.timestamp.url, view(signerInfo.signature.valueBlock.valueHexView), this.timestamp.allowlist);
      signerInfo.unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({ type: 1, attributes: [new pkijs.Attribute({ type: OID.signatureTimeStamp, values: [token.toSchema()] })] });
    }
    const contentInfo = new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) });
    return Buffer.from(contentInfo.toSchema().toBER(false));
  }
}

/**
 * A text string of a signature dictionary, escaped: pdf-lib writes PDFString values as they are.
 * ASCII stays literal; anything else is UTF-16BE with its byte-order mark (PDF 32000-1, 7.9.2.2).
 */
function pdfText(s: string): string {
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, ' ');
  const raw = /^[\x20-\x7e]*$/.test(clean) ? clean : String.fromCharCode(0xfe, 0xff) + Array.from(Buffer.from(clean, 'utf16le').swap16()).map((b) => String.fromCharCode(b)).join('');
  return raw.replace(/[()\\]/g, (c) => `\\${c}`).replace(/\r/g, '\\r');
}

/** What Helvetica (WinAnsi) can show of `s`; the rest becomes `?`. */
function showable(font: PDFFont, s: string): string {
  return Array.from(s.replace(/[\u0000-\u001f\u007f]/g, ' '))
    .map((c) => {
      try {
        font.encodeText(c);
        return c;
      } catch {
        return '?';
      }
    })
    .join('');
}

function fitted(font: PDFFont, s: string, size: number, width: number): string {
  if (font.widthOfTextAtSize(s, size) <= width) return s;
  let t = s;
  while (t.length > 1 && font.widthOfTextAtSize(`${t}…`, size) > width) t = t.slice(0, -1);
  return `${t}…`;
}

const commonName = (subject: string) => /(?:^|, )CN=([^,]+)/.exec(subject)?.[1] ?? subject;

/** A box at the bottom right of the last page: who signed, when, why and where. Answers its rectangle. */
async function drawSignatureBox(doc: PDFDocument, signer: string, at: Date, options: SignatureOptions): Promise<[number, number, number, number]> {
  const page = doc.getPages()[doc.getPageCount() - 1];
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const { width } = page.getSize();
  const w = 230;
  const lines: Array<[PDFFont, string]> = [
    [bold, `Digitally signed by ${signer}`],
    [font, `Date: ${at.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`],
    ...(options.reason ? [[font, `Reason: ${options.reason}`] as [PDFFont, string]] : []),
    ...(options.location ? [[font, `Location: ${options.location}`] as [PDFFont, string]] : []),
  ];
  const size = 8;
  const lead = 10.5;
  const h = 10 + lines.length * lead;
  const x = Math.max(10, width - w - 36);
  const y = 36;
  page.drawRectangle({ x, y, width: w, height: h, borderColor: rgb(0.2, 0.2, 0.2), borderWidth: 0.75, color: rgb(0.97, 0.97, 0.97) });
  lines.forEach(([f, text], i) => {
    page.drawText(fitted(f, showable(f, text), size, w - 12), { x: x + 6, y: y + h - 6 - size - i * lead + 1, size, font: f, color: rgb(0, 0, 0) });
  });
  return [x, y, x + w, y + h];
}

/**
 * The files this process opened lately, by a hash of file and password: opening one derives its keys
 * (thousands of iterations), which a batch would otherwise pay for each document. The validity is
 * checked again at every signature.
 */
const opened = new Map<string, OpenedP12>();
const OPENED_MAX = 8;

function openCached(material: SigningMaterial, at: Date): OpenedP12 {
  const id = createHash('sha256').update(material.p12).update('\0').update(material.password).digest('hex');
  let identity = opened.get(id);
  if (!identity) {
    identity = openP12(material.p12, material.password, at);
    if (opened.size >= OPENED_MAX) opened.delete(opened.keys().next().value!);
    opened.set(id, identity);
  }
  const { notAfter, notBefore } = identity.info;
  if (new Date(notAfter) < at) throw new AppError('ERR_SIGN_002', `The certificate expired on ${notAfter}`, { reason: 'expired', notAfter });
  if (new Date(notBefore) > at) throw new AppError('ERR_SIGN_002', `The certificate is valid from ${notBefore} only`, { reason: 'not_yet_valid', notBefore });
  return identity;
}

/** Signs the PDF: `pdf` as bytes, or already parsed (and edited: PDF/A) by the step before. */
export async function signPdf(pdf: Buffer | PDFDocument, options: SignatureOptions, material: SigningMaterial, request: FinishRequest): Promise<Buffer> {
  const signingTime = new Date();
  const identity = openCached(material, signingTime);
  let doc: PDFDocument;
  try {
    doc = Buffer.isBuffer(pdf) ? await PDFDocument.load(pdf, { updateMetadata: false }) : pdf;
  } catch (e) {
    throw new Error(`signature: the printed PDF cannot be read: ${String((e as Error)?.message ?? e)}`);
  }
  const signer = commonName(identity.info.subject);
  const widgetRect = options.visible ? await drawSignatureBox(doc, signer, signingTime, options) : [0, 0, 0, 0];
  const certBytes = identity.certificate.length + identity.chain.reduce((n, c) => n + c.length, 0);
  pdflibAddPlaceholder({
    pdfDoc: doc,
    pdfPage: doc.getPages()[doc.getPageCount() - 1],
    reason: pdfText(options.reason ?? ''),
    contactInfo: pdfText(options.contactInfo ?? ''),
    name: pdfText(signer),
    location: pdfText(options.location ?? ''),
    signingTime,
    // In hexadecimal digits (so even): the CMS holds the certificates, the signature with its attributes, and a
    // timestamp token with the authority's own certificates.
    signatureLength: 2 * (4096 + certBytes + (material.timestampUrl ? 12288 : 0)),
    subFilter: SUBFILTER_ETSI_CADES_DETACHED,
    widgetRect,
    appName: 'Formwork',
  });
  const prepared = Buffer.from(await doc.save({ useObjectStreams: false, updateFieldAppearances: false }));
  const timestamp = material.timestampUrl ? { url: material.timestampUrl, allowlist: request.outboundAllowlist ?? [] } : undefined;
  return new SignPdf().sign(prepared, new CadesSigner(identity, timestamp), signingTime);
}
