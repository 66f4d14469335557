import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { finished } from 'node:stream/promises';
import { Context } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import { ZipFile } from 'yazl';
import { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import { ARCHIVE_CONTENT_TYPES, archiveKey, entryName, uniqueEntryNames, type ArchiveFormat, type LeftOutJob } from '../../domain/documents/batch-archive';
import { downloadName } from '../../domain/documents/files';
import type { DocumentFormat } from '../../domain/documents/types';
import { AppError } from '../../domain/errors';
import type { PdfTools } from '../../adapters/rendering/pdf-tools/pdf-tools';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { withHeartbeat } from '../heartbeat';

/**
 * A batch's archive (docs/documents.md "Batch archives"), built by the batch workflow once every job
 * has ended and before it completes the batch: `zip` streams each completed job's file from storage
 * into one ZIP that is written to storage as it is made (one file open at a time, nothing held whole
 * in memory); `pdf` merges the files in the PDF tools' processes (a bookmark per document). Jobs
 * that ended without a file are left out and listed (`archive_left_out`).
 *
 * Idempotent: the archive's key is the batch's (`archives/<project>/<batch>.<format>`), so a retried
 * attempt writes the same object again, and an archive already `ready` (or `failed`) is answered as
 * it is. A limit passed (ERR_OUTPUT_005) or another catalogued refusal fails the archive, not the
 * batch; what a retry may mend (storage or database down) throws, and Temporal retries.
 */

export interface BatchArchiveDeps {
  db: DataSource;
  storage: ArtefactStorage;
  pdfTools: PdfTools;
  limits: {
    /** BATCH_ARCHIVE_MAX_BYTES: the ZIP as written, and the files a merged PDF is made of. */
    maxBytes: number;
    /** Pages of a merged archive (MERGE_MAX_PAGES). */
    maxPages: number;
    /**
     * Bytes of the files a merged PDF is made of at most, besides maxBytes: the merge holds them in one
     * PDF tools process, whose heap is PDF_TOOLS_MAX_HEAP_MB (half of it, so the merged copy fits too).
     */
    maxMergeInputBytes: number;
  };
}

export interface BatchArchiveResult {
  /** `none` when the batch asked for no archive. */
  status: 'none' | 'ready' | 'failed' | 'expired';
}

/** A job as the archive reads it, in batch order. */
interface ArchivedJob {
  id: string;
  status: string;
  format: DocumentFormat;
  filename: string | null;
  artefactKey: string | null;
  artefactSize: number | null;
  batchIndex: number;
}

const HEARTBEAT_MS = 2000;

/** Past `maxBytes` of what flows through it: ERR_OUTPUT_005 (the upload is abandoned and nothing is stored). */
class ByteCap extends Transform {
  bytes = 0;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) done(tooLarge(this.maxBytes));
    else done(null, chunk);
  }
}

const tooLarge = (maxBytes: number) => new AppError('ERR_OUTPUT_005', `The batch archive would be larger than ${maxBytes} bytes (BATCH_ARCHIVE_MAX_BYTES)`, { limit: maxBytes, field: 'output.archive' });

/** Whether storage has nothing under the key (the job was deleted, or retention removed its file, while the archive was built). */
const isMissing = (err: unknown) => err instanceof AppError && err.code === 'ERR_FILE_001';

