import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { batchCounts } from '../../db/documents/batch-counts';
import { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import { completeBatch } from '../../db/documents/batch-state';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { cancelOpenJob, finishJob, outcomeOf } from '../../db/documents/job-state';
import { deleteExpiredKeys } from '../../db/idempotency/idempotency-keys';
import type { JobOutcome } from '../../domain/documents/job-status';
import type { ArtefactStorage } from '../storage/storage';
import { batchEventData, jobEventData } from '../../domain/documents/document-events';
import { createRenderJobActivity, type RenderJobDeps } from './render-job.activity';

export interface EventEnvelope {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface DocumentActivityDeps {
  db: DataSource;
  storage: ArtefactStorage;
  downloadUrlTtlSeconds: number;
  /** Creates one delivery per matching subscription; returns their ids (webhooks domain). */
  prepareDeliveries: (projectId: string, event: EventEnvelope) => Promise<string[]>;
  /** Restarts work whose workflow never started (the API died between insert and start). */
  restartJob: (job: { id: string; projectId: string }) => Promise<void>;
  restartBatch: (batch: { id: string; projectId: string }) => Promise<void>;
  /** Account deletions marked pending whose grace-period workflow never started. */
  restartDeletion: (user: { id: string; remainingSeconds: number }) => Promise<void>;
  /** Sign-ups whose verification e-mail was never started. */
  restartVerification: (user: { id: string }) => Promise<void>;
}

/** Activities of the main task queue: job bookkeeping, events, batches, maintenance. */
export function createDocumentActivities(deps: DocumentActivityDeps) {
  const jobs = deps.db.getRepository(DocumentJobEntity);
  // Event ids are derived from what happened, so a retried activity re-creates the same event
  // (and the same deliveries) instead of announcing it twice.
  const event = (type: string, subjectId: string, data: Record<string, unknown>): EventEnvelope => ({
    id: `evt_${subjectId}_${type.replace('.', '_')}`,
    type,
    timestamp: new Date().toISOString(),
    data,
  });

  return {
    async markJobFailed(input: { jobId: string; message: string }): Promise<JobOutcome> {
      const job = await jobs.findOneBy({ id: input.jobId });
      if (!job) return { jobId: input.jobId, status: 'failed', errorMessage: input.message };
      return finishJob(deps.db, job, { error: { code: 'ERR_INTERNAL_001', message: input.message } });
    },

    async markJobCancelled(input: { jobId: string }): Promise<JobOutcome> {
      const job = await jobs.findOneBy({ id: input.jobId });
      if (!job) return { jobId: input.jobId, status: 'cancelled' };
      await cancelOpenJob(deps.db, job);
      return outcomeOf(await jobs.findOneByOrFail({ id: input.jobId }));
    },

    /** document.generated or document.failed for a job that ended (cancelled jobs send nothing). */
    async prepareJobEvent(input: { jobId: string }): Promise<string[]> {
      const job = await jobs.findOneBy({ id: input.jobId });
      if (!job || (job.status !== 'completed' && job.status !== 'failed')) return [];
      const type = job.status === 'completed' ? 'document.generated' : 'document.failed';
      return deps.prepareDeliveries(job.projectId, event(type, job.id, await jobEventData(job, deps.storage, deps.downloadUrlTtlSeconds)));
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
      const done = await completeBatch(deps.db, input.batchId);
      const batch = await deps.db.getRepository(DocumentBatchEntity).findOneBy({ id: input.batchId });
      if (!batch || !done) return [];
      return deps.prepareDeliveries(batch.projectId, event('batch.completed', batch.id, batchEventData(batch, await batchCounts(deps.db, batch.id))));
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
      return rows.length;
    },

    /**
     * Jobs, batches, account deletions and sign-up e-mails accepted by the API whose workflow never started (the
     * API stopped between writing the record and starting the workflow). A deletion's workflow
     * gets what is left of its grace period. Starting is idempotent: the workflow id is the
     * record's id, so one that is already running is left alone.
     */
    async restartStrandedWork(input: { olderThanSeconds: number; deletionGraceSeconds: number }): Promise<number> {
      const stranded: Array<{ id: string; project_id: string | null; kind: 'job' | 'batch' | 'deletion' | 'verification'; since: string }> = await deps.db.query(
        `SELECT id, project_id, 'job' AS kind, created_at AS since FROM document_jobs
          WHERE status = 'queued' AND batch_id IS NULL AND created_at < now() - make_interval(secs => $1)
         UNION ALL
         SELECT id, project_id, 'batch' AS kind, created_at AS since FROM document_batches
          WHERE status = 'processing' AND created_at < now() - make_interval(secs => $1)
         UNION ALL
         SELECT id, NULL AS project_id, 'deletion' AS kind, deletion_requested_at AS since FROM users
          WHERE deletion_status = 'pending' AND deletion_requested_at < now() - make_interval(secs => $1)
         UNION ALL
         SELECT u.id, NULL AS project_id, 'verification' AS kind, u.created_at AS since FROM users u
          WHERE u.email_verified_at IS NULL AND u.deletion_status IS NULL
            AND u.created_at < now() - make_interval(secs => $1) AND u.created_at > now() - interval '1 day'
            AND NOT EXISTS (SELECT 1 FROM email_tokens t WHERE t.user_id = u.id AND t.purpose = 'verify_email')
         LIMIT 500`,
        [input.olderThanSeconds],
      );
      let started = 0;
      for (const s of stranded) {
        try {
          if (s.kind === 'verification') {
            await deps.restartVerification({ id: s.id });
          } else if (s.kind === 'deletion') {
            const elapsed = Math.floor((Date.now() - new Date(s.since).getTime()) / 1000);
            await deps.restartDeletion({ id: s.id, remainingSeconds: Math.max(0, input.deletionGraceSeconds - elapsed) });
          } else {
            await (s.kind === 'job' ? deps.restartJob : deps.restartBatch)({ id: s.id, projectId: s.project_id! });
          }
          started += 1;
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
      }
      return started;
    },

    /** Idempotency keys past their 24 h (docs/idempotency.md): deletes up to `limit`, returns how many. */
    async deleteExpiredIdempotencyKeys(input: { limit: number }): Promise<number> {
      return deleteExpiredKeys(deps.db, input.limit);
    },
  };
}
export type DocumentActivities = ReturnType<typeof createDocumentActivities>;

export function createRenderActivities(deps: RenderJobDeps) {
  return { renderJob: createRenderJobActivity(deps) };
}
export type RenderActivities = ReturnType<typeof createRenderActivities>;
export type { JobOutcome } from '../../domain/documents/job-status';
