import type { DocumentFormat } from './types';

const FILE_EXTENSIONS: Record<DocumentFormat, 'pdf' | 'xlsx' | 'png'> = { pdf: 'pdf', excel: 'xlsx', png: 'png' };

/** What a job's stored file may be: a PDF, a workbook, one PNG, or a ZIP of PNGs (`format: "png"`, `output.image.pages: "all"`). */
type ArtefactExtension = 'pdf' | 'xlsx' | 'png' | 'zip';

const ARTEFACT_EXTENSIONS: ReadonlySet<string> = new Set<ArtefactExtension>(['pdf', 'xlsx', 'png', 'zip']);

/**
 * Where a job's artefact is stored: project-scoped, named by job id, with the extension of what
 * was made (the render's: a `png` job asked for every page is a `.zip`); by default the format's.
 */
export function artefactKey(projectId: string, jobId: string, format: DocumentFormat, extension: ArtefactExtension = FILE_EXTENSIONS[format]): string {
  return `documents/${projectId}/${jobId}.${extension}`;
}

/** The extension of a stored artefact, from its key (`documents/<project>/<job>.zip` → `zip`). */
function artefactExtension(key: string): ArtefactExtension | undefined {
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase();
  return ARTEFACT_EXTENSIONS.has(ext) ? (ext as ArtefactExtension) : undefined;
}

/**
 * The name the browser saves a download under: the requested filename, else the job id, with the
 * extension of the stored file (`artefact`, its key) or else the format's. A filename that
 * already ends in it (`a.pdf` for a PDF, any letter case) keeps its name rather than becoming
 * `a.pdf.pdf`; another extension (`a.xlsx` for a PDF) is just part of the name.
 */
export function downloadName(filename: string | null, jobId: string, format: DocumentFormat, artefact?: string | null): string {
  const ext = `.${(artefact && artefactExtension(artefact)) || FILE_EXTENSIONS[format]}`;
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
