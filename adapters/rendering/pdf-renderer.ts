import type { HtmlDocument } from '../../domain/templates/build-html';

/** The port the rest of the service prints PDFs through; ChromiumPool is its adapter. */
export interface PdfRenderResult {
  pdf: Buffer;
  pageCount: number;
}

export interface PdfRenderOptions {
  /** More pages than this fails the render with ERR_LIMIT_001. */
  maxPages: number;
  /** Aborting it stops the render (its page is closed) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The bytes of the assets the document names, by id (served to its page under ASSET_ORIGIN). */
  assets?: PageAssets;
}

export type PageAssets = ReadonlyMap<string, { contentType: string; body: Buffer }>;

export interface PdfRenderer {
  renderPdf(doc: HtmlDocument, options: PdfRenderOptions): Promise<PdfRenderResult>;
  close(): Promise<void>;
}
