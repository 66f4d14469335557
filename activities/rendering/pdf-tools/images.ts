import type { ImageOptions } from '../../../domain/documents/output';
import type { ImageResult } from './pdf-tools';

/** PNG pages (format "png"): to be built. */
export async function pdfToImages(_pdf: Buffer, _options: ImageOptions, _dir: string): Promise<ImageResult> {
  throw new Error('Images are not built yet');
}
