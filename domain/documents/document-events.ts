import { archiveDownloadName } from './batch-archive';
import { downloadName } from './files';
import { presentBatch, presentJob, type DownloadLink, type PresentableBatch, type PresentableBatchCounts, type PresentableJob } from './presenter';

/** The storage port's signing method (adapters/storage): all a download link needs. */
interface LinkSigner {
  signedUrl(key: string, options: { ttlSeconds: number; filename?: string }): Promise<DownloadLink>;
}

/** What a download link reads of a job record besides what presentJob reads. */
type LinkableJob = PresentableJob & { artefactKey: string | null };

/** A fresh signed link for a completed job whose file still exists (status reads and events alike). */
export async function jobDownloadLink(storage: LinkSigner, ttlSeconds: number, job: LinkableJob): Promise<DownloadLink | undefined> {
  if (job.status !== 'completed' || !job.artefactKey || job.artefactExpiredAt) return undefined;
  return storage.signedUrl(job.artefactKey, { ttlSeconds, filename: downloadName(job.filename, job.id, job.format, job.artefactKey) });
}

/** Spec Events: `data` of document.generated / document.failed is the job as a status read shows it. */
export async function jobEventData(job: LinkableJob, storage: LinkSigner, ttlSeconds: number): Promise<Record<string, unknown>> {
  return presentJob(job, await jobDownloadLink(storage, ttlSeconds, job));
}

/** What a batch's archive link reads of its record besides what presentBatch reads. */
type LinkableBatch = PresentableBatch & { id: string; archiveKey: string | null };

/** A fresh signed link for a batch's ready archive (`batch-<id>.zip` or `.pdf`), status reads and batch.completed alike. */
export async function batchArchiveLink(storage: LinkSigner, ttlSeconds: number, batch: LinkableBatch): Promise<DownloadLink | undefined> {
  const format = batch.output?.archive;
  if (batch.archiveStatus !== 'ready' || !batch.archiveKey || !format) return undefined;
  return storage.signedUrl(batch.archiveKey, { ttlSeconds, filename: archiveDownloadName(batch.id, format) });
}

/** `data` of batch.completed: the batch as its status read shows it (its archive's link included), without the document list. */
export async function batchEventData(batch: LinkableBatch, counts: PresentableBatchCounts, storage: LinkSigner, ttlSeconds: number): Promise<Record<string, unknown>> {
  return presentBatch({ ...batch, archiveLink: await batchArchiveLink(storage, ttlSeconds, batch) }, counts);
}
