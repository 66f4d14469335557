import type { BatchCounts } from '../../db/documents/batch-counts';
import type { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import type { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { presentBatch, presentJob, type DownloadLink } from '../../api/documents/documents.presenter';
import { downloadName } from '../../domain/documents/files';
import type { ArtefactStorage } from '../storage/storage';

/** A fresh signed link for a completed job whose file still exists (status reads and events alike). */
export async function jobDownloadLink(storage: ArtefactStorage, ttlSeconds: number, job: DocumentJobEntity): Promise<DownloadLink | undefined> {
  if (job.status !== 'completed' || !job.artefactKey || job.artefactExpiredAt) return undefined;
  return storage.signedUrl(job.artefactKey, { ttlSeconds, filename: downloadName(job.filename, job.id, job.format) });
}

/** Spec Events: `data` of document.generated / document.failed is the job as a status read shows it. */
export async function jobEventData(job: DocumentJobEntity, storage: ArtefactStorage, ttlSeconds: number): Promise<Record<string, unknown>> {
  return presentJob(job, await jobDownloadLink(storage, ttlSeconds, job));
}

/** `data` of batch.completed: the batch as its status read shows it, without the document list. */
export function batchEventData(batch: DocumentBatchEntity, counts: BatchCounts): Record<string, unknown> {
  return presentBatch(batch, counts);
}
