import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { In, type DataSource } from 'typeorm';
import { batchCounts } from '../../db/documents/batch-counts';
import { DocumentBatchEntity } from '../../db/documents/document-batch.entity';
import { completeBatch } from '../../db/documents/batch-state';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import { cancelOpenJob, finishJob, outcomeOf } from '../../db/documents/job-state';
import { deleteExpiredKeys } from '../../db/idempotency/idempotency-keys';
import type { JobOutcome } from '../../domain/documents/job-status';
import type { ArtefactStorage } from '../storage/storage';
import { batchEventData, jobEventData } from '../../domain/documents/document-events';
import { createRenderJobActivities, type RenderJobDeps } from './render-job.activity';

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
  /**
   * Starts every outbox mark older than `olderThanMs` (platform/workflow-outbox.ts `sweep`, what
   * every worker also runs every 30 s); resolves to how many it started.
   */
  sweepOutbox: (olderThanMs: number) => Promise<number>;
  /** Starts an open record's workflow now (the outbox's launcher for that kind: id = the record's id). */
  startWorkflowOf: (record: StrandedRecord, options: { deletionGraceSeconds: number }) => Promise<void>;
  /** Whether the record's workflow runs, has closed, or is unknown to Temporal (never started, or its history is gone). */
  workflowStateOf: (record: StrandedRecord) => Promise<'running' | 'closed' | 'missing'>;
  /**
   * Of records of one kind, the ids whose workflow visibility lists as running: one visibility query
   * for the lot. Visibility lags behind (a just-started run may be missing): what it leaves out is
   * asked again with `workflowStateOf`, never acted on from the list alone.
   */
  runningAmong: (kind: StrandedRecord['kind'], ids: string[]) => Promise<Set<string>>;
  /** Sign-ups whose verification e-mail was never started (accounts from before the outbox). */
  restartVerification: (user: { id: string }) => Promise<void>;
  /**
   * Starts each prepared delivery's own workflow (`webhook-delivery-<id>`; one already started is
   * left alone): the events the maintenance sweep announces outside any document workflow.
   */
  startDeliveries: (projectId: string, deliveryIds: string[]) => Promise<void>;
}

/** An open record the maintenance sweep checks against Temporal. */
export interface StrandedRecord {
  kind: 'documentJob' | 'documentMerge' | 'documentBatch' | 'accountDeletion';
  id: string;
  projectId: string | null;
}

/**
 * Open records without an outbox mark, per kind: their table, when each was accepted, its project,
 * and what "open" means. What the maintenance backstop checks against Temporal.
 */
const OPEN_RECORDS: Record<StrandedRecord['kind'], { table: string; at: string; project: string; open: string }> = {
  documentJob: { table: 'document_jobs', at: 'created_at', project: 'project_id', open: `status IN ('queued', 'processing') AND batch_id IS NULL AND kind = 'render' AND NOT workflow_pending` },
  documentMerge: { table: 'document_jobs', at: 'created_at', project: 'project_id', open: `status IN ('queued', 'processing') AND kind = 'merge' AND NOT workflow_pending` },
  documentBatch: { table: 'document_batches', at: 'created_at', project: 'project_id', open: `status = 'processing' AND NOT workflow_pending` },
  accountDeletion: { table: 'users', at: 'deletion_requested_at', project: 'NULL::uuid', open: `deletion_status = 'pending' AND NOT deletion_workflow_pending` },
};
/** Open records one visibility query checks (its query names each workflow id). */
const STRANDED_PAGE = 200;
/** Pages per kind in one maintenance pass: 10,000 open records; the next pass (every few minutes) goes on from the start. */
const STRANDED_MAX_PAGES = 50;

