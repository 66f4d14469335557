import { AppError } from '../errors';
import type { DocumentFormat } from './types';

/**
 * A generation's `output` options (docs/documents.md "Output options"): what is done to the printed
 * PDF before it is stored. The same object on `POST /api/documents/generate`, batches, previews,
 * a Flow gate's `renderConfig.output` and a report's outputs. Every step runs in the PDF tools'
 * processes (adapters/rendering/pdf-tools/), never on a thread that polls Temporal or serves HTTP.
 *
 * The order is fixed: PDF/A conversion and attachments, then the appended PDFs, then the signature,
 * then encryption; an image format is made from the finished PDF.
 */

export const PDFA_LEVELS = ['2b', '3b', '2u', '3u'] as const;
export type PdfaLevel = (typeof PDFA_LEVELS)[number];

/** PDF/A-3's relationships of an embedded file to the document (ISO 19005-3, `AFRelationship`). */
export const AF_RELATIONSHIPS = ['Data', 'Source', 'Alternative', 'Supplement', 'Unspecified'] as const;
export type AfRelationship = (typeof AF_RELATIONSHIPS)[number];

export interface OutputAttachment {
  filename: string;
  /** The file's bytes, base64. */
  content: string;
  contentType: string;
  relationship: AfRelationship;
  description?: string;
}

/** The e-invoice (Factur-X / ZUGFeRD, EN 16931 profile) made from the template's variables: domain/documents/facturx.ts. */
export interface FacturxOptions {
  profile: 'EN16931';
}

export interface SignatureOptions {
  /** A project's signing certificate (POST /api/signing-certificates). */
  certificateId: string;
  reason?: string;
  location?: string;
  contactInfo?: string;
  /** A visible signature box on the last page; default invisible. */
  visible?: boolean;
}

export interface EncryptionOptions {
  /** Needed to open the document; empty or absent: anyone opens it, the permissions still hold. */
  userPassword?: string;
  /** Needed to change the permissions. */
  ownerPassword: string;
  permissions?: { print?: boolean; copy?: boolean; modify?: boolean };
}

/** `format: "png"`: the resolution, and the first page alone (a thumbnail) or every page (a ZIP of PNGs). */
export interface ImageOptions {
  dpi?: number;
  pages?: 'first' | 'all';
}

export interface OutputOptions {
  pdfa?: PdfaLevel;
  attachments?: OutputAttachment[];
  facturx?: FacturxOptions;
  signature?: SignatureOptions;
  encryption?: EncryptionOptions;
  image?: ImageOptions;
  /** A batch only: one ZIP of every document, or one merged PDF, offered by the batch's signed URL. */
  archive?: 'zip' | 'pdf';
}

const refuse = (field: string, message: string) => new AppError('ERR_VALID_001', message, { field: `output.${field}` });

/**
 * The combinations the standards or the order of the steps forbid, refused when the request
 * arrives (400 ERR_VALID_001 naming the field). `batch`: whether `archive` may be asked for.
 */
export function checkOutput(format: DocumentFormat, output: OutputOptions | undefined, { batch = false } = {}): void {
  if (!output) return;
  const pdfOnly = ['pdfa', 'attachments', 'facturx', 'signature', 'encryption'] as const;
  // An image is drawn from the PDF: PDF/A, embedded files, a signature or a password would not be in it.
  if (format !== 'pdf') {
    const asked = pdfOnly.find((k) => output[k] !== undefined);
    if (asked) throw refuse(asked, `output.${asked} applies to PDF documents only`);
  }
  if (output.image && format !== 'png') throw refuse('image', 'output.image applies to format "png" only');
  if (output.archive && !batch) throw refuse('archive', 'output.archive applies to batches only');
  if (output.pdfa && output.encryption) throw refuse('encryption', 'PDF/A forbids encryption: ask for output.pdfa or output.encryption, not both');
  // The same password for both would open every copy as its owner: the permissions would hold for no one.
  if (output.encryption?.userPassword && output.encryption.userPassword === output.encryption.ownerPassword) {
    throw refuse('encryption.ownerPassword', 'The owner password must differ from the user password: with the same one, whoever opens the document may change its permissions');
  }
  if (output.signature && output.encryption) throw refuse('encryption', 'A signed document cannot be encrypted afterwards without breaking its signature: ask for one of them');
  if ((output.attachments?.length || output.facturx) && output.pdfa && !output.pdfa.startsWith('3')) {
    throw refuse(output.attachments?.length ? 'attachments' : 'facturx', 'Embedded files need PDF/A-3 (output.pdfa "3b" or "3u")');
  }
  if (output.facturx && !output.pdfa) throw refuse('facturx', 'A Factur-X invoice is a PDF/A-3 document: set output.pdfa to "3b" (or "3u") as well');
  if (output.facturx && output.attachments?.some((a) => a.filename.toLowerCase() === 'factur-x.xml')) {
    throw refuse('attachments', 'factur-x.xml is the e-invoice output.facturx makes: name the attachment otherwise');
  }
}

/** Whether the printed PDF goes through the PDF tools at all (a plain PDF does not). */
export function needsFinishing(output: OutputOptions | undefined): boolean {
  return !!output && !!(output.pdfa || output.attachments?.length || output.facturx || output.signature || output.encryption);
}

/** The options as answers show them: passwords are write-only (`{ "set": true }`), attachments by name and size. */
export function presentOutput(output: OutputOptions | null | undefined) {
  if (!output) return undefined;
  const { encryption, attachments, ...rest } = output;
  return {
    ...rest,
    ...(attachments ? { attachments: attachments.map(({ content, ...a }) => ({ ...a, bytes: Math.floor((content.length * 3) / 4) })) } : {}),
    ...(encryption
      ? { encryption: { permissions: encryption.permissions, ownerPassword: { set: true }, userPassword: { set: !!encryption.userPassword } } }
      : {}),
  };
}
