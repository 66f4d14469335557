import type { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import type { DocumentJobEntity } from '../../db/documents/document-job.entity';
import type { BatchCounts } from '../../db/documents/batch-counts';

export interface DownloadLink {
  url: string;
  expiresAt: Date;
}

/** The spec's document job object. */
export function presentJob(job: DocumentJobEntity, link?: DownloadLink) {
  return {
    jobId: job.id,
    status: job.status,
    format: job.format,
    templateId: job.templateId,
    templateVersion: job.templateVersion,
    batchId: job.batchId ?? undefined,
    filename: job.filename,
    downloadUrl: link?.url,
    expiresAt: link?.expiresAt.toISOString(),
    /** True once retention removed the file: there is no link to offer any more. */
    artefactExpired: job.artefactExpiredAt ? true : undefined,
    watermarked: job.billing === 'free',
    metadata: job.metadata ?? {},
    errorMessage: job.errorMessage ?? undefined,
    retryOf: job.retryOf ?? undefined,
    createdAt: job.createdAt.toISOString(),
    completedAt: job.completedAt?.toISOString() ?? null,
  };
}

export function presentBatch(batch: DocumentBatchEntity, counts: BatchCounts, documents?: Array<{ jobId: string; status: string; downloadUrl?: string }>) {
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
    createdAt: batch.createdAt.toISOString(),
    completedAt: batch.completedAt?.toISOString() ?? null,
  };
}

/** Columns of the jobs export (CSV header order; JSON uses the same keys). */
/**
 * CSV injection (OWASP): a spreadsheet runs a cell starting with `=`, `+`, `-` or `@` (or a tab or
 * carriage return before one) as a formula. Such a cell gets a leading apostrophe, which spreadsheets
 * show as text and do not evaluate; every other cell is written as it is.
 */
export function csvCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

export const EXPORT_COLUMNS = ['jobId', 'status', 'format', 'templateId', 'templateVersion', 'batchId', 'filename', 'errorMessage', 'metadata', 'createdAt', 'completedAt'] as const;

export function exportRow(row: Record<string, any>): Record<(typeof EXPORT_COLUMNS)[number], unknown> {
  return {
    jobId: row.id,
    status: row.status,
    format: row.format,
    templateId: row.template_id,
    templateVersion: row.template_version,
    batchId: row.batch_id,
    filename: row.filename,
    errorMessage: row.error_message,
    metadata: row.metadata ? JSON.stringify(row.metadata) : '',
    createdAt: new Date(row.created_at).toISOString(),
    completedAt: row.completed_at ? new Date(row.completed_at).toISOString() : null,
  };
}
