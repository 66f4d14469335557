import Joi from 'joi';
import { AF_RELATIONSHIPS, PDFA_LEVELS } from '../../domain/documents/output';

/**
 * The `output` object of generation (domain/documents/output.ts; docs/documents.md "Output
 * options"), shared by single documents, batches, previews, Flow gates' `renderConfig.output` and
 * report outputs. Which combinations are refused is checkOutput's rule, applied after this shape.
 */

/** Largest attachment, decoded (base64 is a third larger). */
const ATTACHMENT_MAX_BYTES = 2 * 1024 * 1024;
const ATTACHMENTS_MAX = 5;

const password = Joi.string().max(127);

export const outputSchema = Joi.object({
  pdfa: Joi.string()
    .valid(...PDFA_LEVELS)
    .description('PDF/A conformance: `2b`, `3b` (and `2u`, `3u`): embedded fonts, an sRGB output intent, XMP metadata; refused with `encryption`'),
  attachments: Joi.array()
    .items(
      Joi.object({
        filename: Joi.string().trim().min(1).max(200).pattern(/^[^/\\\x00-\x1f]+$/).required(),
        content: Joi.string().base64().max(Math.ceil(ATTACHMENT_MAX_BYTES / 3) * 4).required().description('The file, base64'),
        contentType: Joi.string().max(100).default('application/octet-stream'),
        relationship: Joi.string().valid(...AF_RELATIONSHIPS).default('Supplement').description('PDF/A-3 `AFRelationship`'),
        description: Joi.string().max(500),
      }),
    )
    .max(ATTACHMENTS_MAX)
    .unique('filename')
    .description('Files embedded in the PDF (with `pdfa`, it must be a PDF/A-3 level)'),
  facturx: Joi.object({ profile: Joi.string().valid('EN16931').default('EN16931') }).description(
    'A Factur-X / ZUGFeRD invoice XML (`factur-x.xml`, relationship `Alternative`) made from the variables by the documented mapping; needs `pdfa` 3b or 3u',
  ),
  signature: Joi.object({
    certificateId: Joi.string().uuid().required().description('A signing certificate of the project (POST /api/signing-certificates)'),
    reason: Joi.string().max(200),
    location: Joi.string().max(200),
    contactInfo: Joi.string().max(200),
    visible: Joi.boolean().default(false),
  }).description('A PAdES baseline B-B signature (B-T with a timestamp authority configured)'),
  encryption: Joi.object({
    userPassword: password.allow(''),
    ownerPassword: password.min(1).required(),
    permissions: Joi.object({ print: Joi.boolean().default(true), copy: Joi.boolean().default(false), modify: Joi.boolean().default(false) }).default(),
  }).description('AES-256 encryption with a user and an owner password (write-only) and permission flags'),
  image: Joi.object({
    dpi: Joi.number().integer().min(36).max(600).default(150),
    pages: Joi.string().valid('first', 'all').default('first').description('`first`: one PNG; `all`: a ZIP with one PNG per page'),
  }).description('For `format: "png"`'),
  archive: Joi.string().valid('zip', 'pdf').description('A batch only: one ZIP of every document, or one merged PDF, at the batch\'s `archive.downloadUrl`'),
});
