import { In, type DataSource } from 'typeorm';
import { batchCounts } from '../../db/documents/batch-counts';
import { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import { completeBatch } from '../../db/documents/batch-state';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { cancelOpenJob, finishJob, outcomeOf } from '../../db/documents/job-state';
import { renderGaveUp, type JobOutcome } from '../../domain/documents/job-status';
import { AppError, isErrorCode } from '../../domain/errors';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { batchEventData, jobEventData } from '../../domain/documents/document-events';
import { createRenderJobActivities, type RenderJobDeps } from './render-job.activity';
import { sweepStrandedRecords, type OpenRecords, type StrandedWorkPort } from '../maintenance/stranded-records';

export interface EventEnvelope {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface DocumentActivityDeps extends StrandedWorkPort {
  db: DataSource;
  storage: ArtefactStorage;
  downloadUrlTtlSeconds: number;
  /** Creates one delivery per matching subscription; returns their ids (webhooks domain). */
  prepareDeliveries: (projectId: string, event: EventEnvelope) => Promise<string[]>;
  /**
   * Starts each prepared delivery's own workflow (`webhook-delivery-<id>`; one already started is
   * left alone): the events the maintenance sweep announces outside any document workflow.
   */
  startDeliveries: (projectId: string, deliveryIds: string[]) => Promise<void>;
}

/**
 * Open document records without an outbox mark, per kind: what the maintenance backstop checks
 * against Temporal (account deletions are identity's: activities/identity/account-maintenance.activity.ts).
 */
const OPEN_RECORDS: Record<'documentJob' | 'documentMerge' | 'documentBatch', OpenRecords> = {
  documentJob: { table: 'document_jobs', at: 'created_at', project: 'project_id', open: `status IN ('queued', 'processing') AND batch_id IS NULL AND kind = 'render' AND NOT workflow_pending` },
  documentMerge: { table: 'document_jobs', at: 'created_at', project: 'project_id', open: `status IN ('queued', 'processing') AND kind = 'merge' AND NOT workflow_pending` },
  documentBatch: { table: 'document_batches', at: 'created_at', project: 'project_id', open: `status = 'processing' AND NOT workflow_pending` },
};

/** What a job whose workflow closed without finishing it says (it fails, and its document or credit comes back). */
/**
 * How a render's workflow reports a failure: the last error's message, and for a catalogued one
 * (an AppError the activity threw; workflows/documents/process-job.ts `catalogued`) its code and words.
 */
interface FailedRender {
  message: string;
  code?: string;
  detail?: string;
}

/** A catalogued failure keeps its code and words; anything else is what the renderer gave up on (ERR_RENDER_001). */
function failureOf(input: FailedRender): { code: string; message: string } {
  if (input.code && isErrorCode(input.code) && input.code !== 'ERR_RENDER_001') return { code: input.code, message: input.detail ?? new AppError(input.code).message };
  return renderGaveUp(input.message);
}

const WORKFLOW_ENDED = { code: 'ERR_INTERNAL_001', message: "The job's workflow ended without finishing it (terminated, failed or timed out)" };

/** Activities of the main task queue: job bookkeeping, events, batches, maintenance. */
export function createDocumentActivities(deps: DocumentActivityDeps) {
  const jobs = deps.db.getRepository(DocumentJobEntity);
  const batches = deps.db.getRepository(DocumentBatchEntity);
  // Event ids are derived from what happened, so a retried activity re-creates the same event
  // (and the same deliveries) instead of announcing it twice.
  const event = (type: string, subjectId: string, data: Record<string, unknown>): EventEnvelope => ({
    id: `evt_${subjectId}_${type.replace('.', '_')}`,
    type,
    timestamp: new Date().toISOString(),
    data,
  });

  /** A job's end as its event: document.generated or document.failed. */
  const jobEvent = (job: DocumentJobEntity, data: Record<string, unknown>) => event(job.status === 'completed' ? 'document.generated' : 'document.failed', job.id, data);

  /** An ended job's event, its data the job as a status read shows it. */
  const endedJobEvent = async (job: DocumentJobEntity) => jobEvent(job, await jobEventData(job, deps.storage, deps.downloadUrlTtlSeconds));

  /** A completed batch's event, its data the batch and its job counts. */
  const batchCompletedEvent = async (batch: DocumentBatchEntity) =>
    event('batch.completed', batch.id, await batchEventData(batch, await batchCounts(deps.db, batch.id), deps.storage, deps.downloadUrlTtlSeconds));

  /** Prepares an event's deliveries and starts their workflows (events of work whose own workflow is gone). */
  const announce = async (projectId: string, ended: EventEnvelope) => deps.startDeliveries(projectId, await deps.prepareDeliveries(projectId, ended));

  /**
   * Fails the open jobs `which` selects, each giving its document or credit back (finishJob) and
   * marked as owing its document.failed (`event_pending`, in the same statement): announceOwedEvents
   * sends it, as its workflow would have. A job something else ended meanwhile (its workflow after
   * all) is announced by that.
   */
  const failOpenJobs = async (which: { id: string } | { batchId: string }) => {
    for (const job of await jobs.findBy({ ...which, status: In(['queued', 'processing'] as const) })) {
      await finishJob(deps.db, job, { error: WORKFLOW_ENDED }, { eventPending: true });
    }
  };

  /**
   * Announces the events the sweep owes (jobs it failed, then batches it completed), oldest first,
   * clearing each mark once the event's deliveries are recorded and started. A pass that crashed
   * after marking is made up by the next one; repeating an announcement creates nothing twice
   * (delivery ids, and their workflow ids, are derived from the event).
   */
  const announceOwedEvents = async (): Promise<void> => {
    const owedJobs = await jobs.find({ where: { eventPending: true }, order: { completedAt: 'ASC' }, take: 500 });
    for (const job of owedJobs) {
      await announce(job.projectId, await endedJobEvent(job));
      await deps.db.query(`UPDATE document_jobs SET event_pending = false WHERE id = $1`, [job.id]);
    }
    const owedBatches = await batches.find({ where: { eventPending: true }, order: { completedAt: 'ASC' }, take: 500 });
    for (const batch of owedBatches) {
      await announce(batch.projectId, await batchCompletedEvent(batch));
      await deps.db.query(`UPDATE document_batches SET event_pending = false WHERE id = $1`, [batch.id]);
    }
  };

  /** Completes a batch (once): its batch.completed event, or nothing when it was complete already. */
  const completedBatchEvent = async (batchId: string): Promise<{ projectId: string; ended: EventEnvelope } | undefined> => {
    const done = await completeBatch(deps.db, batchId);
    const batch = await batches.findOneBy({ id: batchId });
    if (!batch || !done) return undefined;
    return { projectId: batch.projectId, ended: await batchCompletedEvent(batch) };
  };

  return {
    async markJobFailed(input: FailedRender & { jobId: string }): Promise<JobOutcome> {
      const job = await jobs.findOneBy({ id: input.jobId });
      const error = failureOf(input);
      if (!job) return { jobId: input.jobId, status: 'failed', errorMessage: error.message };
      return finishJob(deps.db, job, { error });
    },

    async markJobCancelled(input: { jobId: string }): Promise<JobOutcome> {
      const job = await jobs.findOneBy({ id: input.jobId });
      if (!job) return { jobId: input.jobId, status: 'cancelled' };
      await cancelOpenJob(deps.db, job);
      return outcomeOf(await jobs.findOneByOrFail({ id: input.jobId }));
    },

    /** markJobFailed for each job of a batch's group whose render gave up (jobs that ended meanwhile stay as they are). */
    async markJobsFailed(input: FailedRender & { jobIds: string[] }): Promise<JobOutcome[]> {
      const outcomes: JobOutcome[] = [];
      for (const job of await jobs.findBy({ id: In(input.jobIds) })) {
        outcomes.push(await finishJob(deps.db, job, { error: failureOf(input) }));
      }
      return outcomes;
    },

    /** markJobCancelled for each job of a batch's group whose render was cancelled. */
    async markJobsCancelled(input: { jobIds: string[] }): Promise<void> {
      for (const job of await jobs.findBy({ id: In(input.jobIds) })) await cancelOpenJob(deps.db, job);
    },

    /** prepareJobEvent for each job of a batch's group, read in one query: every delivery id, in job order. */
    async prepareJobEvents(input: { jobIds: string[] }): Promise<string[]> {
      const byId = new Map((await jobs.findBy({ id: In(input.jobIds) })).map((j) => [j.id, j]));
      const deliveryIds: string[] = [];
      for (const id of input.jobIds) {
        const job = byId.get(id);
        if (!job || (job.status !== 'completed' && job.status !== 'failed')) continue;
        deliveryIds.push(...(await deps.prepareDeliveries(job.projectId, jobEvent(job, await jobEventData(job, deps.storage, deps.downloadUrlTtlSeconds)))));
      }
      return deliveryIds;
    },

    /** document.generated or document.failed for a job that ended (cancelled jobs send nothing). */
    async prepareJobEvent(input: { jobId: string }): Promise<string[]> {
      const job = await jobs.findOneBy({ id: input.jobId });
      if (!job || (job.status !== 'completed' && job.status !== 'failed')) return [];
      return deps.prepareDeliveries(job.projectId, await endedJobEvent(job));
    },

    /**
     * The next chunk of a batch: jobs after `afterIndex` in batch order (keyset, not OFFSET, so jobs
     * deleted while the batch runs never shift the rest past the workflow: with OFFSET, deleting
     * k listed jobs made the next chunk skip k jobs, left queued forever and never refunded).
     */
    async listBatchJobs(input: { batchId: string; afterIndex: number; limit: number }): Promise<Array<{ id: string; batchIndex: number }>> {
      const rows: Array<{ id: string; batch_index: number }> = await deps.db.query(
        `SELECT id, batch_index FROM document_jobs WHERE batch_id = $1 AND batch_index > $2 ORDER BY batch_index LIMIT $3`,
        [input.batchId, input.afterIndex, input.limit],
      );
      return rows.map((r) => ({ id: r.id, batchIndex: r.batch_index }));
    },

    /** Pre-keyset form, kept so workflow histories that scheduled it still replay; new runs use listBatchJobs. */
    async listBatchJobIds(input: { batchId: string; offset: number; limit: number }): Promise<string[]> {
      const rows: Array<{ id: string }> = await deps.db.query(
        `SELECT id FROM document_jobs WHERE batch_id = $1 ORDER BY batch_index LIMIT $2 OFFSET $3`,
        [input.batchId, input.limit, input.offset],
      );
      return rows.map((r) => r.id);
    },

    /** Marks the batch completed (once) and prepares batch.completed. */
    async completeBatch(input: { batchId: string }): Promise<string[]> {
      const completed = await completedBatchEvent(input.batchId);
      return completed ? deps.prepareDeliveries(completed.projectId, completed.ended) : [];
    },

    /** Retention: removes artefacts older than the retention period; their jobs then say so. */
    async expireArtefacts(input: { olderThanSeconds: number; limit: number }): Promise<number> {
      const rows: Array<{ id: string; artefact_key: string }> = await deps.db.query(
        `SELECT id, artefact_key FROM document_jobs
          WHERE artefact_key IS NOT NULL AND artefact_expired_at IS NULL AND completed_at < now() - make_interval(secs => $1)
          ORDER BY completed_at LIMIT $2`,
        [input.olderThanSeconds, input.limit],
      );
      for (const row of rows) {
        await deps.storage.delete(row.artefact_key);
        await deps.db.query(`UPDATE document_jobs SET artefact_expired_at = now() WHERE id = $1`, [row.id]);
      }
      // Batch archives the same way, counted from when each was built (docs/documents.md "Batch archives"): then `expired`.
      const archives: Array<{ id: string; archive_key: string }> = await deps.db.query(
        `SELECT id, archive_key FROM document_batches
          WHERE archive_status = 'ready' AND archive_completed_at < now() - make_interval(secs => $1)
          ORDER BY archive_completed_at LIMIT $2`,
        [input.olderThanSeconds, input.limit - rows.length],
      );
      for (const row of archives) {
        await deps.storage.delete(row.archive_key);
        await deps.db.query(`UPDATE document_batches SET archive_status = 'expired' WHERE id = $1 AND archive_status = 'ready'`, [row.id]);
      }
      return rows.length + archives.length;
    },

    /**
     * Documents' part of the schedule's backstop for accepted work whose workflow is not running
     * (docs/documents.md, "Starting workflows"), one pass:
     *
     * 1. open single jobs, merges and batches without an outbox mark, older than `olderThanSeconds`,
     *    are checked against Temporal a page at a time (../maintenance/stranded-records.ts): one
     *    Temporal does not know (never started, or its history is gone) is started again;
     * 2. of those whose workflow has closed without finishing them (terminated, failed, timed out):
     *    a job fails, gives its free document or credit back (restarting would repeat what stopped
     *    it, or undo an operator's termination) and sends document.failed; a batch's open jobs fail
     *    the same way and the batch completes, sending batch.completed. Failing a job or completing
     *    a batch marks the event it owes in the same statement (`event_pending`);
     * 3. the owed events are announced and their marks cleared, those a crashed pass left included.
     *
     * Returns how many it started or ended.
     */
    async restartStrandedDocuments(input: { olderThanSeconds: number }): Promise<number> {
      let handled = 0;
      for (const [kind, records] of Object.entries(OPEN_RECORDS) as Array<[keyof typeof OPEN_RECORDS, OpenRecords]>) {
        handled += await sweepStrandedRecords(deps.db, deps, kind, records, input.olderThanSeconds, async (record, state) => {
          if (state === 'missing') await deps.startWorkflowOf(record, {});
          else if (record.kind === 'documentJob' || record.kind === 'documentMerge') await failOpenJobs({ id: record.id });
          else {
            await failOpenJobs({ batchId: record.id });
            // Its archive will not be built: the workflow that builds it has ended.
            await deps.db.query(
              `UPDATE document_batches SET archive_status = 'failed', archive_error_code = 'ERR_INTERNAL_001', archive_error = $2 WHERE id = $1 AND archive_status = 'pending'`,
              [record.id, "The batch's workflow ended before its archive was built"],
            );
            await completeBatch(deps.db, record.id, { eventPending: true });
          }
        });
      }
      await announceOwedEvents();
      return handled;
    },
  };
}
export type DocumentActivities = ReturnType<typeof createDocumentActivities>;

export function createRenderActivities(deps: RenderJobDeps) {
  return createRenderJobActivities(deps);
}
export type RenderActivities = ReturnType<typeof createRenderActivities>;
export type { JobOutcome } from '../../domain/documents/job-status';
