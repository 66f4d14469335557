import type { FinishRequest } from './pdf-tools';

/** PDF/A (output.pdfa) with the attachments and the Factur-X e-invoice: to be built. */
export async function makePdfa(_pdf: Buffer, _request: FinishRequest): Promise<Buffer> {
  throw new Error('PDF/A is not built yet');
}