/** What a job whose workflow closed without finishing it says (it fails, and its document or credit comes back). */
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

  /** Sign-ups of the last day without a verification e-mail (accounts from before the outbox recorded it with the sign-up). */
  const strandedSignups = async (olderThanSeconds: number): Promise<Array<{ id: string }>> =>
    deps.db.query(
      `SELECT u.id FROM users u
        WHERE u.email_verified_at IS NULL AND u.deletion_status IS NULL
          AND u.created_at < now() - make_interval(secs => $1) AND u.created_at > now() - interval '1 day'
          AND NOT EXISTS (SELECT 1 FROM email_tokens t WHERE t.user_id = u.id AND t.purpose = 'verify_email')
          AND NOT EXISTS (SELECT 1 FROM account_email_starts s WHERE s.input->>'userId' = u.id::text AND s.input->>'purpose' = 'verify_email')
        ORDER BY u.created_at LIMIT 500`,
      [olderThanSeconds],
    );

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

    /** markJobFailed for each job of a batch's group whose render gave up (jobs that ended meanwhile stay as they are). */
    async markJobsFailed(input: { jobIds: string[]; message: string }): Promise<JobOutcome[]> {
      const outcomes: JobOutcome[] = [];
      for (const job of await jobs.findBy({ id: In(input.jobIds) })) {
        outcomes.push(await finishJob(deps.db, job, { error: { code: 'ERR_INTERNAL_001', message: input.message } }));
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
     * The schedule's backstop for accepted work whose workflow is not running (docs/documents.md,
     * "Starting workflows"), one pass:
     *
     * 1. outbox marks older than `olderThanSeconds` (a crashed API replica's, if no worker swept yet);
     * 2. open single jobs, batches and account deletions without a mark, older than that, are read
     *    oldest first a page (STRANDED_PAGE) at a time, and each page is checked against Temporal
     *    with one visibility query: those it lists as running are left alone, so stranded records
     *    behind thousands of running ones are reached in the same pass. Each one it does not list is
     *    described (visibility lags): one Temporal does not know (never started, or its history is
     *    gone) is started again, a deletion with what is left of its grace period;
     * 3. of those whose workflow has closed without finishing them (terminated, failed, timed out):
     *    a job fails, gives its free document or credit back (restarting would repeat what stopped
     *    it, or undo an operator's termination) and sends document.failed; a batch's open jobs fail
     *    the same way and the batch completes, sending batch.completed; a deletion is started again
     *    (else the account would stay locked). Failing a job or completing a batch marks the event
     *    it owes in the same statement (`event_pending`);
     * 4. the owed events are announced and their marks cleared, those a crashed pass left included.
     *
     * Returns how many it started or ended.
     */
    async restartStrandedWork(input: { olderThanSeconds: number; deletionGraceSeconds: number }): Promise<number> {
      let handled = await deps.sweepOutbox(input.olderThanSeconds * 1000);
      for (const kind of Object.keys(OPEN_RECORDS) as Array<StrandedRecord['kind']>) {
        const { table, at, project, open } = OPEN_RECORDS[kind];
        // Keyset paging; `at` as text keeps its microseconds (a Date would drop them and read a row twice).
        let after: { at: string; id: string } | null = null;
        for (let page = 0; page < STRANDED_MAX_PAGES; page += 1) {
          const rows: Array<{ id: string; project_id: string | null; at: string }> = await deps.db.query(
            `SELECT id, ${project} AS project_id, ${at}::text AS at FROM ${table}
              WHERE ${open} AND ${at} < now() - make_interval(secs => $1) AND ($2::timestamptz IS NULL OR (${at}, id) > ($2::timestamptz, $3::uuid))
              ORDER BY ${at}, id LIMIT $4`,
            [input.olderThanSeconds, after?.at ?? null, after?.id ?? null, STRANDED_PAGE],
          );
          if (rows.length === 0) break;
          after = { at: rows[rows.length - 1].at, id: rows[rows.length - 1].id };
          const running = await deps.runningAmong(kind, rows.map((r) => r.id));
          for (const row of rows) {
            if (running.has(row.id)) continue;
            const record: StrandedRecord = { kind, id: row.id, projectId: row.project_id };
            const state = await deps.workflowStateOf(record);
            if (state === 'running') continue;
            if (state === 'missing' || record.kind === 'accountDeletion') await deps.startWorkflowOf(record, { deletionGraceSeconds: input.deletionGraceSeconds });
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
            handled += 1;
          }
          if (rows.length < STRANDED_PAGE) break;
        }
      }
      await announceOwedEvents();
      for (const user of await strandedSignups(input.olderThanSeconds)) {
        try {
          await deps.restartVerification(user);
          handled += 1;
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
      }
      return handled;
    },

    /** Idempotency keys past their 24 h (docs/idempotency.md): deletes up to `limit`, returns how many. */
    async deleteExpiredIdempotencyKeys(input: { limit: number }): Promise<number> {
      return deleteExpiredKeys(deps.db, input.limit);
    },
  };
}
export type DocumentActivities = ReturnType<typeof createDocumentActivities>;

export function createRenderActivities(deps: RenderJobDeps) {
  return createRenderJobActivities(deps);
}
export type RenderActivities = ReturnType<typeof createRenderActivities>;
export type { JobOutcome } from '../../domain/documents/job-status';
