import type { DocumentFormat } from './types';

const FILE_EXTENSIONS: Record<DocumentFormat, 'pdf' | 'xlsx' | 'png'> = { pdf: 'pdf', excel: 'xlsx', png: 'png' };

/** Where a job's artefact is stored: project-scoped, named by job id. */
export function artefactKey(projectId: string, jobId: string, format: DocumentFormat, extension: string = FILE_EXTENSIONS[format]): string {
  return `documents/${projectId}/${jobId}.${extension}`;
}

/**
 * The name the browser saves a download under: the requested filename, else the job id, with the
 * format's extension. A filename that already ends in it (`a.pdf` for a PDF, any letter case) keeps
 * its name rather than becoming `a.pdf.pdf`; another extension (`a.xlsx` for a PDF) is just part
 * of the name.
 */
export function downloadName(filename: string | null, jobId: string, format: DocumentFormat): string {
  const ext = `.${FILE_EXTENSIONS[format]}`;
  const name = filename ?? `document-${jobId}`;
  return name.toLowerCase().endsWith(ext) && name.length > ext.length ? name : `${name}${ext}`;
}

/** Request `filename`: a plain name without extension or path separators. */
export const FILENAME_PATTERN = /^[^/\\\u0000-\u001f]{1,200}$/;

/**
 * A rough wait estimate from what is ahead in the queue and how long documents have taken
 * lately, spread over the render slots working in parallel.
 */
export function estimateWaitSeconds(queueAhead: number, recentAvgMs: number | null, renderSlots: number): number {
  const perDocMs = recentAvgMs ?? 1500;
  return Math.max(1, Math.ceil(((queueAhead + 1) * perDocMs) / Math.max(1, renderSlots) / 1000));
}
