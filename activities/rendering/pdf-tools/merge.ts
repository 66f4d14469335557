import type { MergeLimits, MergePart } from './pdf-tools';

/** One PDF of the parts (POST /api/documents/merge, batch archives): to be built. */
export async function mergePdfs(_parts: MergePart[], _limits: MergeLimits): Promise<{ pdf: Buffer; pageCount: number }> {
  throw new Error('Merging is not built yet');
}

/** A template's static PDFs appended to the document: to be built. */
export async function appendPdfs(_pdf: Buffer, _extra: Buffer[]): Promise<Buffer> {
  throw new Error('Appending is not built yet');
}
