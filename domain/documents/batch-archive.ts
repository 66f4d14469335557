import { AppError } from '../errors';
import type { OutputOptions } from './output';
import type { DocumentFormat } from './types';

/**
 * A batch's archive (docs/documents.md "Batch archives"): `output.archive` `"zip"` (every completed
 * document's file in one ZIP) or `"pdf"` (one merged PDF, a bookmark per document), built by the
 * batch workflow once every job has ended and before batch.completed is announced.
 */

export type ArchiveFormat = NonNullable<OutputOptions['archive']>;
export const ARCHIVE_STATUSES = ['pending', 'ready', 'failed', 'expired'] as const;
export type ArchiveStatus = (typeof ARCHIVE_STATUSES)[number];

/** A job the archive does not hold: it ended without a file (failed, cancelled) or its file was gone. */
export interface LeftOutJob {
  jobId: string;
  status: string;
}

/**
 * At acceptance: a merged PDF needs PDF documents (400 ERR_VALID_001, field `output.archive`), and a
 * batch with more documents than BATCH_ARCHIVE_MAX_DOCUMENTS gets no archive (400 ERR_OUTPUT_005,
 * `relatedInfo.limit`), before anything is checked, paid for or written.
 */
export function checkArchiveRequest(format: DocumentFormat, output: OutputOptions | undefined, documents: number, maxDocuments: number): void {
  if (!output?.archive) return;
  if (output.archive === 'pdf' && format !== 'pdf') {
    throw new AppError('ERR_VALID_001', 'output.archive "pdf" merges PDF documents: use "zip" for other formats', { field: 'output.archive' });
  }
  if (documents > maxDocuments) {
    throw new AppError('ERR_OUTPUT_005', `A batch archive holds at most ${maxDocuments} documents; this batch has ${documents}`, { limit: maxDocuments, field: 'output.archive' });
  }
}

/** Where a batch's archive is stored: project-scoped like job files, named by batch id. */
export function archiveKey(projectId: string, batchId: string, format: ArchiveFormat): string {
  return `archives/${projectId}/${batchId}.${format}`;
}

export const ARCHIVE_CONTENT_TYPES: Record<ArchiveFormat, string> = { zip: 'application/zip', pdf: 'application/pdf' };

/** The name the archive downloads under. */
export function archiveDownloadName(batchId: string, format: ArchiveFormat): string {
  return `batch-${batchId}.${format}`;
}

/**
 * Names of a ZIP's entries, each used once: the job's download name (its filename, else
 * `document-<jobId>`) with the extension of its stored file; a name met before (in any letter case)
 * becomes `name (2).pdf`, `name (3).pdf`, … Path separators and control characters, which request
 * filenames cannot hold, are replaced all the same: an entry never lands outside the folder it is
 * unpacked into.
 */
export function uniqueEntryNames(): (name: string) => string {
  const used = new Set<string>();
  return (wanted) => {
    const clean = wanted.replace(/[/\\\u0000-\u001f]/g, '_').replace(/^\.+/, '_');
    const dot = clean.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [clean.slice(0, dot), clean.slice(dot)] : [clean, ''];
    let name = clean;
    for (let n = 2; used.has(name.toLowerCase()); n += 1) name = `${stem} (${n})${ext}`;
    used.add(name.toLowerCase());
    return name;
  };
}

/** A job's entry name before it is made unique: its download name with the stored file's extension (a PNG job of every page is a ZIP). */
export function entryName(downloadName: string, storedKey: string): string {
  const stored = storedKey.slice(storedKey.lastIndexOf('.'));
  const dot = downloadName.lastIndexOf('.');
  if (dot > 0 && downloadName.slice(dot).toLowerCase() === stored.toLowerCase()) return downloadName;
  const known = ['.pdf', '.xlsx', '.png', '.zip'];
  const base = dot > 0 && known.includes(downloadName.slice(dot).toLowerCase()) ? downloadName.slice(0, dot) : downloadName;
  return `${base}${stored}`;
}

/** What presentBatch reads of a batch's archive columns. */
export interface PresentableArchive {
  output?: OutputOptions | null;
  archiveStatus?: ArchiveStatus | null;
  archiveSize?: number | null;
  archiveDocuments?: number | null;
  archiveLeftOut?: LeftOutJob[] | null;
  archiveErrorCode?: string | null;
  archiveError?: string | null;
}

/** The `archive` of a batch's answer (and of batch.completed), with its signed link when it is ready. */
export function presentArchive(batch: PresentableArchive, link?: { url: string; expiresAt: Date }) {
  const format = batch.output?.archive;
  if (!format || !batch.archiveStatus) return undefined;
  return {
    format,
    status: batch.archiveStatus,
    downloadUrl: link?.url,
    expiresAt: link?.expiresAt.toISOString(),
    size: batch.archiveStatus === 'ready' ? (batch.archiveSize ?? undefined) : undefined,
    documents: batch.archiveDocuments ?? undefined,
    leftOut: batch.archiveLeftOut ?? undefined,
    errorCode: batch.archiveErrorCode ?? undefined,
    errorMessage: batch.archiveError ?? undefined,
  };
}
