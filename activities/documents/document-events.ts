import type { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import type { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { downloadName } from '../../domain/documents/files';
import type { ArtefactStorage } from '../storage/storage';

/** Spec Events: the envelope `data` of document and batch events. */
export async function jobEventData(job: DocumentJobEntity, storage: ArtefactStorage, ttlSeconds: number): Promise<Record<string, unknown>> {
  const data: Record<string, unknown> = {
    jobId: job.id,
    status: job.status,
    templateId: job.templateId,
    format: job.format,
    metadata: job.metadata ?? {},
  };
  if (job.batchId) data.batchId = job.batchId;
  if (job.status === 'completed' && job.artefactKey) {
    const link = await storage.signedUrl(job.artefactKey, { ttlSeconds, filename: downloadName(job.filename, job.id, job.format) });
    Object.assign(data, { downloadUrl: link.url, expiresAt: link.expiresAt.toISOString() });
  } else {
    data.errorMessage = job.errorMessage;
  }
  return data;
}

export function batchEventData(batch: DocumentBatchEntity, counts: { completedJobs: number; failedJobs: number; cancelledJobs: number }) {
  return {
    batchId: batch.id,
    status: batch.status,
    templateId: batch.templateId,
    format: batch.format,
    totalJobs: batch.totalJobs,
    ...counts,
    metadata: batch.metadata ?? {},
    completedAt: batch.completedAt?.toISOString() ?? null,
  };
}
