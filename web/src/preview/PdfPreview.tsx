import 'pdfjs-dist/web/pdf_viewer.css';
import './preview.css';
import { getDocument, GlobalWorkerOptions, PDFWorker, TextLayer } from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import { useEffect, useRef } from 'react';

// pdf.js parses in its worker, a file of the build (worker-src 'self'); fonts come from the PDF itself.
GlobalWorkerOptions.workerSrc = workerUrl;
// One worker for every preview of the page's life: starting one per document costs more than drawing it.
let worker: PDFWorker | undefined;

/** Pages are drawn to the width the preview has (at most 1.5 times their size), so none is cut off. */
const MAX_SCALE = 1.5;
const PADDING = 32;

/**
 * A PDF drawn page by page (pdf.js), each page a canvas with a text layer over it: the document's
 * text is selectable and read by a screen reader, and tests read it as a person would. The new
 * pages replace the old ones only once all are drawn, so an update does not flicker.
 */
export default function PdfPreview({ pdf, onRendered }: { pdf: ArrayBuffer; onRendered?: (pages: number) => void }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let cancelled = false;
    // pdf.js takes the buffer over (transfers it to its worker): it gets a copy.
    worker ??= new PDFWorker();
    const task = getDocument({ data: new Uint8Array(pdf.slice(0)), worker, isEvalSupported: false, enableXfa: false });
    void (async () => {
      const doc = await task.promise;
      const pages: HTMLElement[] = [];
      for (let n = 1; n <= doc.numPages && !cancelled; n += 1) {
        const page = await doc.getPage(n);
        const width = (container.current?.clientWidth ?? 800) - PADDING;
        const viewport = page.getViewport({ scale: Math.min(MAX_SCALE, Math.max(0.3, width / page.getViewport({ scale: 1 }).width)) });
        const sheet = document.createElement('div');
        sheet.className = 'fw-pdf-page';
        sheet.setAttribute('role', 'group');
        sheet.setAttribute('aria-label', `Page ${n} of ${doc.numPages}`);
        sheet.style.width = `${Math.floor(viewport.width)}px`;
        sheet.style.height = `${Math.floor(viewport.height)}px`;
        sheet.style.setProperty('--scale-factor', String(viewport.scale));
        const canvas = document.createElement('canvas');
        const ratio = window.devicePixelRatio || 1;
        canvas.width = Math.floor(viewport.width * ratio);
        canvas.height = Math.floor(viewport.height * ratio);
        canvas.style.width = `${Math.floor(viewport.width)}px`;
        canvas.style.height = `${Math.floor(viewport.height)}px`;
        canvas.setAttribute('aria-hidden', 'true');
        const context = canvas.getContext('2d')!;
        const text = document.createElement('div');
        text.className = 'textLayer';
        // The picture and the text layer are made side by side.
        await Promise.all([
          page.render({ canvas, canvasContext: context, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] }).promise,
          new TextLayer({ textContentSource: page.streamTextContent(), container: text, viewport }).render(),
        ]);
        sheet.append(canvas, text);
        pages.push(sheet);
      }
      if (cancelled) return;
      container.current?.replaceChildren(...pages);
      onRendered?.(doc.numPages);
    })().catch((err: unknown) => {
      if (!cancelled) console.warn('preview: the PDF could not be drawn', err);
    });
    return () => {
      cancelled = true;
      void task.destroy();
    };
  }, [pdf, onRendered]);
  return <div ref={container} className="fw-pdf-pages" />;
}
