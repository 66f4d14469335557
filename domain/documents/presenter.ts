import { presentArchive, type PresentableArchive } from './batch-archive';
import { presentOutput, type OutputOptions } from './output';
import type { Billing, DocumentFormat, JobKind } from './types';

/**
 * The spec's document job and batch objects, shared by the API's answers and the webhook payloads
 * (document.generated, document.failed, batch.completed carry the job or batch as a status read
 * shows it). The inputs are structural, so the records (db/documents/*.entity.ts) fit without this
 * layer importing TypeORM.
 */

export interface DownloadLink {
  url: string;
  expiresAt: Date;
}

/** What presentJob reads of a job record. */
export interface PresentableJob {
  id: string;
  status: string;
  format: DocumentFormat;
  /** Null for a merge (POST /api/documents/merge), which has no template. */
  templateId: string | null;
  templateVersion: number | null;
  kind?: JobKind;
  batchId: string | null;
  filename: string | null;
  artefactExpiredAt: Date | null;
  billing: Billing;
  metadata: Record<string, any> | null;
  output?: OutputOptions | null;
  /** The catalogued code of a failed job's error (domain/errors.ts); its message is errorMessage. */
  errorCode?: string | null;
  errorMessage: string | null;
  retryOf: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

/**
 * What presentBatch reads of a batch record; `archiveLink` is the archive's signed link when it is
 * ready (batchArchiveLink in document-events.ts), set by the status read and the event beside the record.
 */
export interface PresentableBatch extends PresentableArchive {
  archiveLink?: DownloadLink;
  id: string;
  status: string;
  templateId: string;
  format: DocumentFormat;
  totalJobs: number;
  metadata: Record<string, any> | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** A batch's counts, derived from its jobs (db/documents/batch-counts.ts). */
export interface PresentableBatchCounts {
  completedJobs: number;
  failedJobs: number;
  cancelledJobs: number;
}

/** The spec's document job object. */
export function presentJob<J extends PresentableJob>(job: J, link?: DownloadLink) {
  return {
    jobId: job.id,
    status: job.status,
    format: job.format,
    templateId: job.templateId,
    templateVersion: job.templateVersion,
    /** Only a merge says what it is (`"merge"`); a render of a template says nothing more. */
    kind: job.kind === 'merge' ? ('merge' as const) : undefined,
    batchId: job.batchId ?? undefined,
    filename: job.filename,
    downloadUrl: link?.url,
    expiresAt: link?.expiresAt.toISOString(),
    /** True once retention removed the file: there is no link to offer any more. */
    artefactExpired: job.artefactExpiredAt ? true : undefined,
    watermarked: job.billing === 'free',
    metadata: job.metadata ?? {},
    /** The output options asked for (passwords write-only). */
    output: presentOutput(job.output),
    errorCode: job.errorCode ?? undefined,
    errorMessage: job.errorMessage ?? undefined,
    retryOf: job.retryOf ?? undefined,
    createdAt: job.createdAt.toISOString(),
    completedAt: job.completedAt?.toISOString() ?? null,
  };
}

export function presentBatch<B extends PresentableBatch>(batch: B, counts: PresentableBatchCounts, documents?: Array<{ jobId: string; status: string; downloadUrl?: string }>) {
  return {
    batchId: batch.id,
    status: batch.status,
    templateId: batch.templateId,
    format: batch.format,
    totalJobs: batch.totalJobs,
    completedJobs: counts.completedJobs,
    failedJobs: counts.failedJobs,
    cancelledJobs: counts.cancelledJobs,
    metadata: batch.metadata ?? {},
    documents,
    /** The ZIP or merged PDF `output.archive` asked for (docs/documents.md "Batch archives"). */
    archive: presentArchive(batch, batch.archiveLink),
    createdAt: batch.createdAt.toISOString(),
    completedAt: batch.completedAt?.toISOString() ?? null,
  };
}

/** Columns of the jobs export (CSV header order; JSON uses the same keys). */
export const EXPORT_COLUMNS = ['jobId', 'status', 'format', 'templateId', 'templateVersion', 'batchId', 'filename', 'errorCode', 'errorMessage', 'metadata', 'createdAt', 'completedAt'] as const;

/** One row of the jobs export, from the raw `document_jobs` row the export query streams. */
export function exportRow(row: Record<string, any>): Record<(typeof EXPORT_COLUMNS)[number], unknown> {
  return {
    jobId: row.id,
    status: row.status,
    format: row.format,
    templateId: row.template_id,
    templateVersion: row.template_version,
    batchId: row.batch_id,
    filename: row.filename,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    metadata: row.metadata ? JSON.stringify(row.metadata) : '',
    createdAt: new Date(row.created_at).toISOString(),
    completedAt: row.completed_at ? new Date(row.completed_at).toISOString() : null,
  };
}
