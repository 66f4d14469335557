import type { EncryptionOptions } from '../../../domain/documents/output';

/** AES-256 encryption (output.encryption): to be built. */
export async function encryptPdf(_pdf: Buffer, _options: EncryptionOptions, _dir: string): Promise<Buffer> {
  throw new Error('Encryption is not built yet');
}
