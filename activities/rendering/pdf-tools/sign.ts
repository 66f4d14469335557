import type { SignatureOptions } from '../../../domain/documents/output';
import type { FinishRequest, SigningMaterial } from './pdf-tools';

/** A PAdES signature (output.signature): to be built. */
export async function signPdf(_pdf: Buffer, _options: SignatureOptions, _material: SigningMaterial, _request: FinishRequest): Promise<Buffer> {
  throw new Error('Signatures are not built yet');
}
