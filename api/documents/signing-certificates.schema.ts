import Joi from 'joi';
import { P12_MAX_BYTES } from '../../adapters/rendering/pdf-tools/p12';

/**
 * A signing certificate's upload (docs/documents.md "Signatures"): multipart/form-data with the
 * PKCS#12 file in the part `file` and these text fields, or JSON with the file base64 in `p12`.
 */
export interface UploadCertificateFields {
  password: string;
  name?: string;
  timestampUrl?: string;
}

const fields = {
  password: Joi.string().max(256).allow('').required().description('The PKCS#12 password (write-only: never in an answer)'),
  name: Joi.string().trim().min(1).max(200).description('A name to know it by; default the certificate\'s common name'),
  timestampUrl: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(2000)
    .description('An RFC 3161 timestamp authority: signatures with this certificate are then PAdES B-T (the outbound guard applies)'),
};

export const uploadCertificateFieldsSchema = Joi.object<UploadCertificateFields, true>(fields);

export interface UploadCertificateJson extends UploadCertificateFields {
  p12: string;
}

export const uploadCertificateJsonSchema = Joi.object<UploadCertificateJson, true>({
  ...fields,
  p12: Joi.string().base64().max(Math.ceil(P12_MAX_BYTES / 3) * 4).required().description(`The PKCS#12 (.p12, .pfx) file, base64; at most ${P12_MAX_BYTES} bytes`),
});