/** Activities of the render task queue: building a batch's archive. */
export function createBatchArchiveActivities(deps: BatchArchiveDeps) {
  const batches = deps.db.getRepository(DocumentBatchEntity);

  async function jobsOf(batchId: string): Promise<ArchivedJob[]> {
    const rows: Array<Record<string, any>> = await deps.db.query(
      `SELECT id, status, format, filename, artefact_key, artefact_size, artefact_expired_at IS NOT NULL AS expired, batch_index FROM document_jobs
        WHERE batch_id = $1 ORDER BY batch_index`,
      [batchId],
    );
    return rows.map((r) => ({
      id: r.id,
      // A completed job whose file retention removed is listed as `expired`.
      status: r.status === 'completed' && r.expired ? 'expired' : r.status,
      format: r.format,
      filename: r.filename,
      artefactKey: r.artefact_key,
      artefactSize: r.artefact_size,
      batchIndex: r.batch_index,
    }));
  }

  /** The ZIP, written to `key` as it is made; resolves to its size and the jobs whose file was gone. */
  async function writeZip(key: string, jobs: ArchivedJob[], signal: AbortSignal, progress: (done: number) => void): Promise<{ size: number; missing: ArchivedJob[] }> {
    const zip = new ZipFile();
    const cap = new ByteCap(deps.limits.maxBytes);
    const output = zip.outputStream as Readable;
    output.pipe(cap);
    const stored = deps.storage.put(key, cap, ARCHIVE_CONTENT_TYPES.zip);
    // The upload failing (the byte cap, storage), the ZIP writer failing (a file shorter than its
    // size) or the activity cancelled ends the loop below at once.
    let stop: (err: unknown) => void = () => {};
    const stopped = new Promise<never>((_, reject) => (stop = reject));
    stopped.catch(() => {});
    stored.catch((err) => stop(err));
    zip.on('error', (err: Error) => {
      stop(err);
      cap.destroy(err);
    });
    const onAbort = () => {
      stop(signal.reason);
      cap.destroy(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const names = uniqueEntryNames();
    const missing: ArchivedJob[] = [];
    try {
      for (const [i, job] of jobs.entries()) {
        signal.throwIfAborted();
        let file;
        try {
          file = await Promise.race([deps.storage.get(job.artefactKey!), stopped]);
        } catch (err) {
          if (!isMissing(err)) throw err;
          missing.push(job);
          continue;
        }
        // One file open at a time: the next is opened once this one has been read into the ZIP.
        const read = finished(file.body);
        zip.addReadStream(file.body, names(entryName(downloadName(job.filename, job.id, job.format), job.artefactKey!)), {
          size: file.size,
          mtime: new Date(0),
          // PDFs compress a little further; XLSX, PNG and ZIP files are compressed already.
          compress: job.artefactKey!.endsWith('.pdf'),
        });
        try {
          await Promise.race([read, stopped]);
        } catch (err) {
          file.body.destroy();
          throw err;
        }
        progress(i + 1);
      }
      zip.end();
      await Promise.race([stored, stopped]);
      return { size: cap.bytes, missing };
    } catch (err) {
      cap.destroy(err instanceof Error ? err : new Error(String(err)));
      await stored.catch(() => {});
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The merged PDF, a bookmark per document (its filename, else "Document n"); its size and the jobs whose file was gone. */
  async function writeMergedPdf(key: string, jobs: ArchivedJob[], signal: AbortSignal, progress: (done: number) => void): Promise<{ size: number; missing: ArchivedJob[] }> {
    const maxInput = Math.min(deps.limits.maxBytes, deps.limits.maxMergeInputBytes);
    const parts: Array<{ pdf: Buffer; title: string }> = [];
    const missing: ArchivedJob[] = [];
    let total = 0;
    for (const [i, job] of jobs.entries()) {
      signal.throwIfAborted();
      let file;
      try {
        file = await deps.storage.get(job.artefactKey!);
      } catch (err) {
        if (!isMissing(err)) throw err;
        missing.push(job);
        continue;
      }
      total += file.size;
      if (total > maxInput) {
        file.body.destroy();
        throw new AppError('ERR_OUTPUT_005', `The documents of a merged batch archive may have at most ${maxInput} bytes in all`, { limit: maxInput, field: 'output.archive' });
      }
      parts.push({ pdf: await buffer(file.body), title: job.filename ?? `Document ${job.batchIndex + 1}` });
      progress(i + 1);
    }
    if (parts.length === 0) return { size: 0, missing };
    const { pdf } = await deps.pdfTools.merge(parts, { maxPages: deps.limits.maxPages }, signal);
    parts.length = 0;
    if (pdf.length > deps.limits.maxBytes) throw tooLarge(deps.limits.maxBytes);
    await deps.storage.put(key, pdf, ARCHIVE_CONTENT_TYPES.pdf);
    return { size: pdf.length, missing };
  }

  /** Records the archive failed (once: a finished archive stays as it is). */
  async function fail(batchId: string, error: { code: string | null; message: string }): Promise<void> {
    await deps.db.query(
      `UPDATE document_batches SET archive_status = 'failed', archive_error_code = $2, archive_error = $3, archive_key = NULL, archive_size = NULL, archive_documents = NULL, archive_left_out = NULL
        WHERE id = $1 AND (archive_status = 'pending' OR archive_status IS NULL)`,
      [batchId, error.code, error.message],
    );
  }

  return {
    /** Builds the batch's archive, or answers the one already built (or failed). Heartbeats its progress. */
    async buildBatchArchive(input: { batchId: string }): Promise<BatchArchiveResult> {
      const batch = await batches.findOneBy({ id: input.batchId });
      const format: ArchiveFormat | undefined = batch?.output?.archive;
      if (!batch || !format) return { status: 'none' };
      if (batch.archiveStatus && batch.archiveStatus !== 'pending') return { status: batch.archiveStatus };

      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      let done = 0;
      return withHeartbeat(() => ctx.heartbeat({ done }), HEARTBEAT_MS, async () => {
        try {
          const all = await jobsOf(batch.id);
          const hasFile = (j: ArchivedJob) => j.status === 'completed' && !!j.artefactKey;
          const withFile = all.filter(hasFile);
          // What the records already say is too large fails before a byte is read.
          const known = withFile.reduce((sum, j) => sum + (j.artefactSize ?? 0), 0);
          if (known > deps.limits.maxBytes) throw tooLarge(deps.limits.maxBytes);
          if (withFile.length === 0) throw new AppError('ERR_OUTPUT_008', 'No document of the batch completed: there is nothing to archive', { field: 'output.archive' });

          const key = archiveKey(batch.projectId, batch.id, format);
          const write = format === 'zip' ? writeZip : writeMergedPdf;
          const { size, missing } = await write(key, withFile, signal, (n) => (done = n));
          if (missing.length === withFile.length) {
            await deps.storage.delete(key);
            throw new AppError('ERR_OUTPUT_008', 'No document of the batch has its file any more: there is nothing to archive', { field: 'output.archive' });
          }
          // In batch order: the jobs that ended without a file, and those whose file was gone when it was read.
          const gone = new Set(missing.map((j) => j.id));
          const leftOut: LeftOutJob[] = all.filter((j) => !hasFile(j) || gone.has(j.id)).map((j) => ({ jobId: j.id, status: gone.has(j.id) ? 'missing' : j.status }));
          await deps.db.query(
            `UPDATE document_batches SET archive_status = 'ready', archive_key = $2, archive_size = $3, archive_documents = $4, archive_left_out = $5::jsonb,
                    archive_error_code = NULL, archive_error = NULL, archive_completed_at = now()
              WHERE id = $1 AND (archive_status = 'pending' OR archive_status IS NULL)`,
            [batch.id, key, size, withFile.length - missing.length, JSON.stringify(leftOut)],
          );
          return { status: 'ready' };
        } catch (err) {
          if (signal.aborted) throw signal.reason;
          if (err instanceof AppError && !err.retryable) {
            await fail(batch.id, { code: err.code, message: err.message });
            return { status: 'failed' };
          }
          throw err;
        }
      });
    },
  };
}
export type BatchArchiveActivities = ReturnType<typeof createBatchArchiveActivities>;

/**
 * The main queue's side: whether a batch has an archive to build (so a batch that asked for none
 * does not wait for a render slot), and what the batch workflow records when building it gave up
 * (its attempts ran out on errors a retry did not mend), so the batch still completes, its archive `failed`.
 */
export function createBatchArchiveBookkeeping(db: DataSource) {
  return {
    /** The archive's format while it is still to be built; null when none was asked for or it is built (or failed) already. */
    async pendingBatchArchive(input: { batchId: string }): Promise<ArchiveFormat | null> {
      const [row]: Array<{ format: ArchiveFormat | null; status: string | null }> = await db.query(
        `SELECT output->>'archive' AS format, archive_status AS status FROM document_batches WHERE id = $1`,
        [input.batchId],
      );
      return row?.format && (row.status === null || row.status === 'pending') ? row.format : null;
    },

    async failBatchArchive(input: { batchId: string; message: string }): Promise<void> {
      await db.query(
        `UPDATE document_batches SET archive_status = 'failed', archive_error_code = 'ERR_INTERNAL_001', archive_error = $2 WHERE id = $1 AND (archive_status = 'pending' OR archive_status IS NULL)`,
        [input.batchId, input.message],
      );
    },
  };
}
export type BatchArchiveBookkeeping = ReturnType<typeof createBatchArchiveBookkeeping>;
